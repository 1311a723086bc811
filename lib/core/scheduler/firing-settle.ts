/**
 * What the shards' loops of one leader share (shard-loop.ts): the context, the caches, the
 * gate of their batches, the deadline bound of its calls, the health of its firing, and the fire path itself — applying a
 * plan to an entry, running fire.lua per queue in chunks (all in flight) and settling each result
 * into the entry (lastFired, maxRuns, a retry instant) with its events and logs.
 * Units: epoch ms.
 */
import type { ChronosEvent } from '../runtime/events.js';
import { FailureLog } from '../runtime/logger.js';
import { explainFailure } from '../redis/connection.js';
import { fireScript, type FireOutcome, type FireResult, type FireTrigger } from '../redis/commands/schedule.js';
import { markGrouped } from '../queue/limits.js';
import { corked } from '../redis/cluster.js';
import { FIRE_MODE } from '../redis/protocol.js';
import { triggerKey } from './definition.js';
import { CallDeadlineError, LeaseBound } from '../leadership/deadline.js';
import { BatchGate } from './batch-gate.js';
import { ShardPasses } from './shard-pass.js';
import { exhaustedLine, pushTo, SpecCache, type Entry } from './due-entry.js';
import { FireObserver, type FireSpans } from './fire-observer.js';
import { announceSuperseding, fireTriggers, indexDelayed, type FireItem } from './fire-triggers.js';
import { LATE_TOLERANCE_MS, type Plan } from './plan.js';
import { PlanReports } from './plan-report.js';
import type { FiringContext } from './firing.js';
import type { LiveRead } from './live-names.js';

type ScheduleFired = Extract<ChronosEvent, { type: 'schedule.fired' }>;

/**
 * Fire-script calls carry at most this many triggers (keeps each script short for Redis: with the
 * history written inside fire.lua, 250 made 198 of 3,927 calls over 10 ms in a 1M burst, 125 made 8
 * of 7,869, at 35k fires/s instead of 31.5k; bench/experiments/burst-block.ts).
 */
export const FIRE_CHUNK = 125;
/** How soon a schedule whose trigger fire.lua refused as fenced or orphaned is looked at again, ms. */
const REFUSED_RECHECK_MS = 1_000;

/** The leader's shared fire path and state; see the module doc. */
export class FiringShared {
  readonly cache: SpecCache;
  /** The leader's calls in flight, abandoned when it leads no shard any more: a silent socket never holds a loop past the step-down (a fire that reaches Redis later is deduplicated by its dedup key). */
  readonly bound = new LeaseBound();
  /** Health of the firing loops. */
  readonly failures: FailureLog;
  /** The slots of the shards' batches: at most two run at once across the loops (batch-gate.ts). */
  readonly gate = new BatchGate();
  /** The passes of the loops that tick together, and the loops' timers (shard-pass.ts). */
  readonly passes: ShardPasses = new ShardPasses(this);
  private readonly reports: PlanReports;
  private readonly observer: FireObserver;
  /** Queues this leader marked as grouped (a schedule with a `group` targets them; queue/limits.ts markGrouped). */
  private readonly grouped = new Set<string>();
  /** Schedules whose fenced refusal was logged (bounded: cleared past {@link LOGGED_MAX}). */
  private readonly fencedLogged = new Set<string>();

  constructor(
    readonly ctx: FiringContext,
    /** Whether this instance leads a shard now (its lease's own clock). */
    readonly leads: (shard: number) => boolean,
    /** The last liveness read of the declared schedules (read first when none is yet, or when `fresh`). */
    readonly liveRead: (fresh?: boolean) => Promise<LiveRead>,
    /** fire.lua refused a trigger as orphaned: read liveness again. */
    private readonly livenessStale: () => void,
  ) {
    this.cache = new SpecCache(ctx.namespace);
    this.failures = new FailureLog(ctx.logger, 'Firing schedules', (err) => explainFailure(ctx.client, err));
    this.observer = new FireObserver(ctx.historyLimit);
    this.reports = new PlanReports(ctx.logger, ctx.events);
  }

  /** Applies one schedule's plan: moves its lastFired, reports catch-up and skips (plan-report.ts), queues its triggers. */
  apply(e: Entry, p: Plan, items: FireItem[]): void {
    e.lastFired = p.lastFired;
    this.reports.report(e, p);
    // the skips first (ascending, older than every trigger): each advances lastFired and leaves its history record
    for (const k of p.skips) items.push({ entry: e, triggerAt: k.at, mode: FIRE_MODE.advanceOnly, advancedBy: k.by, count: k.count });
    for (const t of p.triggers) items.push({ entry: e, triggerAt: t.triggerAt, mode: t.mode });
    if (p.triggers.length === 0 && p.skips.length === 0) e.next = e.spec.nextAfter(e.lastFired);
  }

