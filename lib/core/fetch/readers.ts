import type { ChronosLogger, FailureLog } from '../runtime/logger.js';
import { closeClient, duplicateConnection, isUnblocked, type RedisClient } from '../redis/connection.js';
import { isNoGroup, type ConsumedQueue, type Consumer, type Fetched } from './consumer.js';
import type { Loops } from '../worker/loops.js';
import { engineTime } from '../runtime/time.js';

/** How much longer than its BLOCK a blocking read may take before its connection is deemed hung, ms. */
export function readDeadlineMs(blockMs: number): number {
  return blockMs + Math.max(2000, blockMs);
}

/** Thrown inside a read whose reply did not come within {@link readDeadlineMs}. */
export class ReadDeadlineError extends Error {
  constructor(readonly ms: number) {
    super(`a blocking read got no reply within ${ms} ms: its connection was rebuilt`);
    this.name = 'ReadDeadlineError';
  }
}

/** A deadline timer that fires this much later than it was due found the event loop stood still (SIGSTOP, GC, CPU starvation), ms. */
const LATE_MS = 500;
/** After such a late fire, how long the read is given to be read from its socket before it is judged hung, ms. */
const GRACE_MS = 1000;
/** Late fires forgiven, at most: a loop that keeps stalling still has its hung reads judged. */
const MAX_GRACES = 5;

/**
 * Runs `read` with a client-side deadline of `ms`: when no reply comes in time (a read that hangs
 * across a reconnect or a failover: the socket is gone but ioredis never learns it), `onHung` runs
 * (it rebuilds the connection) and the read fails with a {@link ReadDeadlineError}.
 *
 * The deadline counts time the event loop ran: a timer that fires late (by more than 500 ms: the
 * process was stopped, or its loop blocked) runs before the socket is read in that turn, though the
 * reply may be there (Redis answers a BLOCK within its time whether or not this process runs), so the
 * read is given another second of running time before it is judged (at most 5 times per read).
 */
