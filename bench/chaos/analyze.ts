// Turns a chaos run's records (from the records Redis) and the rig's own log of faults into the
// outcomes: triggers expected / once / missing / duplicated / early, tasks enqueued / done / lost /
// duplicated (with a cause for each duplicate), hand-over times, crashes and log floods.
import { parseSpec, triggerKey, triggersBetween } from '../../lib/core/index.js';
import { FLEET, SCHEDULES, type ChaosRecord } from './common.js';
import type { Crash, Fault, OutputStats } from './fleet.js';
import type { RedisStop } from './redis.js';
import { judgeLimits, type LimitOutcome } from './limits.js';
import { dueOf, judgeRuntime, type RuntimeOutcome, type RuntimeSchedules } from './runtime.js';

/** A handler start counts as early only when it is before its instant by more than this, ms (see the README). */
export const EARLY_TOLERANCE_MS = 1;

/** The longest wait between two attempts of a failed ack (lib/core/worker/ack-batcher.ts RETRY_MS): a SIGKILL this soon after Redis answers can still take the ack with it. */
const ACK_RETRY_MAX_MS = 2000;

/** A Redis restart as it happened (local epoch ms): stop sent, process gone, answering again. */
export interface RedisRestart {
  how: RedisStop;
  at: number;
  downAt: number;
  upAt: number;
}

export interface RunLog {
  records: ChaosRecord[];
  /** The steady window (local epoch ms): every instant in [start, end] of every schedule is expected. */
  window: { start: number; end: number };
  faults: Fault[];
  crashes: Crash[];
  restarts: RedisRestart[];
  outputs: OutputStats[];
  floodLinesPerSecond: number;
  /** Writes Redis acknowledged this long before a SIGKILL of Redis may be lost with the AOF (0 after SHUTDOWN/SIGTERM). */
  aofLossMs: number;
  /** The runtime schedules (bulk API) and what was done to them; absent with `--runtime-schedules 0`. */
  runtime?: RuntimeSchedules;
}

export type DupCause = 'sigstop' | 'outage' | 'sigkill' | 'clockstep' | 'partition' | 'redis' | 'other';
export type EarlyNear = 'redis' | 'start' | 'sigcont' | 'clockstep' | 'partition' | 'other';

export interface Outcome {
  triggers: { expected: number; once: number; missing: number; duplicated: number; exempt: number; missingIds: string[] };
  dupTriggerCauses: Record<DupCause, number>;
  /** Trigger tasks enqueued more than once (two fires of one instant), and runs after a crash. */
  firedTwice: number;
  rerunTriggers: number;
  /**
   * `near`: early starts within 10 s after a Redis restart, after the process's own start, after its
   * SIGCONT, during or within 10 s after a step of its wall clock or a partition of its connection, or none of these.
   */
  early: {
    starts: number;
    triggers: number;
    minMs: number;
    maxMs: number;
    near: Record<EarlyNear, number>;
    unmeasured: number;
    samples: string[];
  };
  lagMs: number[];
  tasks: {
    enqueued: number;
    enqueueFailed: number;
    done: number;
    lost: number;
    exempt: number;
    duplicated: number;
    rerun: number;
    unrecorded: number;
  };
  dupTaskCauses: Record<DupCause, number>;
  lostIds: string[];
  /** Up to 50 duplicates with their runs (instance, start and end, ms after the window start), for the JSON. */
  dupDetails: { id: string; cause: DupCause; runs: string[] }[];
  handovers: { kind: string; ms: number | null; name: string }[];
  floods: { name: string; seconds: number; maxPerSecond: number; lines: number; top: string }[];
  maxLinesPerSecond: { name: string; n: number };
  /** The limited queue: never over its concurrency, nor one group over its groupConcurrency (limits.ts). */
  limits: LimitOutcome;
  /** The runtime schedules (runtime.ts), when the run had any. */
  runtime?: RuntimeOutcome;
  failures: string[];
}

