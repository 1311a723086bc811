/**
 * Where a trigger is planned: which due triggers of one schedule the leader enqueues at a tick,
 * which it skips, and what it reports. This is the one place that decides about a gap in firing,
 * whatever caused it (no leader, a pause, a reload, a tick that ran long, a changed spec). Pure:
 * no Redis, no logger, no clock — the firing loop passes Redis time in and applies the result.
 * Units: epoch milliseconds.
 *
 * The rules, in the order they apply to the triggers after the schedule's lastFired:
 * 1. A trigger of the current spec dated before the spec took effect (`changedAt`: its
 *    registration, or the storing of a new spec, zone, offset, queue or bounds) never existed: nothing.
 * 2. A trigger that came due while the schedule was paused (up to `resumedAt`) is skipped, whatever
 *    the catch-up policy; the skip is reported once, with reason 'pause'. So is one that came due
 *    while it was orphaned (the span from its orphaned-since instant to when it was seen declared
 *    again, orphans.ts), with reason 'orphaned'.
 * 3. A trigger older than `catchUpWindowMs` is skipped; of the rest, the newest `catchUpCap` are kept.
 * 4. A kept trigger is *missed* when it came due before this leadership began (`leaderSince`) or
 *    is more than {@link LATE_TOLERANCE_MS} late at this tick; a later one is on time (a tick a
 *    few ms late is normal, not a gap). The policy decides about the missed ones: `all` enqueues
 *    each, `latest` only the newest — none when an on-time trigger is due too (it is newer) —
 *    and `none` none.
 * 5. Triggers within the lead, (now, now + leadMs], are enqueued early; workers start them at
 *    their instant.
 * 6. No trigger after `liveUntil` (until when a live instance declares the schedule, by the
 *    leader's last liveness read) is planned at all: it waits for the next read.
 * Each run of skipped triggers is fired in mode `advanceOnly` (fire.lua) at its newest trigger,
 * ahead of the triggers enqueued: lastFired moves past it in Redis, so no leader counts it again,
 * and it is recorded in the fire history with its count.
 */
import { fireModeOf, type EnqueueFireMode, type StoredSchedule } from './definition.js';
import { triggersBetween, type ScheduleSpec } from './spec.js';

/** A due trigger this late at a tick (and due within the leadership) is on time, not missed, ms. */
export const LATE_TOLERANCE_MS = 1000;

/**
 * The catch-up window as applied, ms: at least {@link LATE_TOLERANCE_MS}, since a trigger that
 * late is on time (a window of 0 would otherwise skip tasks that start a few ms late: trial 7).
 */
export function effectiveWindowMs(catchUpWindowMs: number): number {
  return Math.max(catchUpWindowMs, LATE_TOLERANCE_MS);
}

/** A trigger to enqueue, and how fire.lua takes it (protocol.ts FIRE_MODE: the schedule's overlap policy). */
export interface PlannedTrigger {
  triggerAt: number;
  mode: EnqueueFireMode;
}

/** What {@link plan} needs of one schedule, and the tick it plans. */
export interface PlanInput {
  /** The stored definition: its catch-up policy, window and cap, its overlap policy, when its spec took effect and when it was resumed. */
  stored: Pick<StoredSchedule, 'catchUp' | 'catchUpWindowMs' | 'catchUpCap' | 'overlap' | 'changedAt' | 'resumedAt'>;
  spec: ScheduleSpec;
  /** The schedule's last fired trigger (or its registration instant), epoch ms. */
  lastFired: number;
  /** Redis time of this tick, epoch ms. */
  now: number;
  /** How long before its instant a trigger is enqueued, ms (see fireLeadMs). */
  leadMs: number;
  /** When this leadership began (Redis time, epoch ms): a trigger due before it came due while nobody led. */
  leaderSince: number;
  /** Until when a live instance declares the schedule (epoch ms; Infinity or undefined for a runtime one): no later trigger is planned. */
  liveUntil?: number;
  /** Declared again after being orphaned: the span (since, until] whose triggers are skipped (epoch ms). */
  orphaned?: { since: number; until: number };
}

