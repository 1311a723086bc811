import type { RedisTime } from '../runtime/time.js';
import { FailureLog, type ChronosLogger } from '../runtime/logger.js';
import { explainFailure, type RedisClient } from '../redis/connection.js';
import { forwardScript, type ForwardOutcome } from '../redis/commands/queue.js';
import { claimDue, lowerDue, settleDue } from '../redis/commands/due.js';
import { isCluster } from '../redis/cluster.js';
import type { ConsumedQueue } from './consumer.js';
import type { Loops } from '../worker/loops.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Signals } from '../runtime/signals.js';

/** Most tasks forward.lua moves per set per call. */
const FORWARD_LIMIT = 1000;
/** Most queues one claim-due.lua call claims. */
const CLAIM_LIMIT = 100;
/** Most queues a round forwards beside its claim, in the same write (see {@link Forwarder} "due by the hints"). */
const EARLY_LIMIT = 16;
/**
 * Every queue is swept (forward.lua whatever the index says) once per this period, a few queues per
 * round, and all of them at start: finds delayed tasks the index does not know (written by a version
 * without it, an index write that failed, a claim whose forwarder died), ms.
 */
export const SWEEP_PERIOD_MS = 5 * 60_000;

/** What a {@link Forwarder} is built with. */
export interface ForwarderOptions {
  readonly client: RedisClient;
  /** The queues it forwards. */
  readonly queues: readonly ConsumedQueue[];
  /** The namespace's due-time index (`<ns>:{<ns>:global}:due`). */
  readonly dueKey: string;
  /** Longest sleep between rounds, ms. */
  readonly forwardIntervalMs: number;
  /** The sleeps of the server's loops (woken at once by a shutdown). */
  readonly loops: Loops;
  /** True while the server runs: the loop ends otherwise. */
  readonly isRunning: () => boolean;
  /** Its claim round trips are sampled into `runtime.time`; it announces `forwarded` on `runtime.signals`. */
  readonly runtime: Runtime;
  /** How long the rolling sweep takes to visit every queue once, ms (default {@link SWEEP_PERIOD_MS}). */
  readonly sweepPeriodMs?: number;
}

/**
 * The forward loop of a worker server: moves due delayed and retry tasks of its queues into their
 * streams (forward.lua, at most 1000 per queue per call), driven by the namespace's due-time index
 * (`<ns>:{<ns>:global}:due`, queue → earliest due time): each round is one claim-due.lua call that
 * claims the served queues whose time has come, forward.lua on those only, and one settle-due.lua
 * that puts them back at their next due time. So an idle round costs the same whatever the number of
 * queues. The loop then sleeps until the next due time (one Node timer to that instant, by Redis
 * time) or at most `forwardIntervalMs` (a fallback poll). An enqueue or retry that lowers a queue's
 * score publishes the new due time (lower-due.lua, channel keys.ts GlobalKeys.dueWake); the server's
 * subscriber hands it to {@link Forwarder.dueAt}, which re-arms the timer to it: a delayed task
 * enqueued by another process starts at its due time, not at the next poll.
 * A rolling sweep runs forward.lua on every queue once per `sweepPeriodMs` (default {@link SWEEP_PERIOD_MS}; and on all of
 * them at start). Each claim round trip is also a sample of Redis time for the server's
 * {@link RedisTime} (the estimate it holds trigger tasks by, filtered by round trip).
 *
 * Due by the hints: the forwarder remembers, per queue, the earliest due time it heard of (a wake, its
 * own retries, the next due time its last claimed forward of the queue found: so of several servers of
 * a queue, only the one that claimed it forwards it early next time; a wake reaches them all). The queues whose remembered time has come are forwarded in
 * the same socket write as the round's claim (forward.lua sent just after claim-due.lua on the one
 * connection, so Redis runs it after the claim): a woken queue's due task reaches its stream one round
 * trip after the wake, not two; the claim and the settle keep the index as before (a hinted queue
 * the claim did not take is only forwarded, not settled). Not on a Cluster (the index and the queue
 * live on different nodes: no order between the two), nor before a round's claim has run on the
 * current connection (a claim-due.lua not loaded there would be sent again, after the forward).
 */
export class Forwarder {
  /** Failures of the forward loop (reported by the server's `health()`). */
  readonly failures: FailureLog;
  /** When the loop wakes next (epoch ms, Redis time), and how to wake it sooner. */
  private wakeUp?: { at: number; wake: () => void };
  private readonly byName: Map<string, ConsumedQueue>;
  private readonly names: string[];
  /**
   * The earliest due time (epoch ms, Redis time) heard of ({@link dueAt}, {@link forwardBy}) since the
   * current round sent its claim: the loop sleeps no later than this. Infinity when none.
   */
  private heardAt = Infinity;
  /** Start of the rolling sweep (epoch ms) and how many queues it has swept since. */
  private sweepFrom = 0;
  private swept = 0;
  /** Queue → the earliest due time (epoch ms, Redis time) heard of or seen by its last forward (see the class doc). */
  private readonly hints = new Map<string, number>();
  /** Whether the claim and forward scripts ran on the client's current connection (rounds may send them in one write). */
  private scriptsReady = false;
  private readonly canFold: boolean;

