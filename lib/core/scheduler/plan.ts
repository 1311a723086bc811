/**
 * Where a trigger is planned: which due triggers of one schedule the leader enqueues at a tick,
 * which it skips (catch-up window, cap and policy), and what it reports. Pure: no Redis, no
 * logger, no clock — the firing loop passes Redis time in and applies the result.
 * Units: epoch milliseconds.
 */
import { FIRE_MODE } from '../redis/protocol.js';
import type { StoredSchedule } from './definition.js';
import { triggersBetween, type ScheduleSpec } from './spec.js';

/** A trigger to enqueue, and how fire.lua takes it (protocol.ts FIRE_MODE: overlap allowed or skip). */
export interface PlannedTrigger {
  triggerAt: number;
  mode: typeof FIRE_MODE.allowOverlap | typeof FIRE_MODE.skipOverlap;
}

/** What {@link plan} needs of one schedule, and the tick it plans. */
export interface PlanInput {
  /** The stored definition: its catch-up policy, window and cap, and its overlap policy. */
  stored: Pick<StoredSchedule, 'catchUp' | 'catchUpWindowMs' | 'catchUpCap' | 'overlap'>;
  spec: ScheduleSpec;
  /** The schedule's last fired trigger (or its registration instant), epoch ms. */
  lastFired: number;
  /** Redis time of this tick, epoch ms. */
  now: number;
  /** How long before its instant a trigger is enqueued, ms (see fireLeadMs). */
  leadMs: number;
  /**
   * Whether this is the first tick of a leadership. Today the catch-up policy (and the "catching
   * up" report) applies only then; see `policyApplies` in {@link plan}.
   */
  firstTickOfLeadership: boolean;
}

/** What the firing loop does for one schedule at one tick. */
export interface Plan {
  /**
   * lastFired once the window is applied: at least `now - catchUpWindowMs` (the older triggers are
   * skipped). The schedule's lastFired moves here whether or not anything fires.
   */
  lastFired: number;
  /** Triggers to enqueue, ascending: the missed ones kept by the policy and cap, then those within the lead. */
  triggers: PlannedTrigger[];
  /** With catch-up `none` and nothing to enqueue: the trigger to advance lastFired to (fired in mode `'x'`). */
  advanceTo?: number;
  /** Missed triggers left out (window, cap, policy); 0 when none. */
  skipped: number;
  /** The instant a skip is reported at (the `schedule.skipped` event): the first trigger, else advanceTo, else now. */
  skippedAt: number;
  /** Set when missed triggers more than 1 s late are found where the policy applies: how many, and the oldest's lateness, ms. */
  catchingUp?: { count: number; oldestLateMs: number };
}

/** What {@link isPlanned} needs of one schedule as the leader tracks it. */
export interface PlanState {
  stored: Pick<StoredSchedule, 'paused'>;
  /** Declared by a live instance, or added at run time. */
  live: boolean;
  /** Its next trigger after lastFired, epoch ms; null if none ever. */
  next: number | null;
  leadMs: number;
}

/** Whether a schedule is planned at a tick at `now`: live, not paused, and its next trigger within the lead. */
export function isPlanned(s: PlanState, now: number): boolean {
  return s.live && !s.stored.paused && s.next !== null && s.next <= now + s.leadMs;
}

/** When the firing loop must wake for a schedule (its next trigger minus the lead); Infinity if it is not live, paused or done. */
export function wakeAt(s: PlanState): number {
  return s.live && !s.stored.paused && s.next !== null ? s.next - s.leadMs : Infinity;
}

/**
 * Plans one schedule at one tick. Triggers in (lastFired, now] are missed or due: those older than
 * the window are skipped, the newest `catchUpCap` are kept, and where the policy applies `latest`
 * keeps only the newest and `none` keeps none (advancing lastFired past them). Triggers in
 * (now, now + leadMs] (at most 10) are enqueued early; workers start them at their instant.
 */
export function plan(input: PlanInput): Plan {
  const { stored: s, spec, now, leadMs } = input;
  // The one place that decides when the catch-up policy applies: today only on acquisition, so a
  // gap found at a later tick (e.g. after a stalled event loop) fires all of it within window and
  // cap. The issue "scheduler at its edges" will change this line.
  const policyApplies = input.firstTickOfLeadership;
  let lastFired = input.lastFired;
  const windowStart = now - s.catchUpWindowMs;
  let skipped = 0;
  if (lastFired < windowStart) {
    skipped += triggersBetween(spec, lastFired, windowStart, 0).skipped;
    lastFired = windowStart;
  }
  // missed or due now (the catch-up policy and cap apply to these), plus those within the lead
  const due = triggersBetween(spec, lastFired, now, s.catchUpCap);
  skipped += due.skipped;
  let missed = due.triggers;
  const upcoming = triggersBetween(spec, Math.max(now, lastFired), now + leadMs, 10).triggers;
  let advanceTo: number | undefined;
  let catchingUp: Plan['catchingUp'];
  if (policyApplies && missed.length > 0 && missed[0] < now - 1000) {
    catchingUp = { count: missed.length, oldestLateMs: Math.round(now - missed[0]) };
  }
  if (policyApplies && missed.length > 0 && s.catchUp !== 'all') {
    if (s.catchUp === 'latest') {
      skipped += missed.length - 1;
      missed = missed.slice(-1);
    } else {
      skipped += missed.length;
      if (upcoming.length === 0) advanceTo = missed[missed.length - 1];
      missed = [];
    }
  }
  const fire = [...missed, ...upcoming];
  const mode = s.overlap === 'skip' ? FIRE_MODE.skipOverlap : FIRE_MODE.allowOverlap;
  return {
    lastFired,
    triggers: fire.map((triggerAt) => ({ triggerAt, mode })),
    advanceTo,
    skipped,
    skippedAt: fire[0] ?? advanceTo ?? now,
    catchingUp,
  };
}
