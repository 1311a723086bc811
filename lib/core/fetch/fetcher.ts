import { FailureLog } from '../runtime/logger.js';
import { corked, execReads, isCluster } from '../redis/cluster.js';
import { closeClient, duplicateConnection, explainFailure, isUnblocked, type RedisClient } from '../redis/connection.js';
import { writePause } from '../redis/commands/pause.js';
import { isNoGroup, type ConsumedQueue, type Fetched } from './consumer.js';
import { errorMessage } from '../worker/executor.js';
import { QueuePicker, blockCount, type PlannedRead } from './picker.js';
import { QueueReaders, ReadDeadlineError, readDeadlineMs, withDeadline } from './readers.js';
import { engineTime } from '../runtime/time.js';
import { loopStalls } from '../runtime/loop-stalls.js';
import { Limiter } from './limiter.js';
import { SeenEntries } from './seen-entries.js';
import { acceptAll, bySlot, observe, stillOwned, type FetcherDeps } from './fetcher-steps.js';

/**
 * The fetch loop of a worker server: blocking `XREADGROUP` on its own connection, as many entries
 * as there are free slots, from the queues a {@link QueuePicker} plans (strict priority, or shares
 * by smooth weighted round-robin) with paused queues left out. Owns the blocking connection (ended at once by
 * `CLIENT UNBLOCK`) and this server's view of the paused queues (`<ns>:paused`).
 *
 * On Redis Cluster the non-blocking reads are sent on the server's client (routed per slot) and the
 * blocking phase goes to {@link QueueReaders}, one blocking connection per queue, ended by closing it:
 * queues in different slots cannot share one `XREADGROUP`, and `CLIENT UNBLOCK <id>` cannot end a read
 * on a cluster client (a client id is one node's, and a keyless command goes to any node: after the
 * queue's slot moved, a worker's shutdown waited out the whole block; cluster-reshard.spec.ts). Every blocking read has a client-side deadline
 * ({@link readDeadlineMs}); a read that outlives it has its connection rebuilt.
 */
export class Fetcher {
  /** Failures of the fetch loop (reported by the server's `health()`). */
  readonly failures: FailureLog;
  /** When a fetch read last answered (epoch ms, local clock); undefined before the first. */
  lastFetchAt?: number;
  private blocking?: RedisClient;
  /** Set by {@link close}: a hung read is then not given a new connection. */
  private closed = false;

  /** Whether the blocking connection is connected and ready (ioredis status `ready`); true on a cluster's per-queue readers. */
  get blockingReady(): boolean {
    return this.readers !== undefined || this.blocking?.status === 'ready';
  }
  private blockingId?: number;
  /** Whether this fetcher counts in the process's event-loop stall watch (from open to close). */
  private watchingStalls = false;
  private pausedSet = new Set<string>();
  /** Which queues a fetch reads, and how much of each. */
  private readonly picker: QueuePicker<ConsumedQueue>;
  /** Per-queue blocking readers, on a cluster. */
  private readonly readers?: QueueReaders;
  /** The fetch of queues with fleet-wide limits (fetch/limiter.ts); unused while none of ours has one. */
  private readonly limiter: Limiter;
  /** The greatest entry id handed to this fetcher per queue: what an abandoned read's entries are told by. */
  private readonly seen = new SeenEntries();
  /** A blocking read abandoned whose entries are still to be taken back (the last try failed): the next fetch tries again. */
  private abandonedRead?: { queues: readonly ConsumedQueue[]; err: ReadDeadlineError };

  constructor(private readonly deps: FetcherDeps) {
    this.failures = new FailureLog(deps.runtime.logger, 'Fetching tasks', (err) => explainFailure(deps.client, err));
    const { client, globalKeys, queues, consumer, loops, flushAcks, writeAcksOn } = deps;
    const logger = deps.runtime.logger;
    const events = deps.runtime.events;
    this.limiter = new Limiter({
      client,
      globalKeys,
      queues,
      strictPriority: deps.opts.strictPriority,
      consumer,
      loops,
      logger,
      events,
      signals: deps.runtime.signals,
      flushAcks,
      writeAcksOn,
      unblock: () => this.unblock(),
    });
    const perQueueReaders = isCluster(deps.client);
    this.picker = new QueuePicker(deps.queues, deps.opts.strictPriority, !perQueueReaders);
    if (perQueueReaders) {
      const { client, consumer, loops, isRunning } = deps;
      const logger = deps.runtime.logger;
      const ensureGroups = () => consumer.ensureGroups(deps.queues);
      const deliver = (f: Fetched[], sentAt: number) => {
        for (const q of new Set(f.map((x) => x.queue))) this.picker.observe(q, 1, 1); // it has entries (maybe more)
        return this.deliver(f, sentAt);
      };
      const abandoned = async (q: ConsumedQueue, err: ReadDeadlineError) => {
        const got = await this.takeUnseen([q], err);
        if (got.length > 0) await deliver(got, engineTime.now());
      };
      this.readers = new QueueReaders({
        client,
        consumer,
        loops,
        logger,
        isRunning,
        failures: this.failures,
        deliver,
        abandoned,
        ensureGroups,
      });
    }
  }