  private readonly client: RedisClient;
  private readonly queues: readonly ConsumedQueue[];
  private readonly dueKey: string;
  private readonly forwardIntervalMs: number;
  private readonly loops: Loops;
  private readonly isRunning: () => boolean;
  private readonly logger: ChronosLogger;
  private readonly time: RedisTime;
  private readonly signals: Signals;
  private readonly sweepPeriodMs: number;

  constructor(o: ForwarderOptions) {
    this.client = o.client;
    const queues = (this.queues = o.queues);
    this.dueKey = o.dueKey;
    this.forwardIntervalMs = o.forwardIntervalMs;
    this.loops = o.loops;
    this.isRunning = o.isRunning;
    const logger = (this.logger = o.runtime.logger);
    this.time = o.runtime.time;
    this.signals = o.runtime.signals;
    this.sweepPeriodMs = o.sweepPeriodMs ?? SWEEP_PERIOD_MS;
    this.failures = new FailureLog(logger, 'Forwarding due tasks', (err) => explainFailure(this.client, err));
    this.byName = new Map(queues.map((q) => [q.name, q]));
    this.names = queues.map((q) => q.name);
    this.canFold = !isCluster(o.client);
    // a new connection (Redis restarted, failed over) may have lost the scripts: the next round runs them one by one
    if (this.canFold) o.client.on('ready', this.onReady);
  }

  private readonly onReady = () => {
    this.scriptsReady = false;
  };

  /** Stops listening to the client's reconnects (the client may be the app's and outlive the server). */
  close(): void {
    this.client.off('ready', this.onReady);
  }

  /** The loop; ends when the server stops running. */
  async run(): Promise<void> {
    const failures = this.failures;
    let startSwept = false;
    while (this.isRunning()) {
      // the instant (Redis time, epoch ms) to run the next round at: the earliest due time found, at
      // the latest one poll interval after the round's claim (so the round's own duration is not slept again)
      let at: number;
      try {
        if (!startSwept) {
          at = await this.sweep(this.queues);
          startSwept = true;
          this.sweepFrom = this.time.now();
        } else at = Infinity;
        at = Math.min(at, await this.round());
        at = Math.min(at, await this.sweep(this.sweepSlice()));
        failures.ok();
      } catch (err) {
        failures.failed(err);
        at = this.time.now() + failures.backoffMs;
      }
      // a due time published while the round ran (after its claim read the index) is not in `at`
      at = Math.min(at, this.heardAt);
      const wait = at - this.time.now();
      if (wait > 0) {
        const { done, wake } = this.loops.sleeper(wait);
        this.wakeUp = { at, wake };
        await done;
        this.wakeUp = undefined;
      }
    }
  }

  /**
   * A task of `queue` was scheduled `delayMs` from now (at `dueAt`, Redis time, epoch ms): lowers the
   * queue's score in the due-time index, and makes sure the loop is awake by then.
   */
  forwardBy(delayMs: number, queue?: { readonly name: string }, dueAt?: number): void {
    if (queue && dueAt !== undefined) {
      this.hint(queue.name, dueAt);
      lowerDue(this.client, this.dueKey, queue.name, dueAt).catch((err: unknown) => {
        this.logger.warn(`Could not index a retry's due time; the sweep finds it (queue=${queue.name} error=${String(err)})`);
      });
    }
    this.wakeBy(this.time.now() + delayMs);
  }

  /**
   * A task of `queue` is due at `dueAt` (epoch ms, Redis time): another process lowered the queue's
   * score in the due-time index (a wake published by lower-due.lua). For a queue this server serves,
   * makes sure the loop is awake by then (re-arms its one timer when `dueAt` is earlier); others are ignored.
   */
  dueAt(queue: string, dueAt: number): void {
    if (!this.byName.has(queue)) return;
    this.hint(queue, dueAt);
    this.wakeBy(dueAt);
  }

  /** Remembers that `queue` has a task due at `at` (epoch ms, Redis time), when that is its earliest. */
  private hint(queue: string, at: number): void {
    if (!this.canFold) return;
    const was = this.hints.get(queue);
    if (was === undefined || at < was) this.hints.set(queue, at);
  }

  /** The queues whose hinted due time has come (at most {@link EARLY_LIMIT}; their hints are taken). */
  private hintedDue(): ConsumedQueue[] {
    if (!this.canFold || !this.scriptsReady || this.hints.size === 0) return [];
    const now = this.time.now();
    const out: ConsumedQueue[] = [];
    for (const [name, at] of this.hints) {
      if (at > now) continue;
      this.hints.delete(name); // a due hint is spent either way: beyond the limit the claim covers it
      if (out.length < EARLY_LIMIT) out.push(this.byName.get(name)!);
    }
    return out;
  }

