import type { ChronosLogger } from '../runtime/logger.js';
import { ackScript } from '../redis/commands/queue.js';
import type { QueueKeys } from '../redis/keys.js';
import type { RedisClient } from '../redis/types.js';
import type { TaskCounters } from './heartbeat.js';

interface Pending {
  keys: QueueKeys;
  plain: string[];
  /** Task ids of `plain`, same order (for messages; not sent). */
  plainTasks: string[];
  /** entry id, task id, keys to release */
  flagged: [string, string, readonly string[]][];
  /** Failed writes of this batch so far. */
  attempts: number;
}

/** Backoff of a failed ack, ms: 100 ms doubling up to 2 s (ioredis itself waits while it reconnects). */
const RETRY_MS = (attempt: number) => Math.min(100 * 2 ** (attempt - 1), 2000);

/**
 * Batches the acks of succeeded tasks: everything acked in one event-loop turn goes to Redis as
 * one `ack.lua` call per queue (XACK + XDEL + INCRBY of the day's counter), so the per-task cost
 * at high concurrency is a fraction of a command.
 *
 * An ack that cannot be written (Redis unreachable) is kept and written again with backoff until
 * Redis answers; ack.lua acks only entries the group still has pending, and an entry this worker
 * fetched is pending for nobody else until a recoverer takes it (it then leaves the group's list),
 * so a late ack never acks a copy that runs elsewhere. A task runs twice only when the outage
 * outlasts the visibility timeout and a recoverer reclaims it first (at-least-once).
 */
export class AckBatcher {
  private batch = new Map<string, Pending>();
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Batches whose write failed, waiting for their next attempt. */
  private failedBatches: Pending[] = [];
  private retryTimer?: NodeJS.Timeout;
  /** Set by {@link stop}: a write failing after it is logged, not retried (nothing would stop the retries). */
  private stopped = false;

  private readonly client: RedisClient;
  private readonly logger: ChronosLogger;
  private readonly counterTtlMs: number;
  /** The server's counters: this batcher counts the processed tasks (those whose ack was written). */
  private readonly counters: TaskCounters;

  constructor(o: { client: RedisClient; logger: ChronosLogger; counterTtlMs: number; counters: TaskCounters }) {
    this.client = o.client;
    this.logger = o.logger;
    this.counterTtlMs = o.counterTtlMs;
    this.counters = o.counters;
  }