  /** Queues this server currently knows as paused. */
  get paused(): ReadonlySet<string> {
    return this.pausedSet;
  }

  /**
   * Opens the blocking connection (a duplicate of the server's client) and learns its client id; on a
   * cluster none: the per-queue readers and the limiter's per-slot waits open their own, and a client
   * id names a client of one node only.
   */
  async open(): Promise<void> {
    if (!this.watchingStalls) loopStalls.acquire();
    this.watchingStalls = true;
    if (!this.readers) {
      this.blocking = duplicateConnection(this.deps.client);
      this.blocking.on('ready', () => void this.refreshBlockingId());
      await this.refreshBlockingId();
    }
    await this.limiter.open();
  }

  /** A task of `queue` ended here: a freed slot of its fleet-wide limit is announced (fetch/limiter.ts). */
  released(queue: string): void {
    this.limiter.released(queue);
  }

  /** Names of the queues this fetcher reads. */
  queueNames(): string[] {
    return this.deps.queues.map((q) => q.name);
  }

  /** Slots of the limits of `queues` were freed by a reclaim (a dead worker's tasks): announced to waiting workers. */
  freed(queues: readonly string[]): void {
    this.limiter.freed(queues);
  }

  /** Slots of the limits of `queues` were freed by this server's shutdown (its tasks put back): announced now, awaited. */
  announceGivenBack(queues: Iterable<string>): Promise<void> {
    return this.limiter.announceGivenBack(queues);
  }

  /** Closes the blocking connection, the readers' and the limiter's, if open: all at once (each QUIT waits ≤ 1 s for a Redis that does not answer). */
  async close(): Promise<void> {
    this.closed = true; // a read that hangs now is not given a new connection (rebuild)
    if (this.watchingStalls) loopStalls.release();
    this.watchingStalls = false;
    await Promise.all([this.readers?.close(), this.limiter.close(), this.blocking && closeClient(this.blocking)]);
  }

  /** Pauses a queue for every server of the namespace (adds it to `<ns>:paused`), and ends a blocking read at once. */
  async pause(queue: string): Promise<void> {
    await writePause(this.deps.client, this.deps.globalKeys, queue, true);
    const newly = !this.pausedSet.has(queue);
    this.pausedSet.add(queue);
    await this.unblock();
    if (newly) await this.giveBackUnstarted([queue]);
  }

  /** Resumes a paused queue on every server (removes it from `<ns>:paused`), and ends a blocking read on the other queues at once (the next read includes it). */
  async resume(queue: string): Promise<void> {
    await writePause(this.deps.client, this.deps.globalKeys, queue, false);
    this.pausedSet.delete(queue);
    this.deps.wake.wake();
    await this.unblock();
  }

  /** Reads `<ns>:paused`: wakes the loop when a queue was resumed, ends a blocking read when one of ours was paused. */
  async refreshPaused(): Promise<void> {
    const before = this.pausedSet;
    const { paused, limited } = this.deps.globalKeys;
    // one round trip (one slot): the paused queues and the queues with limits; a read refused while the
    // global slot migrates (one key left, the other not) is sent again (execReads: it failed, logged as an error)
    const [p, l] = await execReads(this.deps.client, (pipe) => pipe.smembers(paused).smembers(limited));
    if (p?.[0] || l?.[0]) throw p?.[0] ?? l?.[0];
    this.pausedSet = new Set(p[1] as string[]);
    if ([...before].some((q) => !this.pausedSet.has(q))) {
      this.deps.wake.wake();
      await this.unblock(); // a read blocked on the other queues would not see the resumed one until its timeout
    }
    // a read blocked on a queue that was just paused must not deliver from it
    const newly = this.deps.queues.filter((q) => this.pausedSet.has(q.name) && !before.has(q.name)).map((q) => q.name);
    if (newly.length > 0) {
      await this.unblock();
      await this.giveBackUnstarted(newly);
    }
    await this.limiter.refresh(l[1] as string[]);
  }