  /** Runs a round now (e.g. the wake subscription reconnected: wakes published meanwhile were lost). */
  wake(): void {
    this.wakeBy(-Infinity);
  }

  /** Makes sure the loop runs a round at `at` (epoch ms, Redis time) or sooner. */
  private wakeBy(at: number): void {
    this.heardAt = Math.min(this.heardAt, at);
    const w = this.wakeUp;
    if (!w || w.at <= at) return;
    w.at = at;
    const delay = Math.max(0, at - this.time.now());
    if (delay === 0) w.wake();
    else setTimeout(w.wake, delay).unref();
  }

  /** One index round: claim the due queues, forward them, settle them. @returns when to run the next round (Redis time, epoch ms). */
  private async round(): Promise<number> {
    const sent = this.time.localNow();
    this.heardAt = Infinity; // the claim reads every due time written before it
    const early = this.hintedDue();
    const claimed = claimDue(this.client, this.dueKey, CLAIM_LIMIT, this.names);
    // sent after the claim on the same connection, so Redis runs them after it (see the class doc)
    const earlyDone = Promise.allSettled(early.map((q) => forwardScript(this.client, q.keys, FORWARD_LIMIT)));
    const claim = await claimed.catch(async (err: unknown) => {
      await earlyDone;
      throw err;
    });
    this.time.sample(sent, claim.redisNow, this.time.localNow());
    this.scriptsReady = true; // claim-due.lua is loaded on this connection: a later claim runs before the forwards sent after it
    let at = claim.claimed.length >= CLAIM_LIMIT ? claim.redisNow : claim.redisNow + this.forwardIntervalMs;
    if (claim.nextDueAt !== undefined) at = Math.min(at, claim.nextDueAt);
    const earlyNames = new Set(early.map((q) => q.name));
    const queues = claim.claimed.filter((name) => !earlyNames.has(name)).map((name) => this.byName.get(name)!);
    const [earlyOut, outcomes] = await Promise.all([
      earlyDone,
      Promise.allSettled(queues.map((q) => forwardScript(this.client, q.keys, FORWARD_LIMIT))),
    ]);
    const claimedNames = new Set(claim.claimed);
    const next = new Map<string, number | undefined>();
    let failed: unknown;
    const moved: ForwardOutcome[] = [];
    const take = (q: ConsumedQueue, o: PromiseSettledResult<ForwardOutcome>) => {
      // a queue whose forward failed is due again at once (the next round retries it)
      if (o.status === 'rejected') failed ??= o.reason;
      else moved.push(o.value);
      const due = o.status === 'rejected' ? claim.redisNow : nextAt(o.value);
      if (due !== undefined) at = Math.min(at, due);
      if (!claimedNames.has(q.name)) return;
      next.set(q.name, due);
      // only the claimer hints its next due time: the other servers of the queue claim nothing then, so they forward nothing
      if (due !== undefined) this.hint(q.name, due);
    };
    early.forEach((q, i) => take(q, earlyOut[i]));
    queues.forEach((q, i) => take(q, outcomes[i]));
    await settleDue(this.client, this.dueKey, claim.mark, next);
    if (this.signals.active) this.announce(moved);
    if (failed !== undefined) throw failed;
    return at;
  }

  /** The queues the rolling sweep is due to visit now (in order, wrapping). */
  private sweepSlice(): ConsumedQueue[] {
    const n = this.queues.length;
    const target = Math.floor(((this.time.now() - this.sweepFrom) * n) / this.sweepPeriodMs);
    const out: ConsumedQueue[] = [];
    while (this.swept < target && out.length < n) out.push(this.queues[this.swept++ % n]);
    this.swept = Math.max(this.swept, target);
    return out;
  }

  /** forward.lua on `queues` whatever the index says, then lowers their index scores to their next due times. @returns the earliest of those (Redis time, epoch ms), Infinity when none. */
  private async sweep(queues: readonly ConsumedQueue[]): Promise<number> {
    if (queues.length === 0) return Infinity;
    const outcomes = await Promise.all(queues.map((q) => forwardScript(this.client, q.keys, FORWARD_LIMIT)));
    let earliest = Infinity;
    const lows: (string | number)[] = [];
    outcomes.forEach((o, i) => {
      const at = nextAt(o);
      if (at === undefined) return;
      lows.push(at, queues[i].name);
      earliest = Math.min(earliest, at);
    });
    if (lows.length > 0) await this.client.zadd(this.dueKey, 'LT', ...lows);
    if (this.signals.active) this.announce(outcomes);
    return earliest;
  }

  /** Announces `forwarded` when `outcomes` moved tasks (only while a test listens). */
  private announce(outcomes: readonly ForwardOutcome[]): void {
    let moved = 0;
    for (const o of outcomes) moved += o.moved;
    if (moved > 0) this.signals.emit('forwarded', { moved });
  }
}

/** When a queue is due next after a forward: now when the call hit its limit (more are due), else its next due time. */
function nextAt(o: ForwardOutcome): number | undefined {
  return o.moved >= FORWARD_LIMIT ? o.redisNow : o.nextDueAt;
}
