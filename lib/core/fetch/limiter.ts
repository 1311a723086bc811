import type { EventBus } from '../runtime/events.js';
import type { Signals } from '../runtime/signals.js';
import type { ChronosLogger } from '../runtime/logger.js';
import { randomBytes } from 'node:crypto';
import { engineTime } from '../runtime/time.js';
import { fetchLimitedScript, type LimitedFetch } from '../redis/commands/limits.js';
import { closeClient, duplicateConnection, type RedisClient } from '../redis/connection.js';
import type { GlobalKeys } from '../redis/keys.js';
import { type ConsumedQueue, type Consumer, type Fetched } from './consumer.js';
import type { Loops } from '../worker/loops.js';
import { SlotWaits, type BlockOn } from './slot-waits.js';
import { QueuePicker } from './picker.js';

/** What the limiter needs from the server. */
export interface LimiterDeps {
  readonly client: RedisClient;
  readonly globalKeys: GlobalKeys;
  readonly queues: readonly ConsumedQueue[];
  /** Serve the queues in their order (strict priority), not by weight. */
  readonly strictPriority: boolean;
  readonly consumer: Consumer;
  readonly loops: Loops;
  readonly logger: ChronosLogger;
  /** Where `queue.limited` events go (the time a fetch waited because a limit held a queue back). */
  readonly events?: EventBus;
  /** Where the `held` test signal goes (a fetch held back by a limit is about to wait). */
  readonly signals?: Signals;
  /** Writes the acks batched so far and waits for them (a freed slot is announced only once its release is in Redis). */
  readonly flushAcks: () => Promise<void>;
  /** Writes the acks batched so far on `via` without waiting for them (what is sent next on `via` runs after them). */
  readonly writeAcksOn: (via: RedisClient) => void;
  /** Ends the fetcher's blocking read at once (CLIENT UNBLOCK). */
  readonly unblock: () => Promise<void>;
}

/**
 * The fetch of a worker whose queues include one with fleet-wide limits or groups (queue/limits.ts).
 * Knows which queues are limited (or grouped) (the notices on `<ns>:limits`, and the namespace's
 * `limited` set, read at start, when a subscriber reconnects and every `DEFAULTS.pausedPollMs`). While
 * none of the server's queues is limited, the fetcher never calls it: the hot path is the plain
 * blocking `XREADGROUP`.
 *
 * A fetch that includes a limited queue runs fetch-limited.lua per queue (the limit is decided
 * there); when nothing was handed out it waits, without polling, for whichever comes first: an
 * entry in a queue that is not held back (a blocking `XREAD` from the group's last-delivered id,
 * which claims nothing; and on the queue's group signal, which gets an entry when a group enters the
 * round), a notice that a slot of a held-back queue or group freed (published by the worker that
 * released it, once the release is written), the instant a rate limit allows the next start (or a
 * held-back group is looked at again), or `blockTimeout` (the safety net for a notice lost with a
 * connection). On a cluster the streams are waited on by one `XREAD` per slot, each on a connection
 * of its own ({@link SlotWaits}). The time a held-back fetch waited is emitted as `queue.limited`.
 */
export class Limiter {
  private limited = new Set<string>();
  private sub?: RedisClient;
  private closed = false;
  /** Queues held back by their concurrency limit at the last fetch: a notice for one of them wakes the wait. */
  private readonly heldBack = new Set<string>();
  /**
   * Queues held back by their `rate` limit at the last fetch: a notice for one of them (its limits
   * changed: a raised or cleared rate) wakes the wait, which would otherwise last until the rate
   * allowed the next start or `blockTimeout` (trial 28: a rate cleared while a task waited an hour's
   * window started it only at the worker's blockTimeout). A notice of a freed slot of such a queue
   * wakes it too: one more fetch, held back again while the window is full.
   */
  private readonly rateHeld = new Set<string>();
  private wakeWait?: () => void;
  /** Queues whose freed slots are to be announced at the end of this event-loop turn. */
  private readonly toAnnounce = new Set<string>();
  /**
   * The last wait's blocking reads, when it ended by its timeout with nothing waiting, no queue held
   * back and nothing woken since: the next fetch of the same queues blocks again without running
   * the script (an idle limited queue costs one blocking read per `blockTimeout`, as an idle queue does).
   */
  private idle?: { open: readonly ConsumedQueue[]; blockOn: BlockOn[] };
  /** Queues whose last fetch here told that a fetch was held back by concurrency lately (a worker may wait for a slot). */
  private readonly waitedOn = new Set<string>();
  /**
   * Per queue, the token of a fetch that failed (its reply may have been lost after Redis handed tasks
   * out): the next fetch of the queue repeats it, and so gets those tasks, which would otherwise hold
   * the limit's slots, pending for this live consumer, until the visibility timeout.
   */
  private readonly unanswered = new Map<string, string>();
  /** On a cluster, the blocking reads of a wait whose streams span several slots (opened at the first such wait). */
  private slotWaits?: SlotWaits;

