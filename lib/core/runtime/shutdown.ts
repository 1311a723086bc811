/**
 * The bound of a stop's Redis work when Redis does not answer. A SIGSTOPped or partitioned Redis
 * keeps its sockets open and answers nothing: an ioredis command then waits for as long as that
 * lasts (its retries count reconnects, and nothing reconnects). So a stop never awaits Redis call by
 * call: a role's whole stop (the worker's drain, the scheduler's resignation) is raced once against
 * its bound ({@link settlesWithin}); past it the role stops without the rest, which is left to the
 * TTLs and the visibility timeout, and closes its connections, all at once, which ends whatever was
 * still waiting on them.
 */

/** How long a stop's Redis work (putting tasks back, acks, deregistering, resigning) may take beyond the handlers' grace, ms. */
export const SHUTDOWN_REDIS_GRACE_MS = 5_000;

/** Whether `work` settles (either way) within `ms` (the timer is cleared once it does). A rejection of `work` is handled here. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = work.then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Abort reason of handlers still running when the shutdown grace ends. */
export class ShutdownAbort extends Error {
  constructor() {
    super('the server is shutting down; the task was put back in the queue');
    this.name = 'ShutdownAbort';
  }
}
