import { execReads } from '../redis/cluster.js';
import { readFires, type FireRecord } from '../scheduler/history.js';
import { parseSpec, triggersBetween, type ScheduleSpec } from '../scheduler/spec.js';
import { boundedSpec } from '../scheduler/spec-bounded.js';
import { engineTime } from '../runtime/time.js';
import type { InspectorContext } from './context.js';
import type { FireMark, ScheduleActivity, ScheduleInfo, ScheduleSilence, WindowFires } from './types.js';

/** A trigger due longer ago than this and not fired is missed (a leader fires at the instant; a hand-over takes about its lease TTL), ms. */
export const SILENT_GRACE_MS = 30_000;
/** A pause this old (ms, 1 h) makes a schedule silent: it should have fired and did not. */
export const PAUSED_LONG_MS = 3_600_000;
/** An enqueued fire recorded more than this after its trigger instant is late, ms (as `chronos_triggers_total{outcome="caught_up"}`). */
export const LATE_MS = 1000;
/** Fires read per schedule for the marks (the sparkline) and the skips of the windows. */
export const ACTIVITY_FIRES = 30;
/** Fires with a task, all failed, that make a schedule silent as `failing`. */
const FAILING_RUN = 3;
const HOUR_MS = 3_600_000;

/** The spec of a schedule as the Inspector shows it; undefined when it cannot be parsed. */
export function specOf(s: ScheduleInfo): ScheduleSpec | undefined {
  if (s.error) return undefined;
  try {
    return boundedSpec(parseSpec(s.expression, { timeZone: s.timeZone, offsetMs: s.offsetMs, stored: true }), s.startAt, s.endAt);
  } catch {
    return undefined;
  }
}

/** Triggers of `spec` in (afterMs, untilMs] (exact for `@every`; cron counts up to 10,000). */
function count(spec: ScheduleSpec, afterMs: number, untilMs: number): number {
  if (untilMs <= afterMs) return 0;
  const r = triggersBetween(spec, afterMs, untilMs, 1);
  return r.triggers.length + r.skipped;
}

/**
 * Why a schedule should have fired and did not, or undefined: `orphaned` (no live instance
 * declares it), `paused` for {@link PAUSED_LONG_MS} or longer, `no-leader` or `not-firing`
 * (triggers due more than {@link SILENT_GRACE_MS} ago are not fired, with or without a leader of
 * the schedule's shard: `hasLeader`),
 * `failing` (the last 3 fires' tasks all failed; needs `marks`). Pure: no Redis call.
 */
export function silenceOf(
  s: ScheduleInfo,
  now: number,
  hasLeader: boolean,
  marks: readonly { mark: FireMark }[] = [],
): { overdue: number; silent?: ScheduleSilence } {
  const spec = specOf(s);
  const after = s.lastFiredAt ?? s.registeredAt ?? now;
  const overdue = spec && !s.paused && !s.orphaned && !s.ended ? count(spec, after, now - SILENT_GRACE_MS) : 0;
  if (s.error) return { overdue, silent: { reason: 'unreadable', message: s.error } };
  if (s.orphaned) {
    const since = s.orphanedSince === undefined ? '' : ` since ${new Date(s.orphanedSince).toISOString()}`;
    return { overdue, silent: { reason: 'orphaned', since: s.orphanedSince, message: `orphaned${since}: no live instance declares it` } };
  }
  if (s.paused) {
    const at = s.pause?.at;
    if (at !== undefined && now - at >= PAUSED_LONG_MS) {
      const note = s.pause?.note ? ` ("${s.pause.note}")` : '';
      const hours = Math.floor((now - at) / HOUR_MS);
      return { overdue, silent: { reason: 'paused', since: at, message: `paused for ${hours}h+ by ${s.pause!.actor}${note}` } };
    }
    return { overdue };
  }
  if (overdue > 0) {
    const due = spec?.nextAfter(after) ?? undefined;
    const what = `${overdue} trigger${overdue === 1 ? '' : 's'} due since ${due === undefined ? '?' : new Date(due).toISOString()} not fired`;
    return hasLeader
      ? { overdue, silent: { reason: 'not-firing', since: due, message: what } }
      : { overdue, silent: { reason: 'no-leader', since: due, message: `${what}: no leader` } };
  }
  const withTask = marks.filter((m) => m.mark !== 'skipped').slice(-FAILING_RUN);
  if (withTask.length === FAILING_RUN && withTask.every((m) => m.mark === 'failed')) {
    return { overdue, silent: { reason: 'failing', message: `the last ${FAILING_RUN} fires' tasks failed` } };
  }
  return { overdue };
}

/** Whether a record stands for triggers that did not run: skipped, or retracted (enqueued ahead, taken back by a change). */
function notRun(r: FireRecord): boolean {
  return r.outcome.startsWith('skipped') || r.outcome === 'retracted';
}

/**
 * A schedule's records (newest first) with the older records of each retracted trigger dropped: its
 * newest record stands for it (`retracted`, or its fire under the new state when it was enqueued again).
 */
function settled(records: readonly FireRecord[]): readonly FireRecord[] {
  const retracted = new Set(records.filter((r) => r.outcome === 'retracted').map((r) => r.triggerAt));
  if (retracted.size === 0) return records;
  const seen = new Set<number>();
  return records.filter((r) => {
    if (!retracted.has(r.triggerAt)) return true;
    if (seen.has(r.triggerAt)) return false;
    seen.add(r.triggerAt);
    return true;
  });
}

/** The mark of a fire: skipped (or retracted), failed (its task is in the retry or dead set), late, or on time. */
function markOf(r: FireRecord, failed: boolean): FireMark {
  if (notRun(r)) return 'skipped';
  if (failed) return 'failed';
  if (r.outcome === 'backfill' || (r.outcome !== 'manual' && r.at - r.triggerAt > LATE_MS)) return 'late';
  return 'on-time';
}