  /** Puts the tasks of queues just paused that this server fetched but has not started back in their queues: none starts while paused. */
  private async giveBackUnstarted(queues: string[]): Promise<void> {
    const back = this.deps.slots.takeUnstartedOf(new Set(queues));
    if (back.length > 0) await this.deps.recoverer.giveBack(back.map((w) => ({ queue: w.queue, entryId: w.task.entryId, task: w.task })));
  }

  /** The loop; ends when the server stops running. */
  async run(): Promise<void> {
    const { slots, opts } = this.deps;
    const failures = this.failures;
    while (this.deps.isRunning()) {
      if (slots.freeSlots <= 0) {
        await this.deps.wake.wait();
        continue;
      }
      const order = this.fetchOrder();
      if (order.length === 0) {
        // every queue paused: until a resume rings the wake (resume, refreshPaused), at most blockTimeout
        // (a plain sleep here did not hear the resume: the tasks waited out the blockTimeout, trial 14)
        const sleep = this.deps.loops.sleeper(opts.blockTimeout);
        await Promise.race([sleep.done, this.deps.wake.wait()]);
        sleep.wake();
        continue;
      }
      try {
        const sentAt = engineTime.now();
        const fetched = await this.read(order, slots.freeSlots);
        this.lastFetchAt = engineTime.now();
        failures.ok();
        await this.deliver(fetched, sentAt);
      } catch (caught) {
        let err = caught;
        if (!this.deps.isRunning()) break;
        if (isUnblocked(err)) continue; // the stream's slot moved or its node turned replica: read again, on the new master
        if (isNoGroup(err)) {
          this.deps.runtime.logger.warn(`Consumer group missing (Redis lost its data?): recreating it (error=${errorMessage(err)})`);
          try {
            await this.deps.consumer.ensureGroups(this.deps.queues);
            continue;
          } catch (e) {
            err = e;
          }
        }
        failures.failed(err);
        await this.deps.loops.sleep(failures.backoffMs);
      }
    }
  }

  /** Takes the entries of one read into the slot table (or back to the queue: paused, or stopping). */
  private async deliver(got: Fetched[], sentAt: number): Promise<void> {
    if (got.length === 0) return;
    let fetched = this.seen.note(got);
    if (fetched.length === 0) return;
    // a reply far later than a blocking read can take means this process was paused while the
    // entries waited in its socket: the recoverer may have given them to someone else already
    // (a blocking read may rightly take blockTimeout, so the loop's own stalls tell it, whatever blockTimeout is)
    const { blockTimeout, visibilityTimeout } = this.deps.opts;
    if (engineTime.now() - sentAt > blockTimeout + visibilityTimeout / 3 || loopStalls.stalledAfter(sentAt, visibilityTimeout / 3))
      fetched = await stillOwned(this.deps, fetched);
    const running = this.deps.isRunning(); // a per-queue reader may deliver during a shutdown
    const { slots } = this.deps;
    let givenBack = 0;
    if (running && this.pausedSet.size === 0)
      acceptAll(slots, fetched); // the usual case: every entry is ours to run
    else {
      const back = fetched.filter((f) => !running || this.pausedSet.has(f.queue.name));
      givenBack = back.length;
      if (givenBack > 0) await this.deps.recoverer.giveBack(back); // paused while the read was blocked
      for (const f of fetched) if (running && !this.pausedSet.has(f.queue.name)) slots.accept(f);
    }
    const { signals } = this.deps.runtime;
    if (signals.active) signals.emit('fetched', { count: fetched.length - givenBack });
  }

  /**
   * Ends a blocking read at once (CLIENT UNBLOCK: the read returns empty, nothing is lost). The
   * per-queue readers of a cluster have their connections closed instead (an entry delivered to
   * a closed read stays in this consumer's PEL until it is given back or recovered); a cluster has
   * no blocking connection, so no CLIENT UNBLOCK is sent to a node that may hold another client of that
   * id: the limiter's wait there is ended by a wake ({@link Limiter.interrupt}).
   */
  async unblock(): Promise<void> {
    if (this.readers) {
      // a cluster: the per-queue readers' connections are closed; the limiter's wait (per-slot reads on
      // connections of its own) is ended by a wake
      this.readers.unblock();
      this.limiter.interrupt();
    }
    if (this.blockingId === undefined) return;
    try {
      await this.deps.client.call('CLIENT', 'UNBLOCK', this.blockingId);
    } catch {
      /* not blocked or Redis gone */
    }
  }

  /** The queues to read from: the server's, in its order (priority order with strict priority), paused ones left out. */
  private fetchOrder(): readonly ConsumedQueue[] {
    // nothing paused (the usual case): the server's own list, not a copy per fetch
    return this.pausedSet.size === 0 ? this.deps.queues : this.deps.queues.filter((q) => !this.pausedSet.has(q.name));
  }

