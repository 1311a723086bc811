/**
 * The leader's firing loop: the table of schedules it fires (loaded from the registry and each
 * queue's lastFired), one tick at a time — plan each due schedule (plan.ts), run fire.lua per
 * queue in chunks, settle each result — and the timer that wakes it at the next trigger. It
 * reloads the table when a registry change is announced (the changes channel), when the registry
 * version seen at a lease renewal moved (in case a notice was lost), and when fire.lua refused a
 * trigger as planned under an older generation of its schedule (fenced).
 *
 * Scale: a load is built in pieces beside the table in use (firing-load.ts: chunked reads, sliced
 * parsing) and swapped in between ticks; a tick takes only the due schedules from a min-heap of
 * wake instants (due-heap.ts) and plans and fires them a slice of work at a time, so no step
 * holds the event loop long and every per-burst step is linear in the burst.
 */
import type { ChronosEvent, EventBus } from '../runtime/events.js';
import { FailureLog, type ChronosLogger } from '../runtime/logger.js';
import { fireScript, type FireResult } from '../redis/commands/schedule.js';
import { markGrouped } from '../queue/limits.js';
import type { RedisClient } from '../redis/connection.js';
import type { SchedulerKeys } from '../redis/keys.js';
import { FIRE_MODE } from '../redis/protocol.js';
import type { RedisTime } from '../runtime/time.js';
import { triggerKey } from './definition.js';
import { CallDeadlineError, LeaseBound } from '../leadership/deadline.js';
import { DueHeap } from './due-heap.js';
import { FireObserver } from './fire-observer.js';
import { announceSuperseding, fireTriggers, indexDelayed, observedOf, type FireItem } from './fire-triggers.js';
import { loadTable, pushTo, sameSpec, Slicer, type Entry } from './firing-load.js';
import { forgetOrphaned, markLiveness, storeOrphaned } from './orphans.js';
import { isPlanned, LATE_TOLERANCE_MS, plan, wakeAt, type Plan } from './plan.js';
import { fencedNote, PlanReports } from './plan-report.js';
import type { Declarations } from './registry.js';
import type { Signals } from '../runtime/signals.js';

type ScheduleFired = Extract<ChronosEvent, { type: 'schedule.fired' }>;

/** Fire-script calls carry at most this many triggers (keeps each script short for Redis). */
const FIRE_CHUNK = 250;

/** What the firing loop works with. */
export interface FiringContext {
  client: RedisClient;
  keys: SchedulerKeys;
  namespace: string;
  instanceId: string;
  logger: ChronosLogger;
  events: EventBus;
  /** Test hook: what is due is decided by a test clock ({@link now}), not Redis time (the time source is not sampled then). */
  trustLocalClock: boolean;
  /** The process's time source: fire round trips are sampled into it. */
  time: RedisTime;
  /** Redis time now (the time source), or the test clock under `trustLocalClock`, epoch ms. */
  now(): number;
  /** Whether this instance still holds the lease (checked before each tick and each fire-script call). */
  leaseValid(): boolean;
  /** Whether the scheduler runs (not stopped). */
  running(): boolean;
  declarations: Declarations;
  /** Test signals: `tick.start` (synchronous, before each timer tick) and `tick.done`. */
  signals: Signals;
}