/** What the firing loop does for one schedule at one tick. */
export interface Plan {
  /**
   * lastFired once the rules are applied: past the triggers that never existed, were skipped while
   * paused or are older than the window. The schedule's lastFired moves here whether or not anything fires.
   */
  lastFired: number;
  /** Triggers to enqueue, ascending: the missed ones kept by the policy and cap, the on-time ones, then those within the lead. */
  triggers: PlannedTrigger[];
  /** When something was skipped and nothing is enqueued: the newest skipped trigger, to advance lastFired to (fire.lua mode `'x'`). */
  advanceTo?: number;
  /** With advanceTo: what skipped that trigger, the pause or the catch-up rules (its history outcome: `skipped-paused` / `skipped-catch-up`). */
  advancedBy?: 'pause' | 'catch-up';
  /** Triggers skipped by the catch-up rules (window, cap, policy); 0 when none. */
  skipped: number;
  /** The instant a catch-up skip is reported at (the `schedule.skipped` event): the first trigger, else advanceTo, else now. */
  skippedAt: number;
  /** Triggers that came due while the schedule was paused (all skipped): how many, and the newest. */
  paused?: { count: number; newest: number };
  /** Triggers that came due while the schedule was orphaned (all skipped): how many, and the newest. */
  orphaned?: { count: number; newest: number };
  /** Set when missed triggers more than 1 s late are found: how many, how many of them the policy keeps, and the oldest's lateness, ms. */
  catchingUp?: { count: number; kept: number; oldestLateMs: number };
  /**
   * The skips of this tick as fire-history records, ascending: one per run of skipped triggers (the
   * pause's, the orphaned span's, the catch-up rules'), at its newest trigger, with how many it
   * stands for. Each is fired in mode `advanceOnly` ahead of the triggers, so it is recorded (and
   * lastFired moved past it) whether or not a trigger is enqueued at the same tick.
   */
  skips: PlanSkip[];
}

/** One run of skipped triggers (a fire-history record, history.ts `skipped-paused` / `skipped-catch-up`). */
export interface PlanSkip {
  /** Its newest trigger, epoch ms. */
  at: number;
  by: 'pause' | 'catch-up';
  /** Triggers it stands for. */
  count: number;
}

/** What {@link isPlanned} needs of one schedule as the leader tracks it. */
export interface PlanState {
  stored: Pick<StoredSchedule, 'paused'>;
  /** Declared by a live instance, or added at run time. */
  live: boolean;
  /** Its next trigger after lastFired, epoch ms; null if none ever. */
  next: number | null;
  leadMs: number;
  /** Until when a live instance declares it, epoch ms (Infinity or undefined for a runtime one). */
  liveUntil?: number;
  /** Its maxRuns is reached (fire.lua said so): never planned. */
  exhausted?: boolean;
}

/** Whether a schedule is planned at a tick at `now`: live, not paused, not exhausted, and its next trigger within the lead and its liveUntil. */
export function isPlanned(s: PlanState, now: number): boolean {
  return wakeAt(s) <= now;
}

/**
 * When the firing loop must wake for a schedule (its next trigger minus the lead); Infinity if it
 * is not live, paused, exhausted or done, or its next trigger is after its liveUntil (the next liveness read decides).
 */
export function wakeAt(s: PlanState): number {
  const planned = s.live && !s.stored.paused && !s.exhausted && s.next !== null && s.next <= (s.liveUntil ?? Infinity);
  return planned ? s.next! - s.leadMs : Infinity;
}

/** No triggers (shared, never written to). */
const NONE: readonly number[] = Object.freeze([]);