  add(keys: QueueKeys, entryId: string, taskId: string, release: readonly string[]): void {
    let p = this.batch.get(keys.stream);
    if (!p) {
      p = { keys, plain: [], plainTasks: [], flagged: [], attempts: 0 };
      this.batch.set(keys.stream, p);
    }
    if (release.length === 0) {
      p.plain.push(entryId);
      p.plainTasks.push(taskId);
    } else p.flagged.push([entryId, taskId, release]);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.endOfTurn);
    }
  }

  /**
   * The end of the event-loop turn in which acks were added: writes them (and any waiting for a
   * retry, as {@link flush} does), unless the next read took them already ({@link writeOn}, the usual
   * case under load: then nothing waits, and no flush is made to wait for the writes under way). One
   * bound function, not a closure per turn.
   */
  private readonly endOfTurn = (): void => {
    this.scheduled = false;
    if (this.batch.size > 0 || this.failedBatches.length > 0) void this.flush();
  };

  /**
   * Writes the acks batched so far on `via`, the connection the next fetch read is about to be
   * sent on, so both go out in one socket write (see `Consumer.read`) and Redis runs the acks
   * first. A failed write is retried as any other (on the server's client). Acks added later go
   * out as usual, at the end of their event-loop turn.
   */
  writeOn(via: RedisClient): void {
    if (this.batch.size === 0) return;
    const batches = [...this.batch.values()];
    this.batch = new Map();
    for (const p of batches) {
      const write = this.write(p, via).finally(() => this.inFlight.delete(write));
      this.inFlight.add(write);
    }
  }

  /** Acks waiting for Redis after a failed write. */
  get retrying(): number {
    return this.failedBatches.reduce((n, p) => n + p.plain.length + p.flagged.length, 0);
  }

  /** Writes what is batched (and what waits for a retry) and waits for every write under way. */
  async flush(): Promise<void> {
    this.scheduled = false;
    const batches = [...this.batch.values(), ...this.failedBatches.splice(0)];
    this.batch = new Map();
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    for (const p of batches) {
      const write = this.write(p).finally(() => this.inFlight.delete(write));
      this.inFlight.add(write);
    }
    await Promise.all([...this.inFlight]);
  }

  /** Stops retrying (the server is stopped): acks still failing are logged; their tasks run again after the visibility timeout. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    for (const p of this.failedBatches.splice(0)) this.leftUnacked(p);
  }

  /** Logs a batch whose acks are given up at the stop: its tasks stay pending and run again after the visibility timeout. */
  private leftUnacked(p: Pending, err?: unknown): void {
    const why = err === undefined ? '' : ` error=${(err as Error)?.message ?? String(err)}`;
    this.logger.error(
      `Could not ack ${p.plain.length + p.flagged.length} finished task(s) before stopping; they stay pending and run again ` +
        `after the visibility timeout (queue=${p.keys.queue} ids=${taskIds(p).join(',')}${why})`,
    );
  }

  private async write(p: Pending, via: RedisClient = this.client): Promise<void> {
    const sent = p.plain.length + p.flagged.length;
    try {
      const batch = { plain: p.plain, flagged: p.flagged, counterTtlMs: this.counterTtlMs };
      const { acked, reclaimed, gone } = await ackScript(via, p.keys, batch);
      this.counters.processed += acked;
      if (p.attempts > 0) {
        this.logger.log(`Acked ${acked} finished task(s) once Redis answered (queue=${p.keys.queue} attempts=${p.attempts + 1})`);
      }
      // the entry → task id map is for the messages: built only when there is one to write
      const name = reclaimed.length > 0 || gone.length > 0 ? names(p) : undefined;
      if (reclaimed.length > 0) {
        this.logger.warn(
          `${reclaimed.length} task(s) finished after they were reclaimed by another consumer (idle past the visibility ` +
            `timeout); they run again there (queue=${p.keys.queue} ids=${reclaimed.map(name!).join(',')})`,
        );
      }
      if (gone.length > 0) {
        // what is known: Redis had the entries no longer pending and not reclaimed; the causes are listed, none is claimed
        const causes = 'their entries were deleted (XDEL, a trim, reported lost) or Redis lost its data (restarted empty, FLUSHDB)';
        const when = p.attempts > 0 ? `when the ack got through (attempt ${p.attempts + 1}) ` : '';
        const orEarlier = p.attempts > 0 ? ', or an earlier attempt was applied and only its reply was lost' : '';
        this.logger.warn(
          `${gone.length} task(s) finished, but ${when}their entries were gone (no longer pending in Redis): nothing to ack ` +
            `(${causes}${orEarlier}) (queue=${p.keys.queue} ids=${gone.map(name!).join(',')})`,
        );
      }
    } catch (err) {
      p.attempts++;
      if (this.stopped) return this.leftUnacked(p, err);
      if (p.attempts === 1) {
        this.logger.warn(
          `Could not ack ${sent} finished task(s); retrying with backoff while this worker still holds them (queue=${p.keys.queue} ` +
            `ids=${taskIds(p).join(',')} error=${(err as Error)?.message ?? String(err)})`,
        );
      }
      this.failedBatches.push(p);
      this.retryTimer ??= setTimeout(() => {
        this.retryTimer = undefined;
        void this.flush();
      }, RETRY_MS(p.attempts));
    }
  }
}

function taskIds(p: Pending): string[] {
  return [...p.plainTasks, ...p.flagged.map((f) => f[1])];
}

/** Entry id → `taskId(entry)` for messages. */
function names(p: Pending): (entryId: string) => string {
  const byEntry = new Map<string, string>();
  p.plain.forEach((e, i) => byEntry.set(e, p.plainTasks[i]));
  for (const [e, t] of p.flagged) byEntry.set(e, t);
  return (e) => `${byEntry.get(e) ?? '?'}(entry ${e})`;
}