  /** Splits a fetch's free slots by weight (no strict priority); it is told nothing, so every open queue gets its share. */
  private readonly picker?: QueuePicker<ConsumedQueue>;

  constructor(private readonly deps: LimiterDeps) {
    if (!deps.strictPriority) this.picker = new QueuePicker(deps.queues, false);
  }

  /** True when one of `open` has limits (the fetch goes through {@link read}). */
  any(open: readonly ConsumedQueue[]): boolean {
    if (this.limited.size === 0) return false;
    for (const q of open) if (this.limited.has(q.name)) return true;
    return false;
  }

  /** Subscribes to the limit notices (and reads the set again each time that subscriber reconnects) and reads which queues are limited. */
  async open(): Promise<void> {
    if (this.sub) return; // once: the fetcher's open() runs again when it rebuilds a hung blocking connection
    const channel = this.deps.globalKeys.limitsChannel;
    this.sub = duplicateConnection(this.deps.client, { subscriber: true });
    this.sub.on('message', (ch: string, queue: string) => {
      if (ch !== channel || !this.deps.queues.some((q) => q.name === queue)) return;
      // a change or a freed slot: the next fetch reads the stored limits (a cleared one reads as none)
      const known = this.limited.has(queue);
      this.limited.add(queue);
      if (!known) void this.deps.unblock(); // newly limited: end the plain blocking read
      if (!known || this.heldBack.has(queue) || this.rateHeld.has(queue)) this.wake();
    });
    // ioredis subscribes again after a reconnect; a notice published while away is lost: read the set again then
    let subscribed = false;
    this.sub.on('ready', () => void (subscribed && this.refresh().catch(() => {}))); // the fallback read retries
    await this.sub.subscribe(channel);
    subscribed = true;
    await this.refresh();
  }

  /** Closes the subscriber connection and ends a wait. */
  async close(): Promise<void> {
    this.closed = true;
    this.wake();
    this.slotWaits?.close(); // at once: its connections are disconnected, not sent QUIT
    if (this.sub) await closeClient(this.sub);
  }

  /**
   * Takes the namespace's `limited` set (`members`, read with the paused queues by the fetcher, or read
   * here when not given: at the open and when the limits subscriber reconnects).
   */
  async refresh(members?: string[]): Promise<void> {
    const before = this.limited;
    this.limited = new Set(members ?? (await this.deps.client.smembers(this.deps.globalKeys.limited)));
    if (this.deps.queues.some((q) => this.limited.has(q.name) && !before.has(q.name))) await this.deps.unblock(); // a newly limited queue: stop the plain read
  }

  /**
   * A task of `queue` ended here (its outcome written or batched). When a fetch of the queue was held
   * back by its concurrency limit lately (here or, as the last fetch here learned, on another
   * worker), the freed slot is announced once the release is in Redis (one notice per queue per
   * event-loop turn; this server's own wait is woken without one). While the limit does not bind,
   * nothing is sent.
   */
  released(queue: string): void {
    if (!this.heldBack.has(queue) && !this.waitedOn.has(queue)) return;
    if (this.toAnnounce.size === 0) setImmediate(() => void this.announce());
    this.toAnnounce.add(queue);
  }

  /** Announces that slots of `queues` were freed outside a task's end (reclaimed from a dead worker), when they have limits. */
  freed(queues: readonly string[]): void {
    const limited = queues.filter((q) => this.limited.has(q));
    if (limited.length === 0) return;
    if (this.toAnnounce.size === 0) setImmediate(() => void this.announce());
    for (const q of limited) this.toAnnounce.add(q);
  }

  /**
   * Announces at once (awaited, not batched) that slots of `queues` were freed by this server's
   * shutdown, which put its tasks back: workers held back by those queues' limits start them now,
   * not at their blockTimeout (trial 28). Queues without limits are skipped; a failure is logged.
   */
  async announceGivenBack(queues: Iterable<string>): Promise<void> {
    try {
      for (const q of queues) if (this.limited.has(q)) await this.deps.client.publish(this.deps.globalKeys.limitsChannel, q);
    } catch (err) {
      this.deps.logger.warn(
        `Could not announce the limit slots freed at shutdown; waiting workers re-check within their block timeout (error=${String(err)})`,
      );
    }
  }