/** The leader's table of schedules and its firing loop; idle while this instance does not lead. */
export class Firing {
  private table = new Map<string, Entry>();
  /** The live, unpaused entries of the table with a next trigger, by wake instant. */
  private due = new DueHeap<Entry>();
  /** While a load is read: the schedules a tick planned meanwhile (their lastFired may have moved past what the load read). */
  private touched?: Set<string>;
  private loadedVersion = -1;
  /** The registry version at which a fenced trigger made the table reload (once per version: never a reload loop). */
  private fencedAt = -1;
  private fencedWarned = false;
  /** A reload is queued and has not started: further notices need no other. */
  private reloadQueued = false;
  /** When this leadership began (Redis time, epoch ms): triggers due before it came due while nobody led. */
  private leaderSince = 0;
  /** Reports of the plans: each paused or orphaned span once. */
  private readonly reports: PlanReports;
  /** Re-reads liveness when the earliest liveUntil passes (a declarer died, or its heartbeats lag). */
  private livenessTimer?: NodeJS.Timeout;
  private leadingNow = false;
  /** The leader's calls in flight, abandoned when the lease is lost: a silent socket never holds the loop past the step-down (a fire that reaches Redis later is deduplicated by its dedup key). */
  private readonly bound = new LeaseBound();
  private work: Promise<void> = Promise.resolve();
  /** Loads, one at a time; each is built beside the table in use and swapped in by the serial work. */
  private loads: Promise<void> = Promise.resolve();
  private tickTimer?: NodeJS.Timeout;
  /** Set by {@link halt}: the scheduler is stopping and takes no new work. */
  private halted = false;
  /** Health of the firing loop. */
  readonly failures: FailureLog;
  /** Fire spans and the fire history. */
  private readonly observer: FireObserver;
  /** Queues this leader marked as grouped (a schedule with a `group` targets them; queue/limits.ts markGrouped). */
  private readonly grouped = new Set<string>();

  constructor(private readonly ctx: FiringContext) {
    this.failures = new FailureLog(ctx.logger, 'Firing schedules');
    this.observer = new FireObserver(ctx.client, ctx.instanceId);
    this.reports = new PlanReports(ctx.logger, ctx.events);
  }

  /** True from acquisition until the lease is lost (the lease's own clock may say otherwise sooner). */
  get leading(): boolean {
    return this.leadingNow;
  }

  /** The lease was acquired: load the registry and fire, applying the catch-up policy. */
  acquired(term: number): void {
    this.leadingNow = true;
    this.bound.begin();
    this.leaderSince = this.ctx.now();
    this.ctx.events.emit({ type: 'leader.acquired', instanceId: this.ctx.instanceId, term });
    this.reload();
  }

  /** The lease was lost: stop firing. */
  lost(term: number, reason: string): void {
    this.leadingNow = false;
    clearTimeout(this.tickTimer);
    this.bound.end();
    clearTimeout(this.livenessTimer);
    this.ctx.events.emit({ type: 'leader.lost', instanceId: this.ctx.instanceId, term, reason });
  }

  /** The registry version seen at a lease renewal: reload when it moved (a notice was lost). */
  versionSeen(version: number): void {
    if (version !== this.loadedVersion) this.reload();
  }

  /** A registry change was announced (the changes channel): reload at once. */
  changed(): void {
    this.reload();
  }

  /** Queues a (re)load of the table, unless one is queued already or this instance does not lead. */
  private reload(): void {
    if (!this.leadingNow || this.reloadQueued || this.halted) return;
    this.reloadQueued = true;
    this.loads = this.loads
      .then(() => {
        this.reloadQueued = false;
        return this.load();
      })
      .catch((err) => this.workFailed(err));
  }

  /** Fires what is due now (for fake clocks that jump). */
  wake(): void {
    if (this.leadingNow) this.serial(() => this.tick());
  }

  /**
   * Re-reads which schedules a live instance declares (after a heartbeat, and when the earliest
   * liveUntil passes) and marks the table's entries live or orphaned with their liveUntil, a slice
   * of work at a time, putting each in or out of the due heap; stores the orphaned-since instant of
   * the newly orphaned ones (orphans.ts).
   */
  refreshLiveness(): void {
    if (!this.leadingNow) return;
    this.serial(async () => {
      const { declarations, client, keys } = this.ctx;
      const read = await this.bound.call(declarations.readLive(), 'the live schedules read');
      const now = this.ctx.now();
      const table = this.table;
      const slicer = new Slicer();
      const orphaned: Entry[] = [];
      for (const e of table.values()) {
        if (markLiveness(e, read, now, (name) => declarations.liveUntilOf(name, read)) === 'orphaned') orphaned.push(e);
        declarations.setLive(e, e.stored.runtime || read.names.has(e.stored.name));
        this.due.update(e, wakeAt(e));
        if (slicer.due) {
          await slicer.yield();
          if (table !== this.table) return; // swapped meanwhile: the new table's liveness was read by its load
        }
      }
      await this.bound.call(storeOrphaned(client, keys, orphaned), 'the orphaned-since write');
      let soonest = Infinity;
      for (const until of read.until.values()) soonest = Math.min(soonest, until);
      clearTimeout(this.livenessTimer);
      if (soonest !== Infinity && this.leadingNow && !this.halted) {
        this.livenessTimer = setTimeout(() => this.refreshLiveness(), Math.max(1, soonest + 1 - this.ctx.now()));
      }
      this.armTimer(this.nextTimerMs(Infinity));
    });
  }