interface Runs {
  starts: Extract<ChaosRecord, { k: 'start' }>[];
  dones: Extract<ChaosRecord, { k: 'done' }>[];
}

function group(records: ChaosRecord[]): Map<string, Runs> {
  const byId = new Map<string, Runs>();
  const get = (id: string) => {
    let r = byId.get(id);
    if (!r) byId.set(id, (r = { starts: [], dones: [] }));
    return r;
  };
  for (const r of records) {
    if (r.k === 'start') get(r.id).starts.push(r);
    else if (r.k === 'done') get(r.id).dones.push(r);
  }
  return byId;
}

/**
 * Why a task (or trigger) ran to the end more than once, first match wins:
 * - `sigstop`: one of its runs was on a process SIGSTOPped longer than the visibility timeout
 *   between `from` (enqueue, or 2 s before the instant) and 1 s after that run's end (a run that
 *   finished just before the stop, its ack not yet written) — the entry was reclaimed by another
 *   worker while the stopped one still held it;
 * - `outage`: one of its runs ended while Redis was down (from 100 ms before the stop was sent —
 *   an ack in flight — to the restarted Redis answering), so its ack could not be written, and
 *   either the outage outlasted the visibility timeout (the entry was idle past it) or that process
 *   was SIGKILLed before Redis answered or within the ack's retry backoff after (≤ 2 s: the ack died
 *   with it): another worker takes the entry —
 *   documented at-least-once (README, Guarantees 4), not a failure;
 * - `sigkill`: a process that had finished it was SIGKILLed within 1 s after (before its ack);
 * - `clockstep` / `partition`: one of its runs was on a process during a step of its wall clock or a
 *   partition of its connection, or within 1 s after it ended;
 * - `redis`: one of its records (or its enqueue) falls within 1 s before to 5 s after a Redis restart;
 * - `other`.
 */
function dupCause(runs: Runs, from: number, log: RunLog): DupCause {
  const names = new Set([...runs.starts, ...runs.dones].map((r) => r.i));
  for (const name of names) {
    const end = Math.max(...[...runs.starts, ...runs.dones].filter((r) => r.i === name).map((r) => r.t));
    const hit = log.faults.some((f) => {
      const cont = f.contAt ?? Infinity;
      return f.kind === 'sigstop' && f.name === name && cont - f.at > FLEET.visibilityTimeoutMs && f.at <= end + 1000 && cont >= from;
    });
    if (hit) return 'sigstop';
  }
  // a run that ended in a Redis outage (from 100 ms before the stop: an ack in flight) could not write its ack
  const inOutage = (d: { t: number }, x: RedisRestart) => d.t >= x.at - 100 && d.t <= x.upAt;
  const ackLost = (d: { i: string; t: number }, x: RedisRestart) =>
    x.upAt - x.at > FLEET.visibilityTimeoutMs ||
    log.faults.some((f) => f.kind === 'sigkill' && f.name === d.i && f.at >= d.t && f.at <= x.upAt + ACK_RETRY_MAX_MS);
  if (runs.dones.some((d) => log.restarts.some((x) => inOutage(d, x) && ackLost(d, x)))) return 'outage';
  for (const d of runs.dones) {
    if (log.faults.some((f) => f.kind === 'sigkill' && f.name === d.i && f.at >= d.t && f.at <= d.t + 1000)) return 'sigkill';
  }
  for (const kind of ['clockstep', 'partition'] as const) {
    const during = (r: { i: string; t: number }) => log.faults.some((f) => f.kind === kind && f.name === r.i && inTimed(f, r.t, 1000));
    if ([...runs.starts, ...runs.dones].some(during)) return kind;
  }
  const times = [from, ...runs.starts.map((r) => r.t), ...runs.dones.map((r) => r.t)];
  if (log.restarts.some((x) => times.some((t) => t >= x.at - 1000 && t <= x.upAt + 5000))) return 'redis';
  return 'other';
}