/** The outcomes of a scheduler fire that count toward maxRuns (fire.lua's runs counter). */
const COUNTED: ReadonlySet<string> = new Set(['enqueued', 'buffered', 'superseding']);

/**
 * Where a schedule's expected triggers stop: `now`; for a paused schedule when it was paused (its
 * note's instant: the triggers of a pause are not expected); for a schedule ended by maxRuns the trigger
 * instant of its last counted fire (newest first in `records`; fire.lua advances lastFiredAt past
 * the triggers it refuses, which were never run). Undefined when that fire is no longer in the
 * records read (then the windows are bounded by maxRuns only, and not exact).
 */
function expectedUntil(s: ScheduleInfo, now: number, records: readonly FireRecord[]): number | undefined {
  if (s.paused && s.pause !== undefined) return Math.min(now, s.pause.at);
  if (s.ended !== 'max-runs') return now;
  const last = records.find((r) => COUNTED.has(r.outcome));
  return last === undefined ? undefined : Math.min(now, last.triggerAt);
}

/**
 * Expected and fired triggers of one window ending at `now`: the spec's instants in it (up to the
 * last run once maxRuns is reached), fired = those not after lastFiredAt and not skipped.
 */
function windowFires(
  s: ScheduleInfo,
  spec: ScheduleSpec,
  now: number,
  windowMs: number,
  records: readonly FireRecord[],
  complete: boolean,
): WindowFires {
  const start = Math.max(now - windowMs, s.registeredAt ?? -Infinity);
  const known = expectedUntil(s, now, records);
  const until = known ?? now;
  const expected = count(spec, start, until);
  const unfired = count(spec, Math.max(start, s.lastFiredAt ?? s.registeredAt ?? until), until);
  let skipped = 0;
  for (const r of records) if (notRun(r) && r.triggerAt > start && r.triggerAt <= until) skipped += r.count ?? 1;
  const oldest = records.length > 0 ? records[records.length - 1].triggerAt : Infinity;
  const fired = Math.max(0, expected - unfired - skipped);
  if (known === undefined && s.maxRuns !== undefined) {
    // the last run is not among the records read: at most maxRuns triggers ever ran
    return { expected: Math.min(expected, s.maxRuns), fired: Math.min(fired, s.maxRuns), exact: false };
  }
  return { expected, fired, exact: complete || oldest <= start };
}

/**
 * What each schedule did lately: its last {@link ACTIVITY_FIRES} fires with a mark each (on time,
 * late, skipped, failed: the sparkline), triggers expected by its spec vs fired over the last hour
 * and day, triggers overdue, and why it is silent (see {@link silenceOf}). Fires are counted from
 * the spec, `lastFiredAt` and the skips in the history; `exact` is false when the history read does
 * not reach back to the window's start (then skips before it are not known). Cost: an `LRANGE` of
 * 30 records per schedule (in parallel), then per target queue one pipeline of `ZSCORE` ×2 per fired
 * task; the windows are counted from the spec in memory (per-minute cron: at most 1,440 steps a day).
 */
export async function scheduleActivity(
  ctx: InspectorContext,
  infos: readonly ScheduleInfo[],
  hasLeader: (schedule: string) => boolean,
): Promise<ScheduleActivity[]> {
  const now = engineTime.now();
  const byQueue = new Map<string, ScheduleInfo[]>();
  for (const s of infos) {
    if (s.error) continue;
    const list = byQueue.get(s.queue);
    if (list) list.push(s);
    else byQueue.set(s.queue, [s]); // pushed, not copied: a copy of the list per schedule was quadratic (100,000 schedules: 58-77 s)
  }
  const records = new Map<string, FireRecord[]>();
  const failed = new Set<string>();
  await Promise.all(
    [...byQueue].map(async ([queue, list]) => {
      const k = ctx.keys(queue);
      const got = await Promise.all(list.map((s) => readFires(ctx.client, k, s.name, ACTIVITY_FIRES)));
      list.forEach((s, i) => records.set(s.name, got[i]));
      const ids = [...new Set(got.flat().flatMap((r) => (r.taskId && !notRun(r) ? [r.taskId] : [])))];
      if (ids.length === 0) return;
      const replies = await execReads(ctx.client, (p) => {
        for (const id of ids) p.zscore(k.retry, id).zscore(k.dead, id);
      });
      const scores = replies.map(([, v]) => v as string | null);
      ids.forEach((id, i) => {
        if (scores[2 * i] !== null || scores[2 * i + 1] !== null) failed.add(id);
      });
    }),
  );
  return infos.map((s) => {
    const read = records.get(s.name) ?? [];
    const recs = settled(read);
    const fires = recs
      .map((r) => ({
        triggerAt: r.triggerAt,
        outcome: r.outcome,
        count: r.count ?? 1,
        mark: markOf(r, r.taskId !== undefined && failed.has(r.taskId)),
      }))
      .reverse();
    const { overdue, silent } = silenceOf(s, now, hasLeader(s.name), fires);
    const spec = specOf(s);
    const complete = read.length < ACTIVITY_FIRES;
    const none: WindowFires = { expected: 0, fired: 0, exact: true };
    const a: ScheduleActivity = {
      name: s.name,
      fires,
      hour: spec ? windowFires(s, spec, now, HOUR_MS, recs, complete) : none,
      day: spec ? windowFires(s, spec, now, 24 * HOUR_MS, recs, complete) : none,
      overdue,
    };
    if (silent) a.silent = silent;
    return a;
  });
}