  private async announce(): Promise<void> {
    const queues = [...this.toAnnounce];
    this.toAnnounce.clear();
    if (this.closed) return; // stopped: the server's shutdown writes its acks; waiting workers re-check within their blockTimeout
    try {
      // this server's own wait first: its fetch goes out on the client after the acks written there
      if (queues.some((q) => this.heldBack.has(q))) this.wake();
      await this.deps.flushAcks();
      for (const q of queues) await this.deps.client.publish(this.deps.globalKeys.limitsChannel, q);
    } catch (err) {
      this.deps.logger.warn(
        `Could not announce freed limit slots; waiting workers re-check within their block timeout (error=${String(err)})`,
      );
    }
  }

  /**
   * Without strict priority and with several queues, the share of `count` of each of `open` by weight
   * (smooth weighted round-robin, its credits kept across fetches: {@link QueuePicker}); undefined
   * otherwise (the queues are fetched in their order, each taking what is left).
   */
  private shares(open: readonly ConsumedQueue[], count: number): Map<ConsumedQueue, number> | undefined {
    if (!this.picker || open.length < 2) return undefined;
    const shares = new Map<ConsumedQueue, number>();
    for (const read of this.picker.plan(open, count)) for (const q of read.queues) shares.set(q, read.count);
    return shares;
  }

  /**
   * Ends a wait at once, as a CLIENT UNBLOCK ends the one on a single Redis's blocking connection: on
   * a cluster the wait's per-slot reads ({@link SlotWaits}) stay in flight for the next wait, and the
   * next fetch runs (a resumed queue, a changed pause). Fetcher.unblock calls it where it has no
   * blocking connection to unblock.
   */
  interrupt(): void {
    this.wake();
  }

  private wake(): void {
    this.idle = undefined;
    const w = this.wakeWait;
    this.wakeWait = undefined;
    w?.();
  }

  /**
   * One fetch of at most `count` entries over `open` (some limited): fetch-limited.lua per queue, for
   * its share of `count` by weight (with strict priority, or one queue: in order, each what is left),
   * then what is left to the queues that may have more, in order; when nothing came, waits as the
   * class says and returns [] (`blocking`: the fetcher's blocking connection on a single Redis,
   * undefined on a cluster; see {@link wait}).
   */
  async read(open: readonly ConsumedQueue[], count: number, blocking: RedisClient | undefined, blockMs: number): Promise<Fetched[]> {
    const idle = this.idle;
    this.idle = undefined;
    if (idle && idle.open.length === open.length && idle.open.every((q, i) => q === open[i])) {
      if ((await this.wait(idle.blockOn, Infinity, blocking, blockMs)) === 'timeout') this.idle = idle;
      return [];
    }
    const { client, consumer } = this.deps;
    this.deps.writeAcksOn(client); // batched acks go first, on the same connection: their slots are free for this fetch
    const got: Fetched[] = [];
    const blockOn: BlockOn[] = [];
    let rateWaitMs = Infinity;
    let again = false;
    let idleQueues = 0;
    /** The queues a limit held back in this fetch, and by which (for `queue.limited`). */
    const held: [string, 'concurrency' | 'rate' | 'group'][] = [];
    this.heldBack.clear();
    this.rateHeld.clear();
    const results = new Map<ConsumedQueue, LimitedFetch>();
    const fetchOne = async (q: ConsumedQueue, n: number): Promise<void> => {
      // a token per fetch: ioredis sends a command whose reply was lost with its connection again on the new one,
      // and a fetch that failed is repeated with its token; either way the tasks handed out come back, no more
      const token = this.unanswered.get(q.name) ?? randomBytes(9).toString('base64url');
      this.unanswered.set(q.name, token);
      const r = await fetchLimitedScript(client, q.keys, consumer.name, n, 2 * blockMs, token);
      this.unanswered.delete(q.name);
      results.set(q, r);
      for (const [entryId, fields] of r.entries) got.push({ queue: q, entryId, fields });
    };
    const shares = this.shares(open, count);
    if (shares) {
      // weighted: each queue its share of the free slots, as the plain fetch splits them (trial 28: in queue order,
      // a grouped queue of weight 1 listed first took every slot from one of weight 6); what a queue could not
      // use (held back by its limits, fewer waiting) goes to the queues that may have more, in order
      for (const [q, n] of shares) await fetchOne(q, n);
      for (const q of open) {
        if (got.length >= count) break;
        const r = results.get(q);
        if (r && r.state !== 'again' && r.entries.length < (shares.get(q) ?? 0)) continue; // it gave what it could
        await fetchOne(q, count - got.length);
      }
    } else {
      for (const q of open) {
        if (got.length >= count) break;
        await fetchOne(q, count - got.length);
      }
    }
    for (const [q, r] of results) {
      if (r.waited) this.waitedOn.add(q.name);
      else this.waitedOn.delete(q.name);
      if (r.state === 'concurrency') {
        this.heldBack.add(q.name);
        held.push([q.name, 'concurrency']);
      } else if (r.state === 'rate') {
        this.rateHeld.add(q.name);
        rateWaitMs = Math.min(rateWaitMs, r.waitMs);
        held.push([q.name, 'rate']);
      } else if (r.state === 'again') again = true;
      else if (r.state === 'groups') {
        // only held-back groups wait: a freed slot (a notice), the next re-check, or a new entry or group ends the wait
        this.heldBack.add(q.name);
        if (r.waitMs > 0) rateWaitMs = Math.min(rateWaitMs, r.waitMs);
        held.push([q.name, 'group']);
      }
      if (r.entries.length === 0 && r.lastId !== '') {
        blockOn.push({ key: q.keys.stream, lastId: r.lastId });
        if (r.signalId !== '') blockOn.push({ key: q.keys.groupSignal, lastId: r.signalId });
        if (r.state === 'open') idleQueues++;
      }
    }
    if (got.length > 0 || again) return got;
    const signals = this.deps.signals;
    if (signals?.active) for (const [queue, limit] of held) signals.emit('held', { queue, limit });
    const waitFrom = engineTime.now();
    const ended = await this.wait(blockOn, rateWaitMs, blocking, blockMs);
    const events = this.deps.events;
    if (held.length > 0 && events?.active) {
      const ms = engineTime.now() - waitFrom;
      for (const [queue, limit] of held) events.emit({ type: 'queue.limited', queue, limit, ms });
    }
    if (ended === 'timeout' && this.heldBack.size === 0 && rateWaitMs === Infinity && idleQueues === open.length)
      this.idle = { open, blockOn };
    return [];
  }