export async function withDeadline<T>(read: Promise<T>, ms: number, onHung: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      read,
      new Promise<never>((_, reject) => {
        let graces = 0;
        const arm = (waitMs: number) => {
          const dueAt = performance.now() + waitMs;
          timer = setTimeout(() => {
            if (performance.now() - dueAt > LATE_MS && graces++ < MAX_GRACES) return arm(Math.min(ms, GRACE_MS));
            onHung();
            reject(new ReadDeadlineError(ms));
          }, waitMs);
        };
        arm(ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    read.catch(() => undefined); // the hung read may still reject once its connection closes
  }
}

/** What the per-queue readers need from the fetcher. */
export interface ReadersDeps {
  readonly client: RedisClient;
  readonly consumer: Consumer;
  readonly loops: Loops;
  readonly logger: ChronosLogger;
  readonly failures: FailureLog;
  readonly isRunning: () => boolean;
  /** Takes entries a read returned (into the slot table, or back to the queue when paused or stopping). */
  readonly deliver: (fetched: Fetched[], sentAt: number) => Promise<void>;
  /**
   * A read of `queue` was abandoned (its connection rebuilt after `err`): takes what Redis may have
   * delivered to it from this consumer's pending entries, and logs it (one warning).
   */
  readonly abandoned: (queue: ConsumedQueue, err: ReadDeadlineError) => Promise<void>;
  /** Recreates the consumer groups (after NOGROUP: Redis lost its data). */
  readonly ensureGroups: () => Promise<void>;
}

/**
 * One blocking reader connection per queue, for a worker whose queues live in different cluster
 * slots (`XREADGROUP` over several slots is refused with CROSSSLOT). Used only once a weighted
 * (or strict-priority) non-blocking poll found every queue empty: then each queue blocks on its own
 * connection, and whichever gets an entry first delivers it into the shared slot table; the reads
 * of the other queues stay in flight and deliver when their entries come (extra entries wait in the
 * slot table's buffer with their claims kept fresh, as with a multi-stream read). Each connection
 * is an owned duplicate of the server's client (a `Cluster`: it follows MOVED after a failover or
 * resharding), and every read has a client-side deadline ({@link readDeadlineMs}).
 */
export class QueueReaders {
  private readonly conns = new Map<string, RedisClient>();
  private readonly inflight = new Map<string, Promise<void>>();
  private delivered?: () => void;

  constructor(private readonly deps: ReadersDeps) {}

  /**
   * Starts a blocking read (`COUNT count BLOCK blockMs`) on each queue that has none in flight, and
   * waits until one of them delivered entries, or all of them ended empty (timeout, error, unblock).
   */
  async readAny(queues: readonly ConsumedQueue[], count: number, blockMs: number): Promise<void> {
    this.keep(queues, count, blockMs);
    const waits = queues.map((q) => this.inflight.get(q.name)!);
    await Promise.race([Promise.all(waits), new Promise<void>((resolve) => (this.delivered = resolve))]);
    this.delivered = undefined;
  }

  /**
   * Starts a blocking read (`COUNT count BLOCK blockMs`) on each queue that has none in flight, without
   * waiting: whichever gets entries delivers them (how a busy worker learns that an empty queue has
   * entries again, with no poll per queue).
   */
  keep(queues: readonly ConsumedQueue[], count: number, blockMs: number): void {
    for (const q of queues) if (!this.inflight.has(q.name)) this.start(q, count, blockMs);
  }

  /** Ends every read in flight at once: their connections are closed (and reopened by the next read). */
  unblock(): void {
    for (const name of this.inflight.keys()) this.drop(name);
  }

  /** Closes every reader connection. */
  async close(): Promise<void> {
    const conns = [...this.conns.values()];
    this.conns.clear();
    await Promise.all(conns.map((c) => closeClient(c)));
  }

  private start(q: ConsumedQueue, count: number, blockMs: number): void {
    const run = this.readOne(q, count, blockMs).finally(() => this.inflight.delete(q.name));
    this.inflight.set(q.name, run);
  }

  private async readOne(q: ConsumedQueue, count: number, blockMs: number): Promise<void> {
    const { consumer, failures } = this.deps;
    const conn = this.conn(q.name);
    const sentAt = engineTime.now();
    try {
      const read = consumer.read(conn, [q], count, blockMs);
      const fetched = await withDeadline(read, readDeadlineMs(blockMs), () => this.drop(q.name, conn));
      failures.ok();
      if (fetched.length === 0) return;
      await this.deps.deliver(fetched, sentAt);
      this.delivered?.();
    } catch (err) {
      if (!this.deps.isRunning()) return; // stopping
      if (err instanceof ReadDeadlineError) {
        // its connection was dropped by the deadline (so this check comes before the one below)
        await this.deps.abandoned(q, err).catch((e: unknown) => failures.failed(e));
        return;
      }
      if (this.conns.get(q.name) !== conn) return; // unblocked
      if (isUnblocked(err)) return; // Redis ended the read: its slot moved or its node turned replica; the next read goes to the new master
      if (isNoGroup(err)) {
        this.deps.logger.warn(`Consumer group missing (Redis lost its data?): recreating it (queue=${q.name})`);
        await this.deps.ensureGroups().catch((e: unknown) => failures.failed(e));
        return;
      }
      failures.failed(err);
      await this.deps.loops.sleep(failures.backoffMs);
    }
  }

  private conn(name: string): RedisClient {
    let c = this.conns.get(name);
    if (!c) {
      c = duplicateConnection(this.deps.client);
      this.conns.set(name, c);
    }
    return c;
  }

  /** Closes a queue's reader connection (its read in flight fails at once); the next read opens a new one. */
  private drop(name: string, only?: RedisClient): void {
    const c = this.conns.get(name);
    if (!c || (only && c !== only)) return;
    this.conns.delete(name);
    c.disconnect();
  }
}
