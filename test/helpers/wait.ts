/** A promise with its resolve/reject exposed, for handlers that tell the test they ran. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** What {@link waitFor} waits for (named in its timeout error) and how long, ms. */
export interface WaitOptions {
  what: string;
  /** @defaultValue 10_000 */
  timeoutMs?: number;
  /** @defaultValue 25 */
  intervalMs?: number;
}

/**
 * Polls `predicate` until it returns a truthy value, for Redis state that emits no event; resolves
 * with that value. Call it as `waitFor(pred, { what, timeoutMs })` or `waitFor(pred, what, timeoutMs)`.
 * @throws Error naming `what` (and the last value or error) when `timeoutMs` passes.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  options: WaitOptions | string,
  timeoutMs?: number,
  intervalMs?: number,
): Promise<NonNullable<T>> {
  const o: WaitOptions = typeof options === 'string' ? { what: options, timeoutMs, intervalMs } : options;
  const limitMs = o.timeoutMs ?? 10_000;
  const deadline = Date.now() + limitMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await predicate();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`Timed out after ${limitMs} ms waiting for ${o.what} (last: ${String(last)})`);
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 25));
  }
}

/** Rejects after `ms` with a message naming `what`; races a promise that should settle. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(t)),
    new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new Error(`Timed out after ${ms} ms waiting for ${what}`)), ms);
    }),
  ]);
}

/** A silent logger that records lines, for asserting what was logged. */
export function recordingLogger() {
  const lines: { level: string; message: string }[] = [];
  return {
    lines,
    log: (message: string) => void lines.push({ level: 'log', message }),
    warn: (message: string) => void lines.push({ level: 'warn', message }),
    error: (message: string) => void lines.push({ level: 'error', message }),
    debug: () => {},
  };
}