  /**
   * Waits as the class says. `blocking` is the fetcher's blocking connection on a single Redis (a
   * wake ends its read with CLIENT UNBLOCK); undefined on a cluster, where the reads go to
   * {@link SlotWaits} (a wake leaves them in flight: no command ends a read on a node it cannot name).
   */
  private async wait(
    blockOn: BlockOn[],
    rateWaitMs: number,
    blocking: RedisClient | undefined,
    blockMs: number,
  ): Promise<'timeout' | 'other'> {
    let woke = false;
    const woken = new Promise<void>((resolve) => (this.wakeWait = resolve)).then(() => void (woke = true));
    // no timer for a rate wait that outlasts the block: the wait ends at blockMs anyway, and a window over
    // Node's longest timer (2^31-1 ms) would fire after 1 ms, a busy loop (trial 14: a 30-day rate)
    const timer = rateWaitMs < blockMs ? setTimeout(() => this.wake(), Math.max(1, Math.ceil(rateWaitMs))) : undefined;
    // a sleep of the loops (a stop ends it), ended with the wait: one left to run out stayed a timer and a
    // sleeper of the loops for blockTimeout, one per wait a wake or an entry ended
    let sleep: ReturnType<Loops['sleeper']> | undefined;
    try {
      if (blocking && blockOn.length > 0) {
        // XREAD claims nothing: it only tells that an entry is waiting past the group's last-delivered id
        const args: (string | number)[] = [
          'COUNT',
          1,
          'BLOCK',
          Math.min(blockMs, rateWaitMs < Infinity ? Math.ceil(rateWaitMs) + 1 : blockMs),
          'STREAMS',
        ];
        for (const b of blockOn) args.push(b.key);
        for (const b of blockOn) args.push(b.lastId);
        const read = blocking.call('XREAD', ...args);
        await Promise.race([read, woken.then(() => this.deps.unblock())]);
        const reply = await read.catch(() => undefined);
        return reply === null && !woke ? 'timeout' : 'other';
      }
      if (blockOn.length === 0) {
        sleep = this.deps.loops.sleeper(blockMs);
        await Promise.race([woken, sleep.done]);
        return 'other';
      }
      // on a cluster: one XREAD per slot, each on a connection of its own (before, streams in several
      // slots slept blockTimeout, so a new task in any queue of a worker with a limited queue waited up
      // to blockTimeout; and a wait in one slot, on the fetcher's cluster connection, was ended with
      // CLIENT UNBLOCK <id>, an id of whichever master CLIENT ID went to, sent to whichever master: the
      // read went on, and a held-back group's task started at its re-check, 5 s later)
      const bound = Math.min(blockMs, rateWaitMs < Infinity ? Math.ceil(rateWaitMs) + 1 : blockMs);
      this.slotWaits ??= new SlotWaits(this.deps.client);
      sleep = this.deps.loops.sleeper(blockMs + 1000);
      const ended = await Promise.race([
        this.slotWaits.wait(blockOn, bound),
        woken.then(() => 'other' as const),
        sleep.done.then(() => 'other' as const), // a stop wakes it
      ]);
      return ended === 'timeout' && !woke ? 'timeout' : 'other';
    } finally {
      clearTimeout(timer);
      sleep?.wake();
      this.wakeWait = undefined;
    }
  }
}