/** True when `t` falls in a clock step or partition `f`, or within `afterMs` after it ended. */
function inTimed(f: Fault, t: number, afterMs: number): boolean {
  return t >= f.at && t <= (f.endAt ?? Infinity) + afterMs;
}

/**
 * True when `t` falls where a SIGKILL of Redis may have taken acknowledged writes with it:
 * [kill − aofLossMs, kill + afterMs] (a trigger is enqueued up to 1 s before its instant: afterMs 1000).
 */
function inAofLoss(t: number, log: RunLog, afterMs = 0): boolean {
  return log.aofLossMs > 0 && log.restarts.some((x) => x.how === 'sigkill' && t >= x.at - log.aofLossMs && t <= x.at + afterMs);
}

/** Every instant in [start, end] (epoch ms) of every schedule, with its trigger task id. */
export function expectedTriggers(window: { start: number; end: number }): { id: string; tr: number }[] {
  const expected: { id: string; tr: number }[] = [];
  for (const s of SCHEDULES) {
    const spec = parseSpec(s.spec as string, { schedule: s.name });
    for (const tr of triggersBetween(spec, window.start - 1, window.end, 1e6).triggers) expected.push({ id: triggerKey(s.name, tr), tr });
  }
  return expected;
}

export function analyze(log: RunLog): Outcome {
  const byId = group(log.records);
  const failures: string[] = [];
  const dupDetails: Outcome['dupDetails'] = [];
  const detail = (id: string, cause: DupCause, runs: Runs) => {
    const rel = (t: number) => Math.round(t - log.window.start);
    const list = [...runs.starts.map((r) => `start ${r.i} ${rel(r.t)}`), ...runs.dones.map((r) => `done ${r.i} ${rel(r.t)}`)];
    if (dupDetails.length < 50) dupDetails.push({ id, cause, runs: list });
    return cause;
  };

  // triggers: every instant of every schedule in the steady window
  const expected = expectedTriggers(log.window);
  const fired = new Map<string, number>();
  for (const r of log.records) if (r.k === 'fired') fired.set(r.id, (fired.get(r.id) ?? 0) + 1);
  const triggers: Outcome['triggers'] = { expected: expected.length, once: 0, missing: 0, duplicated: 0, exempt: 0, missingIds: [] };
  const dupTriggerCauses: Record<DupCause, number> = { sigstop: 0, outage: 0, sigkill: 0, clockstep: 0, partition: 0, redis: 0, other: 0 };
  const lagMs: number[] = [];
  let firedTwice = 0;
  let rerunTriggers = 0;
  for (const { id, tr } of expected) {
    const runs = byId.get(id) ?? { starts: [], dones: [] };
    const n = runs.dones.length;
    if ((fired.get(id) ?? 0) > 1) firedTwice++;
    if (runs.starts.length > Math.max(1, n)) rerunTriggers++;
    const first = runs.starts.sort((a, b) => a.t - b.t)[0];
    if (first?.rt !== undefined) lagMs.push(first.rt - tr);
    if (n !== 1 && inAofLoss(tr, log, 1000)) triggers.exempt++;
    else if (n === 1) triggers.once++;
    else if (n === 0) {
      triggers.missing++;
      triggers.missingIds.push(id);
    } else {
      triggers.duplicated++;
      dupTriggerCauses[detail(id, dupCause(runs, tr - 2000, log), runs)]++;
    }
  }

  // early starts: every trigger handler start of the run (in the window or not), by Redis time
  const near: Record<EarlyNear, number> = { redis: 0, start: 0, sigcont: 0, clockstep: 0, partition: 0, other: 0 };
  const early = { starts: 0, triggers: 0, minMs: Infinity, maxMs: 0, near, unmeasured: 0, samples: [] as string[] };
  const earlyIds = new Set<string>();
  const upAt = new Map<string, number>();
  for (const r of log.records) if (r.k === 'up') upAt.set(r.i, r.t);
  for (const r of log.records) {
    if (r.k !== 'start' || r.q !== 't' || r.tr === undefined) continue;
    if (r.rt === undefined || !Number.isFinite(r.eb)) {
      early.unmeasured++;
      continue;
    }
    // before the (jitter-shifted) instant even at the latest Redis time the estimate allows
    const by = dueOf(log.runtime, r.id, r.tr) - (r.rt + r.eb!);
    if (by <= EARLY_TOLERANCE_MS) continue;
    early.starts++;
    earlyIds.add(r.id);
    early.minMs = Math.min(early.minMs, by);
    early.maxMs = Math.max(early.maxMs, by);
    const restart = log.restarts.find((x) => r.t >= x.at && r.t <= x.upAt + 10_000);
    const up = upAt.get(r.i) ?? -Infinity;
    const cont = log.faults.find((f) => f.name === r.i && f.contAt !== undefined && r.t >= f.contAt && r.t <= f.contAt + 10_000);
    const timed = log.faults.find((f) => (f.kind === 'clockstep' || f.kind === 'partition') && f.name === r.i && inTimed(f, r.t, 10_000));
    let where: string;
    if (restart) {
      near.redis++;
      where = `${Math.round(r.t - restart.upAt)} ms after Redis was back`;
    } else if (r.t <= up + 10_000) {
      near.start++;
      where = `${Math.round(r.t - up)} ms after the process started`;
    } else if (cont) {
      near.sigcont++;
      where = `${Math.round(r.t - cont.contAt!)} ms after its SIGCONT`;
    } else if (timed) {
      near[timed.kind as 'clockstep' | 'partition']++;
      const what = timed.kind === 'clockstep' ? `its clock step of ${timed.stepMs} ms` : 'its partition';
      where = `${Math.round(r.t - timed.at)} ms after ${what} began (${Math.round((timed.endAt ?? r.t) - timed.at)} ms long)`;
    } else {
      near.other++;
      where = 'no Redis restart, process start, SIGCONT, clock step or partition in the 10 s before';
    }
    if (early.samples.length < 8) early.samples.push(`${r.id} on ${r.i}: ${by.toFixed(1)} ms early (${where})`);
  }
  early.triggers = earlyIds.size;

  // tasks: every acknowledged enqueue must be done at least once
  const enq = new Map<string, number>();
  let enqueueFailed = 0;
  for (const r of log.records) {
    if (r.k === 'enq') enq.set(r.id, r.t);
    if (r.k === 'enqfail') enqueueFailed++;
  }
  const tasks = { enqueued: enq.size, enqueueFailed, done: 0, lost: 0, exempt: 0, duplicated: 0, rerun: 0, unrecorded: 0 };
  const dupTaskCauses: Record<DupCause, number> = { sigstop: 0, outage: 0, sigkill: 0, clockstep: 0, partition: 0, redis: 0, other: 0 };
  const lostIds: string[] = [];
  for (const [id, t] of enq) {
    const runs = byId.get(id) ?? { starts: [], dones: [] };
    const n = runs.dones.length;
    if (n >= 1) tasks.done++;
    if (runs.starts.length > Math.max(1, n)) tasks.rerun++;
    if (n === 0 && inAofLoss(t, log)) tasks.exempt++;
    else if (n === 0) {
      tasks.lost++;
      lostIds.push(id);
    } else if (n > 1) {
      if (inAofLoss(runs.dones[0].t, log)) tasks.exempt++;
      else {
        tasks.duplicated++;
        dupTaskCauses[detail(id, dupCause(runs, t, log), runs)]++;
      }
    }
  }
  for (const [id, runs] of byId) if (runs.dones[0]?.q === 'd' && !enq.has(id)) tasks.unrecorded++;

  // hand-overs: from a fault of the leader of shard 0 (the fleet's faults aim at it) to the next acquisition of it by another process
  const acquired = log.records
    .filter((r): r is Extract<ChaosRecord, { k: 'lead' }> => r.k === 'lead' && r.a && (r.sh === undefined || r.sh.includes(0)))
    .sort((a, b) => a.t - b.t);
  const handovers = log.faults
    .filter((f) => f.wasLeader)
    .map((f) => {
      const next = acquired.find((r) => r.t > f.at && r.i !== f.name);
      return { kind: f.kind, ms: next ? next.t - f.at : null, name: f.name };
    });

  // log floods: seconds in which one process wrote more than the threshold of lines
  const floods: Outcome['floods'] = [];
  let maxLinesPerSecond = { name: '—', n: 0 };
  for (const o of log.outputs) {
    let seconds = 0;
    let max = 0;
    for (const n of o.perSecond.values()) {
      if (n > log.floodLinesPerSecond) seconds++;
      max = Math.max(max, n);
    }
    if (max > maxLinesPerSecond.n) maxLinesPerSecond = { name: o.name, n: max };
    if (seconds === 0) continue;
    const top = [...o.messages.entries()].sort((a, b) => b[1] - a[1])[0];
    floods.push({ name: o.name, seconds, maxPerSecond: max, lines: o.lines, top: top ? `${top[1]}× ${top[0]}` : '' });
  }

  if (triggers.missing) failures.push(`${triggers.missing} trigger(s) missing`);
  // the documented at-least-once causes (README, Guarantees 4) are shown, not failed: a stall past the
  // visibility timeout, an ack lost to a Redis outage
  const dupTriggers = triggers.duplicated - dupTriggerCauses.outage - dupTriggerCauses.sigstop;
  if (dupTriggers) failures.push(`${dupTriggers} trigger(s) duplicated`);
  if (early.starts) failures.push(`${early.starts} early trigger start(s)`);
  if (tasks.lost) failures.push(`${tasks.lost} task(s) lost`);
  const limits = judgeLimits(log);
  if (limits.over.length) failures.push(`the limited queue ran over its limits (${limits.over[0]})`);
  if (limits.starts === 0) failures.push('no task of the limited queue ran');
  const runtime = log.runtime ? judgeRuntime(log.runtime, log.window, log.records, (id) => byId.get(id)?.dones.length ?? 0) : undefined;
  if (runtime) {
    const causes: Record<DupCause, number> = { sigstop: 0, outage: 0, sigkill: 0, clockstep: 0, partition: 0, redis: 0, other: 0 };
    for (const d of runtime.duplicates) causes[detail(d.id, dupCause(byId.get(d.id)!, d.tr - 2000, log), byId.get(d.id)!)]++;
    runtime.dupCauses = causes;
    const u = runtime.unexpected;
    const unexpected = u.afterRemoval + u.oldSpec + u.overMaxRuns + u.outOfBounds + u.other;
    if (runtime.missing) failures.push(`${runtime.missing} runtime-schedule trigger(s) missing`);
    const dups = runtime.duplicated - causes.outage - causes.sigstop;
    if (dups) failures.push(`${dups} runtime-schedule trigger(s) duplicated`);
    if (unexpected) failures.push(`${unexpected} runtime-schedule trigger(s) that should not have fired`);
    if (runtime.overMaxRuns) failures.push(`${runtime.overMaxRuns} runtime schedule(s) over their maxRuns`);
    if (runtime.stalePayload) failures.push(`${runtime.stalePayload} runtime-schedule start(s) with a stale payload`);
  }
  return {
    triggers,
    dupTriggerCauses,
    firedTwice,
    rerunTriggers,
    early,
    lagMs,
    tasks,
    dupTaskCauses,
    lostIds,
    dupDetails,
    handovers,
    floods,
    maxLinesPerSecond,
    limits,
    runtime,
    failures,
  };
}