  /** Stops the timer and refuses new work; {@link idle} then waits for the work under way. */
  halt(): void {
    this.halted = true;
    clearTimeout(this.tickTimer);
    clearTimeout(this.livenessTimer);
  }

  /** Resolves when the leader work under way is done (its failure is already recorded). */
  async idle(): Promise<void> {
    await this.loads.catch(() => {});
    await this.work.catch(() => {});
  }

  /** Runs leader work one piece at a time (a swap never overlaps a tick); resolves when `fn` is done. */
  private serial(fn: () => Promise<void>): Promise<void> {
    if (this.halted) return Promise.resolve(); // stopping: no new leader work may start on a connection about to close
    this.work = this.work.then(fn).catch((err) => this.workFailed(err));
    return this.work;
  }

  /** Leader work failed: recorded and retried with backoff — unless the lease ran out under it (the step-down said so). */
  private workFailed(err: unknown): void {
    if (err instanceof CallDeadlineError && !this.leadingNow) return;
    this.failures.failed(err);
    if (this.leadingNow) this.armTimer(this.failures.backoffMs);
  }

  /**
   * Loads the registry and lastFired beside the table in use (firing-load.ts), then swaps it in
   * between ticks and fires what is due (plan.ts decides about any gap).
   */
  private async load(): Promise<void> {
    if (!this.leadingNow) return;
    const old = this.table;
    const touched = new Set<string>();
    this.touched = touched;
    const { table, version } = await this.bound.call(
      loadTable(this.ctx, (s) => sameSpec(old.get(s.name), s), old),
      'the table load',
    );
    const due = new DueHeap<Entry>();
    due.rebuild(table.values(), wakeAt);
    await this.serial(async () => {
      if (!this.leadingNow) return;
      // what a tick planned from the old table while this one was read: lastFired only moves forward
      for (const name of touched) {
        const before = this.table.get(name);
        const e = table.get(name);
        if (e !== undefined && before !== undefined && before.stored.queue === e.stored.queue && before.lastFired > e.lastFired) {
          e.lastFired = before.lastFired;
          e.next = e.spec.nextAfter(e.lastFired);
          due.update(e, wakeAt(e));
        }
      }
      if (this.touched === touched) this.touched = undefined;
      this.table = table;
      this.due = due;
      this.loadedVersion = version;
      await this.tick();
    });
  }

  /**
   * Fires what is due: takes the due schedules from the heap, plans and fires them a slice of work
   * at a time, puts them back by their next wake instant, and arms the timer for the earliest.
   */
  private async tick(): Promise<void> {
    clearTimeout(this.tickTimer);
    if (!this.leadingNow || !this.ctx.running()) return;
    if (!this.ctx.leaseValid()) return;
    const now = this.ctx.now();
    const taken: Entry[] = [];
    for (let e = this.due.popDue(now); e !== undefined; e = this.due.popDue(now)) {
      taken.push(e);
      this.touched?.add(e.stored.name);
    }
    let retryEarly = Infinity;
    const slicer = new Slicer();
    try {
      let items: FireItem[] = [];
      for (const e of taken) {
        if (isPlanned(e, now)) {
          const { stored, spec, lastFired, leadMs, liveUntil, orphanSpan: orphaned } = e;
          this.apply(e, plan({ stored, spec, lastFired, now, leadMs, leaderSince: this.leaderSince, liveUntil, orphaned }), items);
        }
        if (slicer.due) {
          if (items.length > 0) retryEarly = Math.min(retryEarly, await this.fire(items));
          items = [];
          await slicer.pace(); // a turn of the loop (the fire's round trips gave some), then a new slice
        }
      }
      if (items.length > 0) retryEarly = Math.min(retryEarly, await this.fire(items));
      // the orphaned spans are skipped in Redis (lastFired moved past them): their stored instants go
      const spans = taken.filter((e) => e.orphanSpan !== undefined && e.lastFired >= e.orphanSpan.until);
      if (spans.length > 0)
        await forgetOrphaned(
          this.ctx.client,
          this.ctx.keys,
          spans.map((e) => e.stored.name),
        );
      for (const e of spans) e.orphanSpan = undefined;
    } finally {
      for (const e of taken) if (e.heapIndex < 0) this.due.update(e, wakeAt(e));
    }
    this.failures.ok();
    this.armTimer(this.nextTimerMs(retryEarly));
    if (this.ctx.signals.active) this.ctx.signals.emit('tick.done', {});
  }

