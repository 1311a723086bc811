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

/**
 * Polls `predicate` until it returns a truthy value, for Redis state that emits no event.
 * @throws Error naming `what` when `timeoutMs` passes.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await predicate();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`);
    await new Promise((r) => setTimeout(r, intervalMs));
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

/** Resolves at the wall-clock instant `atMs` (epoch ms): scenarios that are about time passing. */
export function until(atMs: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, atMs - Date.now())));
}
