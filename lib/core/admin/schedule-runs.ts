/**
 * What the Inspector shows of a schedule's spread and bounds (jitter, startAt/endAt, maxRuns): the
 * fields of {@link ScheduleBoundsInfo}, and the read of the runs counters (one pipeline of HMGET,
 * only for the schedules with a maxRuns).
 */
import type { StoredSchedule } from '../scheduler/definition.js';
import type { InspectorContext } from './context.js';
import { SlotPipeline } from '../redis/cluster.js';

/**
 * A schedule's spread and bounds as the Inspector shows them (part of `ScheduleInfo`); each field is
 * absent when the schedule has none. @publicApi
 */
export interface ScheduleBoundsInfo {
  /** Spread of each trigger's start, ms: its task starts a deterministic shift in `[0, jitterMs)` after the trigger's instant. */
  jitterMs?: number;
  /** No trigger before this instant (inclusive), epoch ms. */
  startAt?: number;
  /** No trigger at or after this instant (exclusive), epoch ms. */
  endAt?: number;
  /** The most triggers the schedule enqueues in total, fleet-wide. */
  maxRuns?: number;
  /** With maxRuns: how many triggers it may still enqueue (0 when exhausted). */
  runsLeft?: number;
  /**
   * Set when the schedule fires no more (it stays registered): `'end-at'` when no trigger is left
   * before its endAt, `'max-runs'` when it has enqueued its maxRuns triggers.
   */
  ended?: 'end-at' | 'max-runs';
}

/** The bounds fields of a stored schedule (without runsLeft and ended). */
export function boundsInfo(s: StoredSchedule): ScheduleBoundsInfo {
  const out: ScheduleBoundsInfo = {};
  if (s.jitterMs !== undefined) out.jitterMs = s.jitterMs;
  if (s.startAt !== undefined) out.startAt = s.startAt;
  if (s.endAt !== undefined) out.endAt = s.endAt;
  if (s.maxRuns !== undefined) out.maxRuns = s.maxRuns;
  return out;
}

/**
 * How many triggers each schedule with a maxRuns may still enqueue, by name: HMGET `max n` of its
 * runs counter (keys.ts `runs`), one pipeline per slot. A count taken under another maxRuns does not count
 * (fire.lua starts it afresh at the next fire).
 */
export async function runsLeftOf(ctx: InspectorContext, defs: readonly StoredSchedule[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const limited = defs.filter((s) => s.maxRuns !== undefined);
  if (limited.length === 0) return out;
  const p = new SlotPipeline(ctx.client); // each counter lives in its queue's slot
  for (const s of limited) {
    const key = ctx.keys(s.queue).runs(s.name);
    p.add(key, (c) => c.hmget(key, 'max', 'n'));
  }
  const replies = await p.exec();
  limited.forEach((s, i) => {
    const [max, n] = (replies[i][1] as (string | null)[] | null) ?? [null, null];
    const counted = Number(max) === s.maxRuns ? Number(n ?? 0) : 0;
    out.set(s.name, Math.max(0, s.maxRuns! - counted));
  });
  return out;
}
