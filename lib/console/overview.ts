// GET api/overview: what the console's poll (every 3 s) reads. Bounded in size whatever the registry:
// the schedules are counted, not shipped (the schedules page pages them through api/schedule-page),
// and the schedule warnings name at most OVERVIEW_NAMES schedules.
import { engineTime } from '../core/runtime/time.js';
import type { Inspector, ScheduleInfo } from '../core/admin/inspector.js';
import type { LeaderInfo } from '../core/admin/types.js';
import { silenceOf } from '../core/admin/schedule-activity.js';
import { shardLed, unservedQueues } from '../core/admin/fleet.js';
import type { ApiContext } from './api.js';

/**
 * The schedules' counts and warnings are read again once they are older than this many times the
 * read took (ms/ms): a registry read in 5 ms is read on every poll, 100,000 schedules (≈ 2 s) at
 * most every ≈ 10 s, however many pages poll. One read at a time per Inspector; callers share it,
 * and get the last count while a new one runs.
 */
export const COUNTS_REUSE = 4;

/**
 * A count older than this (ms), or than ({@link COUNTS_REUSE} + 1) × its read's duration if that is
 * longer, is not served while the new one runs: the poll waits for the new count (after an idle spell
 * the first poll would otherwise show a count minutes old: trial 9). docs/console.md: "≈ 10 s old".
 */
export const COUNTS_STALE_MAX_MS = 10_000;

/** Schedules named in the overview's warnings, at most: the orphaned ones in one line, then one line per silent one; the rest are counted. */
export const OVERVIEW_NAMES = 20;

/** The overview's schedules: counts by state and of the silent ones (those that should have fired and did not). */
export interface ScheduleCounts {
  total: number;
  paused: number;
  orphaned: number;
  /** Past their endAt or their maxRuns. */
  ended: number;
  /** Definitions that cannot be read. */
  invalid: number;
  silent: number;
  /** When they were counted (epoch ms): with a large registry, up to about {@link COUNTS_REUSE} + 1 times the read's duration ago. */
  countedAt: number;
}

type Warning = { queue?: string; schedule?: string; message: string };

/** The schedules' counts and warnings: orphaned (one line, ≤ {@link OVERVIEW_NAMES} names) and silent (≤ {@link OVERVIEW_NAMES} lines, then "and N more"). */
function scheduleWarnings(schedules: readonly ScheduleInfo[], leader: LeaderInfo | null): { counts: ScheduleCounts; warnings: Warning[] } {
  const counts: ScheduleCounts = {
    total: schedules.length,
    paused: 0,
    orphaned: 0,
    ended: 0,
    invalid: 0,
    silent: 0,
    countedAt: Date.now(),
  };
  const orphaned: string[] = [];
  const silent: Warning[] = [];
  const now = engineTime.now();
  for (const s of schedules) {
    if (s.paused) counts.paused++;
    if (s.ended) counts.ended++;
    if (s.error) counts.invalid++;
    if (s.orphaned) {
      counts.orphaned++;
      if (orphaned.length < OVERVIEW_NAMES) orphaned.push(s.name);
    }
    // from the spec and lastFired: no Redis call
    const { silent: why } = silenceOf(s, now, shardLed(leader, s.name));
    if (why && why.reason !== 'orphaned') {
      counts.silent++;
      if (silent.length < OVERVIEW_NAMES) silent.push({ schedule: s.name, message: `schedule ${s.name} is silent: ${why.message}` });
    }
  }
  const warnings: Warning[] = [];
  if (counts.orphaned) {
    const more = counts.orphaned - orphaned.length;
    warnings.push({
      message: `orphaned schedules (no live instance declares them): ${orphaned.join(', ')}${more ? ` and ${more} more` : ''}`,
    });
  }
  warnings.push(...silent);
  if (counts.silent > silent.length) {
    warnings.push({ message: `and ${counts.silent - silent.length} more silent schedules (the schedules page shows each one's activity)` });
  }
  return { counts, warnings };
}

type Counted = { counts: ScheduleCounts; warnings: Warning[] };

/** A count of the schedules: the read (in flight or done), when it finished and took (ms), and the last count done before it. */
interface CountRead {
  read: Promise<Counted>;
  doneAt?: number;
  tookMs?: number;
  before?: Promise<Counted>;
}

/** The last schedule count per Inspector. */
const lastCount = new WeakMap<Inspector, CountRead>();

/**
 * The schedules' counts and warnings. A count older than {@link COUNTS_REUSE} × its read's duration
 * starts a new read and is answered meanwhile (stale while the new one runs), unless it is older than
 * {@link COUNTS_STALE_MAX_MS} (or (COUNTS_REUSE + 1) reads): then the poll waits for the new count.
 */
function countedSchedules(i: Inspector): Promise<Counted> {
  const last = lastCount.get(i);
  if (last?.doneAt === undefined && last) return last.before ?? last.read; // a read in flight
  if (last && Date.now() - last.doneAt! < COUNTS_REUSE * last.tookMs!) return last.read;
  const startedAt = Date.now();
  // the last count, served while this one runs, unless it is too old to pass for the present
  const fresh = last !== undefined && Date.now() - last.doneAt! <= Math.max(COUNTS_STALE_MAX_MS, (COUNTS_REUSE + 1) * last.tookMs!);
  const entry: CountRead = {
    read: Promise.all([i.schedules(0), i.leader()]).then(([schedules, leader]) => scheduleWarnings(schedules, leader)),
    before: fresh ? last.read : undefined,
  };
  lastCount.set(i, entry);
  entry.read.then(
    () => {
      entry.doneAt = Date.now();
      entry.tookMs = entry.doneAt - startedAt;
      entry.before = undefined;
    },
    () => lastCount.get(i) === entry && lastCount.delete(i), // a failed read is not reused (the next poll reads again)
  );
  return entry.before ?? entry.read;
}

/**
 * GET overview: every queue, leader, servers, Redis, the schedules' counts and the warnings. Its size
 * does not grow with the schedules (counts, ≤ {@link OVERVIEW_NAMES} named in warnings). Counting
 * reads every schedule's definition and last fire (no next runs computed), at most every
 * {@link COUNTS_REUSE} × that read's duration (see there).
 */
export async function overview(ctx: ApiContext): Promise<unknown> {
  const i = ctx.inspector;
  const [queues, leader, servers, redis, scheduled, instances] = await Promise.all([
    i.queues(),
    i.leader(),
    i.servers(),
    i.redisInfo(),
    countedSchedules(i),
    i.instances(),
  ]);
  const warnings: Warning[] = [];
  if (redis.warning) warnings.push({ message: redis.warning });
  for (const q of unservedQueues(queues, servers)) warnings.push({ queue: q, message: `no workers serve queue "${q}"` });
  warnings.push(...scheduled.warnings);
  return {
    namespace: i.namespace,
    readOnly: ctx.readOnly,
    can: ctx.can,
    now: Date.now(),
    queues,
    leader,
    servers,
    redis,
    schedules: scheduled.counts,
    instances,
    warnings,
  };
}