  /**
   * One fetch of `count` entries. With one queue, a blocking read. With several, the reads the
   * {@link QueuePicker} plans (the shares of the queues that have entries, by weight or priority, and
   * probes of the empty ones); when it finds every queue empty, a blocking read on all of them with
   * {@link blockCount} per stream (a blocking read may return more than `count`; the extra entries wait
   * in the slot table's buffer, their claims kept fresh).
   */
  private async read(open: readonly ConsumedQueue[], count: number): Promise<Fetched[]> {
    if (this.abandonedRead) return this.takeUnseen(this.abandonedRead.queues, this.abandonedRead.err);
    if (this.limiter.any(open)) return this.limiter.read(open, count, this.blocking, this.deps.opts.blockTimeout);
    const client = this.readers ? this.deps.client : this.blocking!;
    if (open.length > 1) {
      const reads = this.picker.plan(open, count);
      if (reads.length > 0) return this.deps.opts.strictPriority ? this.readInTurn(client, reads) : this.readAll(client, reads);
    }
    const block = this.deps.opts.blockTimeout;
    const perStream = blockCount(open.length, count);
    if (this.readers) {
      await this.readers.readAny(open, perStream, block); // the readers deliver what they get themselves
      return [];
    }
    const blocking = this.blocking!;
    const read = this.deps.consumer.read(blocking, open, perStream, block);
    let got: Fetched[];
    try {
      got = await withDeadline(read, readDeadlineMs(block), () => this.rebuild(blocking));
    } catch (err) {
      if (!(err instanceof ReadDeadlineError) || !this.deps.isRunning()) throw err;
      return this.takeUnseen(open, err);
    }
    if (open.length > 1) observe(this.picker, open, perStream, got);
    return got;
  }

  /** A blocking read of `queues` was abandoned (see {@link SeenEntries.takeUnseen}): what it may have been delivered, logged as one warning. */
  private async takeUnseen(queues: readonly ConsumedQueue[], err: ReadDeadlineError): Promise<Fetched[]> {
    this.abandonedRead = { queues, err };
    const unseen = await this.seen.takeUnseen(this.deps.consumer, this.deps.slots, queues);
    this.abandonedRead = undefined;
    const names = queues.map((q) => q.name).join(',');
    this.deps.runtime.logger.warn(
      `The blocking read got no reply within ${err.ms} ms: its connection was rebuilt; took ${unseen.length} task(s) Redis had delivered to it from this consumer's pending entries (queues=${names})`,
    );
    return unseen;
  }

  /**
   * Weighted: every planned read at once (one per distinct COUNT, per slot on a cluster). On a cluster
   * the empty queues are not probed by a read per slot: each gets a blocking reader kept in flight,
   * which delivers when entries come.
   */
  private async readAll(client: RedisClient, planned: PlannedRead[]): Promise<Fetched[]> {
    const readers = this.readers;
    let reads = planned;
    if (readers) {
      for (const r of planned) if (r.probe) readers.keep(r.queues, 1, this.deps.opts.blockTimeout);
      reads = planned.filter((r) => !r.probe);
    }
    // corked: each master gets its acks (written with the first read) and its read in one socket write
    const sent = corked(client, () => reads.flatMap((r) => bySlot(this.readers, r.queues).map((qs) => this.readSome(client, qs, r.count))));
    const parts = await Promise.all(sent);
    return parts.length === 1 ? parts[0] : parts.flat();
  }

  /** Strict priority: the planned reads in order, until one returns entries. */
  private async readInTurn(client: RedisClient, reads: PlannedRead[]): Promise<Fetched[]> {
    for (const r of reads) {
      for (const qs of bySlot(this.readers, r.queues)) {
        const got = await this.readSome(client, qs, r.count);
        if (got.length > 0) return got;
        if (!this.deps.isRunning()) return [];
      }
    }
    return [];
  }

  /** A non-blocking read of `queues` (one slot), `COUNT count`; tells the picker what each queue returned. */
  private async readSome(client: RedisClient, queues: ConsumedQueue[], count: number): Promise<Fetched[]> {
    const got = await this.deps.consumer.read(client, queues, count);
    observe(this.picker, queues, count, got);
    return got;
  }

  /** Replaces a hung blocking connection with a fresh one. */
  private rebuild(hung: RedisClient): void {
    if (this.blocking !== hung) return;
    hung.disconnect();
    if (this.closed) return; // closing: a new connection would outlive the server
    void this.open().catch(() => undefined);
  }

  private async refreshBlockingId(): Promise<void> {
    try {
      this.blockingId = (await this.blocking!.call('CLIENT', 'ID')) as number;
    } catch {
      this.blockingId = undefined;
    }
  }
}
