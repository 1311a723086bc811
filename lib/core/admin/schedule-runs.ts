/**
 * What the Inspector shows of a schedule's spread and bounds (jitter, startAt/endAt, maxRuns): the
 * fields of {@link ScheduleBoundsInfo}, and the read of the runs counters (only for the schedules
 * with a maxRuns).
 */
import type { StoredSchedule } from '../scheduler/definition.js';
import type { InspectorContext } from './context.js';
import { readRunsScript } from '../redis/commands/schedule.js';
import { pushTo } from '../scheduler/due-entry.js';

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
 * How many triggers each schedule with a maxRuns may still enqueue, by name: its runs counter as the
 * leader reads it (readRunsScript: one read-runs.lua call per queue and 1,000 schedules, all queues in flight).
 */
export async function runsLeftOf(ctx: InspectorContext, defs: readonly StoredSchedule[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const byQueue = new Map<string, { name: string; maxRuns: number }[]>();
  for (const s of defs) if (s.maxRuns !== undefined) pushTo(byQueue, s.queue, { name: s.name, maxRuns: s.maxRuns });
  await Promise.all(
    [...byQueue].map(async ([queue, list]) => {
      const counted = await readRunsScript(ctx.client, ctx.keys(queue), list);
      list.forEach((s, i) => out.set(s.name, Math.max(0, s.maxRuns - counted[i])));
    }),
  );
  return out;
}
