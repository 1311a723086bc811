/**
 * Client-side deadlines for the calls of the lease and firing paths. A socket that goes silent
 * (packets dropped, nothing closed) leaves a call unanswered for as long as the partition lasts;
 * the lease holder must not wait on it past the moment its lease runs out by its own clock.
 */

/** A call on the lease or firing path got no reply before its deadline (it may still run in Redis later). */
export class CallDeadlineError extends Error {
  constructor(
    /** What was called, e.g. `lease renewal`. */
    readonly what: string,
    /** The deadline it missed, in words: `within 1750 ms`, `before the lease ran out`. */
    readonly deadline: string,
  ) {
    super(`${what} got no reply ${deadline}`);
    this.name = 'CallDeadlineError';
  }
}

/**
 * Settles like `call`, or rejects with a {@link CallDeadlineError} when `ms` (≥ 1) pass first.
 * The call itself is not cancelled: a reply that comes later is dropped (its rejection too);
 * `late`, when given, receives such a late reply (e.g. to hand back a lease renewed too late).
 */
export async function within<T>(call: Promise<T>, ms: number, what: string, late?: (value: T) => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  call.then(
    (v) => {
      if (timedOut) late?.(v);
    },
    () => undefined,
  );
  try {
    return await Promise.race([
      call,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => {
            timedOut = true;
            reject(new CallDeadlineError(what, `within ${Math.round(ms)} ms`));
          },
          Math.max(1, ms),
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Deadlines that end with a lease rather than at a fixed instant: a call made while leading is
 * abandoned (rejects with a {@link CallDeadlineError}) the moment the lease is lost — the lease's
 * own timer decides when — however long renewals keep it alive meanwhile.
 */
export class LeaseBound {
  private readonly aborts = new Set<() => void>();
  private open = false;

  /** The lease was acquired: calls may be made. */
  begin(): void {
    this.open = true;
  }

  /**
   * Settles like `call`, or rejects when {@link end} comes first (at once when the lease is not held).
   * A call refused or abandoned is not cancelled: its outcome is dropped, its failure too.
   */
  call<T>(call: Promise<T>, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const abort = () => reject(new CallDeadlineError(what, 'before the lease ran out'));
      if (!this.open) {
        // sent already: when its connection is being closed (a stop after the resignation) it fails with
        // "Connection is closed.", which nothing else would handle (an unhandled rejection)
        call.catch(() => undefined);
        return abort();
      }
      this.aborts.add(abort);
      call.then(resolve, reject).finally(() => this.aborts.delete(abort));
    });
  }

  /** The lease is lost: every call in flight is abandoned. */
  end(): void {
    this.open = false;
    const all = [...this.aborts];
    this.aborts.clear();
    for (const abort of all) abort();
  }
}