  /** The timer to the next wake instant, ms: never spinning (at least 1 ms), re-checking at least every 30 s. */
  private nextTimerMs(retryEarly: number): number {
    const next = Math.min(retryEarly, this.due.nextWake);
    return next === Infinity ? 30_000 : Math.min(30_000, Math.max(1, next - this.ctx.now()));
  }

  /** Applies one schedule's plan: moves its lastFired, reports catch-up and skips (plan-report.ts), queues its triggers. */
  private apply(e: Entry, p: Plan, items: FireItem[]): void {
    e.lastFired = p.lastFired;
    this.reports.report(e, p);
    for (const t of p.triggers) items.push({ entry: e, triggerAt: t.triggerAt, mode: t.mode });
    if (p.advanceTo !== undefined) items.push({ entry: e, triggerAt: p.advanceTo, mode: FIRE_MODE.advanceOnly, advancedBy: p.advancedBy });
    if (p.triggers.length === 0 && p.advanceTo === undefined) e.next = e.spec.nextAfter(e.lastFired);
  }

  private armTimer(ms: number): void {
    clearTimeout(this.tickTimer);
    if (!this.leadingNow || !this.ctx.running()) return;
    this.tickTimer = setTimeout(() => {
      if (this.ctx.signals.active) this.ctx.signals.emit('tick.start', {});
      this.serial(() => this.tick());
    }, ms);
  }

  /** Runs fire.lua per queue (chunked). @returns the earliest trigger Redis found not yet due, or Infinity. */
  private async fire(items: FireItem[]): Promise<number> {
    const { client, time, trustLocalClock } = this.ctx;
    const byQueue = new Map<string, FireItem[]>();
    for (const i of items) pushTo(byQueue, i.entry.stored.queue, i);
    let retryAt = Infinity;
    const nowArg = trustLocalClock ? this.ctx.now() : undefined;
    let leadMs = 0;
    for (const i of items) leadMs = Math.max(leadMs, i.entry.leadMs);
    for (const [queue, queueItems] of byQueue) {
      if (!this.grouped.has(queue) && queueItems.some((i) => i.entry.stored.group !== undefined)) {
        const keys = queueItems[0].entry.keys;
        await markGrouped(client, keys.namespace, queue); // before its first grouped trigger task is in the stream
        this.grouped.add(queue);
      }
      for (let c = 0; c < queueItems.length; c += FIRE_CHUNK) {
        const chunk = queueItems.slice(c, c + FIRE_CHUNK);
        const observed = observedOf(chunk);
        const triggers = fireTriggers(chunk, this.observer.begin(observed), this.ctx.now(), trustLocalClock);
        if (!this.ctx.leaseValid()) return Infinity;
        const sentAt = time.localNow();
        let fired: Awaited<ReturnType<typeof fireScript>>;
        try {
          fired = await this.bound.call(fireScript(client, chunk[0].entry.keys, nowArg, leadMs, triggers), 'the fire script');
        } catch (err) {
          this.observer.fail(err);
          throw err;
        }
        const { results, now: redisNow } = fired;
        this.observer.end(chunk[0].entry.keys, observed, results, redisNow);
        // a round trip like any other; when Redis refused a trigger as early, it proves the estimate ran ahead and resets it
        if (!trustLocalClock) time.sample(sentAt, redisNow, time.localNow());
        chunk.forEach((item, i) => {
          const early = this.settle(item, results[i]);
          if (early !== undefined) retryAt = Math.min(retryAt, early); // come back when it is due
        });
        announceSuperseding(client, this.ctx.namespace, this.ctx.logger, chunk, results);
        const delayed = indexDelayed(client, this.ctx.namespace, this.ctx.logger, queue, triggers, results, redisNow);
        await this.bound.call(delayed, 'the due-time index write'); // jittered trigger tasks (fire-triggers.ts)
      }
    }
    let previous: Entry | undefined;
    for (const { entry: e } of items) {
      if (e !== previous) e.next = e.spec.nextAfter(e.lastFired); // an entry's items are adjacent
      previous = e;
    }
    return retryAt;
  }