/** Plans one schedule at one tick by the rules of this module (see its header). */
export function plan(input: PlanInput): Plan {
  const { stored: s, spec, now, leadMs } = input;
  const liveUntil = input.liveUntil ?? Infinity;
  let from = Math.max(input.lastFired, s.changedAt ?? -Infinity);
  let newestSkipped: number | undefined;
  // 2. a pause skips what came due while it lasted
  let paused: Plan['paused'];
  if (s.resumedAt !== undefined && s.resumedAt > from) {
    const during = triggersBetween(spec, from, Math.min(s.resumedAt, now), 1);
    if (during.triggers.length > 0) {
      paused = { count: during.skipped + 1, newest: during.triggers[0] };
      newestSkipped = paused.newest;
    }
    from = s.resumedAt;
  }
  let orphaned: Plan['orphaned'];
  const span = input.orphaned;
  if (span !== undefined && span.until > from) {
    const during = triggersBetween(spec, from, Math.min(span.until, now), 1);
    if (during.triggers.length > 0) {
      orphaned = { count: during.skipped + 1, newest: during.triggers[0] };
      newestSkipped = orphaned.newest;
    }
    from = span.until;
  }
  // 3. the window, then the cap
  let skipped = 0;
  const windowStart = now - effectiveWindowMs(s.catchUpWindowMs);
  let catchUpNewest: number | undefined;
  if (from < windowStart) {
    const old = triggersBetween(spec, from, windowStart, 1);
    skipped += old.skipped + old.triggers.length;
    if (old.triggers.length > 0) newestSkipped = catchUpNewest = old.triggers[0];
    from = windowStart;
  }
  // 6. nothing after liveUntil
  const due = triggersBetween(spec, from, Math.max(from, Math.min(now, liveUntil)), s.catchUpCap);
  skipped += due.skipped;
  // the newest trigger the cap left out (older than the first it keeps)
  if (due.skipped > 0) catchUpNewest = triggersBetween(spec, from, due.triggers[0] - 1, 1).triggers[0] ?? catchUpNewest;
  // 4. missed or on time; the policy decides about the missed
  const missedBefore = Math.max(input.leaderSince, now - LATE_TOLERANCE_MS);
  // the triggers are ascending: the missed ones are a prefix (no arrays made when none is due: the steady state)
  let firstOnTime = 0;
  while (firstOnTime < due.triggers.length && due.triggers[firstOnTime] < missedBefore) firstOnTime++;
  let missed = firstOnTime === 0 ? NONE : due.triggers.slice(0, firstOnTime);
  const onTime = firstOnTime === 0 ? due.triggers : due.triggers.slice(firstOnTime);
  let catchingUp: Plan['catchingUp'];
  const count = missed.length;
  if (missed.length > 0 && s.catchUp !== 'all') {
    const keep = s.catchUp === 'latest' && onTime.length === 0 ? 1 : 0;
    skipped += missed.length - keep;
    newestSkipped = missed[missed.length - 1 - keep] ?? newestSkipped;
    catchUpNewest = missed[missed.length - 1 - keep] ?? catchUpNewest;
    missed = missed.slice(missed.length - keep);
  }
  if (count > 0 && due.triggers[0] < now - 1000) {
    catchingUp = { count, kept: missed.length, oldestLateMs: Math.round(now - due.triggers[0]) };
  }
  // 5. the lead
  const leadFrom = Math.max(now, from);
  const upcoming = triggersBetween(spec, leadFrom, Math.max(leadFrom, Math.min(now + leadMs, liveUntil)), 10).triggers;
  const fire = missed.length + onTime.length === 0 ? upcoming : [...missed, ...onTime, ...upcoming];
  const mode = fireModeOf(s.overlap);
  const advanceTo = fire.length === 0 ? newestSkipped : undefined;
  const advancedBy = advanceTo === undefined ? undefined : paused && advanceTo === paused.newest ? 'pause' : 'catch-up';
  const skips: PlanSkip[] = [];
  if (paused) skips.push({ at: paused.newest, by: 'pause', count: paused.count });
  if (orphaned) skips.push({ at: orphaned.newest, by: 'catch-up', count: orphaned.count });
  if (skipped > 0 && catchUpNewest !== undefined) skips.push({ at: catchUpNewest, by: 'catch-up', count: skipped });
  return {
    lastFired: from,
    triggers: fire.map((triggerAt) => ({ triggerAt, mode })),
    advanceTo,
    advancedBy,
    skipped,
    skippedAt: fire[0] ?? advanceTo ?? now,
    paused,
    orphaned,
    catchingUp,
    skips,
  };
}