  /**
   * Runs fire.lua per queue in chunks of {@link FIRE_CHUNK} (every chunk in flight at once, sent in
   * one write per node: corked), settles each result into its entry, and moves each entry's next
   * trigger on. The items may be of several shards (a pass, shard-pass.ts): a chunk mixes them, and
   * carries the earliest of their lease ends (fire.lua leaseUntil).
   * @param leading whether this instance still leads a shard (checked once per shard, just before the calls are made): the
   *   items of a shard it no longer leads are not fired
   */
  async fire(items: FireItem[], leading: (shard: number) => boolean): Promise<void> {
    const { client } = this.ctx;
    const byQueue = new Map<string, FireItem[]>();
    for (const i of items) pushTo(byQueue, i.entry.stored.queue, i);
    for (const [queue, queueItems] of byQueue) {
      if (!this.grouped.has(queue) && queueItems.some((i) => i.entry.stored.group !== undefined)) {
        await markGrouped(client, queueItems[0].entry.keys.namespace, queue); // before its first grouped trigger task is in the stream
        this.grouped.add(queue);
      }
    }
    const led = new Map<number, boolean>();
    const leads = (shard: number): boolean => {
      let yes = led.get(shard);
      if (yes === undefined) led.set(shard, (yes = leading(shard)));
      return yes;
    };
    const calls = corked(client, () => {
      const out: Promise<void>[] = [];
      for (const [queue, all] of byQueue) {
        const queueItems = all.filter((i) => leads(i.entry.shard));
        for (let c = 0; c < queueItems.length; c += FIRE_CHUNK) out.push(this.fireChunk(queue, queueItems.slice(c, c + FIRE_CHUNK)));
      }
      return out;
    });
    await Promise.all(calls);
    let previous: Entry | undefined;
    for (const { entry: e } of items) {
      if (e !== previous) e.next = e.spec.nextAfter(e.lastFired); // an entry's items are adjacent
      previous = e;
    }
  }

  /** One fire.lua call (it writes the fire history too) and what follows it: the spans, the clock sample, the settling, the notices, the delayed index. */
  private async fireChunk(queue: string, chunk: FireItem[]): Promise<void> {
    const { client, time, trustLocalClock } = this.ctx;
    const nowArg = trustLocalClock ? this.ctx.now() : undefined;
    // the earliest lease end of the chunk's shards, Redis time: a call Redis runs after it (this process
    // paused since its lease check) changes nothing; under a test clock fire.lua decides by that clock, so no fence
    let leaseUntil: number | undefined;
    let leadMs = 0;
    let shard = -1;
    for (const { entry } of chunk) {
      leadMs = Math.max(leadMs, entry.leadMs);
      if (trustLocalClock || entry.shard === shard) continue;
      shard = entry.shard;
      leaseUntil = Math.min(leaseUntil ?? Infinity, this.ctx.leaseEnd(shard));
    }
    const spans = this.observer.begin(chunk);
    const triggers = fireTriggers(
      chunk,
      spans.map((span) => span?.traceparent),
      this.ctx.now(),
      trustLocalClock,
    );
    this.observer.historyFlags(chunk, triggers);
    const sentAt = time.localNow();
    const call = fireScript(client, chunk[0].entry.keys, nowArg, leadMs, triggers, this.ctx.instanceId, this.ctx.historyLimit, leaseUntil);
    let fired: FireOutcome;
    try {
      fired = await this.bound.call(call, 'the fire script');
    } catch (err) {
      if (err instanceof CallDeadlineError) {
        // abandoned at the lease's end, not cancelled: when it lands, its triggers are enqueued all the
        // same, and their follow-ups are owed (trial 44: 179 tasks ran with no schedule.fired)
        call
          .then(
            (late) => this.followUp(queue, chunk, spans, triggers, late, false),
            (e: unknown) => this.observer.fail(spans, e),
          )
          .catch((e: unknown) =>
            this.ctx.logger.warn(`Could not follow up a fire that landed after the lease ran out (queue=${queue} error=${String(e)})`),
          );
      } else this.observer.fail(spans, err);
      throw err;
    }
    // a round trip like any other; when Redis refused a trigger as early, it proves the estimate ran ahead and resets it
    if (!trustLocalClock) time.sample(sentAt, fired.now, time.localNow());
    await this.followUp(queue, chunk, spans, triggers, fired, true);
  }