  /** A fenced trigger (see {@link fencedNote}): reload, at most once per registry version. */
  private fenced(schedule: string, triggerAt: number): void {
    const again = this.fencedAt === this.loadedVersion;
    if (again && this.fencedWarned) return;
    this.ctx.logger.warn(fencedNote(schedule, triggerKey(schedule, triggerAt), again));
    this.fencedWarned = again;
    if (again) return;
    this.fencedAt = this.loadedVersion;
    this.reload();
  }

  /** Applies one fire result; returns the trigger instant when Redis found it early. */
  private settle(item: FireItem, result: FireResult): number | undefined {
    const { entry, triggerAt } = item;
    const s = entry.stored;
    if (result === 'early') return triggerAt;
    if (result === 'fenced') {
      this.fenced(s.name, triggerAt);
      return undefined;
    }
    if (result === 'orphaned') {
      this.refreshLiveness(); // dated after its liveUntil: never planned so; read liveness again
      return undefined;
    }
    if (result === 'exhausted' && !entry.exhausted) {
      entry.exhausted = true; // not planned again until a reload (a new maxRuns starts the count afresh)
      this.ctx.logger.log(`Schedule has enqueued its maxRuns triggers; no more fire (schedule=${s.name} maxRuns=${s.maxRuns})`);
    }
    entry.lastFired = Math.max(entry.lastFired, triggerAt);
    if (result === 'enqueued' || result === 'buffered' || result === 'superseding') {
      const caughtUp = triggerAt < this.ctx.now() - LATE_TOLERANCE_MS;
      const taskId = triggerKey(s.name, triggerAt);
      if (result === 'buffered') {
        this.ctx.logger.debug?.(
          'Trigger buffered: the previous task of this schedule is still live; it starts when that one ends ' +
            `(schedule=${s.name} trigger=${taskId} overlap=buffer-one)`,
        );
      } else if (result === 'superseding') {
        this.ctx.logger.log(
          'Trigger supersedes the previous task of this schedule: its signal is aborted ' +
            `(schedule=${s.name} trigger=${taskId} overlap=cancel-previous)`,
        );
      }
      const fired: ScheduleFired = { type: 'schedule.fired', schedule: s.name, queue: s.queue, taskId, triggerAt, caughtUp };
      if (result === 'buffered') fired.buffered = true;
      this.ctx.events.emit(fired);
    } else if (result === 'duplicate') {
      this.ctx.events.emit({ type: 'schedule.skipped', schedule: s.name, triggerAt, reason: 'duplicate', count: 1 });
    } else if (result === 'skipped') {
      const trigger = triggerKey(s.name, triggerAt);
      this.ctx.logger.warn(
        'Trigger skipped: the previous task of this schedule is still pending or running ' +
          `(schedule=${s.name} trigger=${trigger} overlap=skip)`,
      );
      this.ctx.events.emit({ type: 'schedule.skipped', schedule: s.name, triggerAt, reason: 'overlap', count: 1 });
    }
    return undefined;
  }
}