  /**
   * What a fire.lua call that returned is owed, also one the lease's end abandoned (`bounded` false)
   * that landed later: its spans ended with their outcomes, each result settled (its events and logs),
   * the cancel notices of the tasks it superseded, the due-time index of its delayed tasks (else they
   * would wait for the forwarders' rolling sweep).
   */
  private async followUp(
    queue: string,
    chunk: FireItem[],
    spans: FireSpans,
    triggers: FireTrigger[],
    fired: FireOutcome,
    bounded: boolean,
  ): Promise<void> {
    const { client, namespace, logger } = this.ctx;
    const { results, now: redisNow } = fired;
    this.observer.end(spans, results);
    if (results[0] === 'unleased') {
      // the whole call was refused (every result is unleased): nothing changed in Redis
      logger.warn(
        `Fire call refused: Redis ran it after this instance's shard lease had expired there (a paused process or a delayed call); ` +
          `its ${chunk.length} trigger(s) are left to the shard's leader (queue=${queue} schedule=${chunk[0].entry.stored.name} trigger=${chunk[0].triggerAt})`,
      );
      return;
    }
    for (let i = 0; i < chunk.length; i++) this.settle(chunk[i], results[i]);
    announceSuperseding(client, namespace, logger, chunk, results);
    const index = indexDelayed(client, namespace, logger, queue, triggers, results, redisNow); // jittered trigger tasks (fire-triggers.ts)
    await (bounded ? this.bound.call(index, 'the due-time index write') : index);
  }

  /** Applies one fire result to its entry, with its events and logs. */
  private settle(item: FireItem, result: FireResult): void {
    const { entry, triggerAt } = item;
    const s = entry.stored;
    if (result === 'early') {
      retry(entry, triggerAt - entry.leadMs); // come back when it is due (the time source was reset by this reply)
      return;
    }
    if (result === 'fenced') {
      // a change came after the definition was read: its mark makes the next tick plan it afresh (the
      // fence at work, not a fault: logged at info, once per schedule)
      if (!this.fencedLogged.has(s.name)) {
        if (this.fencedLogged.size >= LOGGED_MAX) this.fencedLogged.clear();
        this.fencedLogged.add(s.name);
        this.ctx.logger.log(
          `Trigger refused: planned under an older definition of its schedule, which changed meanwhile; planned again (schedule=${s.name} trigger=${triggerKey(s.name, triggerAt)})`,
        );
      }
      retry(entry, this.ctx.now() + REFUSED_RECHECK_MS);
      return;
    }
    if (result === 'orphaned') {
      this.livenessStale(); // dated after its liveUntil: never planned so; read liveness again
      retry(entry, this.ctx.now() + REFUSED_RECHECK_MS);
      return;
    }
    if (result === 'exhausted' && !entry.exhausted) {
      entry.exhausted = true; // taken out of the due index (a new maxRuns marks it again)
      this.ctx.logger.log(exhaustedLine(s));
    }
    entry.lastFired = Math.max(entry.lastFired, triggerAt);
    const { events } = this.ctx;
    if (result === 'enqueued' || result === 'buffered' || result === 'superseding') {
      if (result === 'enqueued' && !events.active) return; // nothing to log, no one to tell (no event built)
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
      events.emit(fired);
    } else if (result === 'duplicate') {
      events.emit({ type: 'schedule.skipped', schedule: s.name, triggerAt, reason: 'duplicate', count: 1 });
    } else if (result === 'skipped') {
      const trigger = triggerKey(s.name, triggerAt);
      // the schedule's own policy: under buffer-one a trigger is skipped only when one already waits
      const why =
        s.overlap === 'buffer-one'
          ? 'a trigger of this schedule already waits behind its live task'
          : 'the previous task of this schedule is still pending or running';
      this.ctx.logger.warn(`Trigger skipped: ${why} (schedule=${s.name} trigger=${trigger} overlap=${s.overlap})`);
      events.emit({ type: 'schedule.skipped', schedule: s.name, triggerAt, reason: 'overlap', count: 1 });
    }
  }
}

/** Asks for the entry to be looked at again by `at` (epoch ms): its earliest such instant stands. */
function retry(entry: Entry, at: number): void {
  entry.retryAt = Math.min(entry.retryAt ?? Infinity, at);
}

/** Most names a set of logged schedules keeps before it starts afresh (the leader's memory stays bounded). */
const LOGGED_MAX = 10_000;
