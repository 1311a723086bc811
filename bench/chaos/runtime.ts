// Runtime schedules of the chaos run (issue 25): N schedules created by the rig through the bulk
// API (`Scheduler.addSchedules`) before the steady window, changed by two `upsertSchedules` and
// thinned by one `removeSchedules` during it, then judged trigger by trigger like the code-declared
// ones. Seeded (mulberry32 of the run's seed) apart from the instants the calls resolve.
//
// What is expected of one schedule (instants of the window [start, end] only, like the code ones):
// - a version (a definition as stored) holds from its call's resolve; the first version from
//   before the window. A changed spec's instants in (call start, call resolve] may or may not
//   fire (its changedAt is in there); those after the resolve must, once.
// - a version's instants up to the next call's start (a change or the removal) must fire once
//   when a scheduler recorded firing them, or when they lie ≥ 10 s before that call (a gap with no
//   leader just before a change or a removal is not caught up afterwards: plan.ts rule 1); those in
//   (next call start, next call resolve + 1 s] may fire (enqueued ahead, ≤ 1 s); later ones must not.
// - startAt / endAt clip every version; maxRuns keeps the first maxRuns instants ≥ startAt.
// - a start is early against its shifted instant: triggerAt + jitterShiftMs(name, triggerAt, jitter).
// - a trigger that started after (version change + 1 s) carries that version's payload `v` or a later one.
import type { ScheduleDefinition } from '../../lib/core/index.js';
import { specOf, triggerKey } from '../../lib/core/scheduler/definition.js';
import { jitterShiftMs } from '../../lib/core/scheduler/schedule-bounds.js';
import { nextTriggers, triggersBetween } from '../../lib/core/scheduler/spec.js';
import { FLEET, type ChaosRecord } from './common.js';
import { prng } from './plan.js';

type Spec = ScheduleDefinition['spec'];

/** One definition of a runtime schedule as stored from `[at, end]` (the call's start and resolve, local epoch ms). */
export interface RuntimeVersion {
  spec: Spec;
  /** Payload `v` of this version. */
  v: number;
  at: number;
  end: number;
}

export interface RuntimeSchedule {
  name: string;
  jitter?: number;
  startAt?: number;
  endAt?: number;
  maxRuns?: number;
  versions: RuntimeVersion[];
  removed?: { at: number; end: number };
}

/** The largest jitter of a runtime schedule, ms. */
export const MAX_JITTER_MS = 10_000;

/** Every-periods (s) and 5-field crons with their weights: ≈ N × 0.06 triggers/s on average, every one due at each whole minute. */
const SPECS: { spec: Spec; w: number; periodMs: number }[] = [
  ...(
    [
      [1, 0.5],
      [2, 1],
      [5, 5],
      [10, 15],
      [15, 10],
      [20, 15],
      [30, 18],
      [60, 15],
    ] as const
  ).map(([s, w]) => ({ spec: { every: s * 1000 }, w, periodMs: s * 1000 })),
  { spec: '* * * * *', w: 12, periodMs: 60_000 },
  { spec: '*/2 * * * *', w: 8.5, periodMs: 120_000 },
];

function pick(rand: () => number, minPeriodMs = 0): (typeof SPECS)[number] {
  const pool = SPECS.filter((s) => s.periodMs >= minPeriodMs);
  let x = rand() * pool.reduce((a, s) => a + s.w, 0);
  for (const s of pool) if ((x -= s.w) < 0) return s;
  return pool[pool.length - 1];
}

/** The schedules and the seeded acts on them; `define` gives a schedule's current definition for a bulk call. */
export class RuntimeSchedules {
  readonly list: RuntimeSchedule[] = [];
  private readonly rand: () => number;
  private names?: Map<string, RuntimeSchedule>;

  /** The schedules by name. */
  get byName(): Map<string, RuntimeSchedule> {
    return (this.names ??= new Map(this.list.map((r) => [r.name, r])));
  }

  /** `windowStart`: the start of the steady window (maxRuns schedules start there: their count is exact). */
  constructor(n: number, seed: number, windowStart: number, seconds: number) {
    this.rand = prng(seed * 7919 + 25);
    for (let i = 0; i < n; i++) {
      const s = pick(this.rand);
      const r: RuntimeSchedule = { name: `rt-${i}`, versions: [{ spec: s.spec, v: 0, at: -Infinity, end: -Infinity }] };
      const u = this.rand();
      // a third jittered (less than the period: always less than the gap to the next trigger), at most
      // MAX_JITTER_MS (the rig's drain waits that much longer for the window's last shifted starts)
      if (this.rand() < 1 / 3 && s.periodMs >= 2000) r.jitter = 1 + Math.floor(this.rand() * (Math.min(s.periodMs, MAX_JITTER_MS) - 1));
      if (u < 0.1) {
        r.maxRuns = 1 + Math.floor(this.rand() * 5);
        r.startAt = windowStart;
      } else if (u < 0.15) r.endAt = windowStart + (2 + Math.floor(this.rand() * (seconds - 2))) * 1000;
      this.list.push(r);
    }
  }

  define(r: RuntimeSchedule): ScheduleDefinition {
    const v = r.versions[r.versions.length - 1];
    return {
      name: r.name,
      spec: v.spec,
      queue: FLEET.triggerQueue,
      type: FLEET.triggerType,
      payload: { v: v.v },
      ...(r.jitter ? { jitter: r.jitter } : {}),
      ...(r.startAt !== undefined ? { startAt: r.startAt } : {}),
      ...(r.endAt !== undefined ? { endAt: r.endAt } : {}),
      ...(r.maxRuns ? { maxRuns: r.maxRuns } : {}),
    };
  }

  private live(): RuntimeSchedule[] {
    return this.list.filter((r) => !r.removed);
  }

  /**
   * An upsert: a share `specShare` of the live schedules without maxRuns get another spec (its period
   * above their jitter), a share `payloadShare` a new payload only. Returns the definitions and a
   * `commit(at, end)` that records the call's start and resolve once it succeeded.
   */
  change(specShare: number, payloadShare: number): { defs: ScheduleDefinition[]; commit(at: number, end: number): void } {
    const picked: { r: RuntimeSchedule; spec: Spec }[] = [];
    for (const r of this.live()) {
      const x = this.rand();
      const cur = r.versions[r.versions.length - 1];
      if (x < specShare && !r.maxRuns) picked.push({ r, spec: pick(this.rand, (r.jitter ?? 0) + 1000).spec });
      else if (x < specShare + payloadShare) picked.push({ r, spec: cur.spec });
    }
    const next = picked.map(({ r, spec }) => {
      const cur = r.versions[r.versions.length - 1];
      return { r, version: { spec, v: cur.v + 1, at: 0, end: 0 } };
    });
    const defs = next.map(({ r, version }) => ({ ...this.define(r), spec: version.spec, payload: { v: version.v } }));
    return {
      defs,
      commit: (at, end) => {
        for (const { r, version } of next) r.versions.push({ ...version, at, end });
      },
    };
  }

  /** A removal of a share of the live schedules: their names and `commit(at, end)`. */
  remove(share: number): { names: string[]; commit(at: number, end: number): void } {
    const picked = this.live().filter(() => this.rand() < share);
    return {
      names: picked.map((r) => r.name),
      commit: (at, end) => {
        for (const r of picked) r.removed = { at, end };
      },
    };
  }

  counts(): {
    schedules: number;
    jittered: number;
    maxRuns: number;
    endAt: number;
    specChanges: number;
    payloadChanges: number;
    removed: number;
  } {
    let specChanges = 0;
    let payloadChanges = 0;
    for (const r of this.list) {
      for (let k = 1; k < r.versions.length; k++) {
        if (JSON.stringify(r.versions[k].spec) !== JSON.stringify(r.versions[k - 1].spec)) specChanges++;
        else payloadChanges++;
      }
    }
    return {
      schedules: this.list.length,
      jittered: this.list.filter((r) => r.jitter).length,
      maxRuns: this.list.filter((r) => r.maxRuns).length,
      endAt: this.list.filter((r) => r.endAt !== undefined).length,
      specChanges,
      payloadChanges,
      removed: this.list.filter((r) => r.removed).length,
    };
  }
}

/** What the analyzer needs of one instant of a runtime schedule. */
interface Instant {
  id: string;
  tr: number;
  /** Must run once (else it may, or must not: see `allowed`). */
  required: boolean;
}

/** The schedule's own filter: startAt (inclusive), endAt (exclusive). */
function inBounds(r: RuntimeSchedule, tr: number): boolean {
  return (r.startAt === undefined || tr >= r.startAt) && (r.endAt === undefined || tr < r.endAt);
}

/**
 * Every instant of the window the schedule may fire (`allowed`, by task id), and which of them it
 * must (`required`), from its versions and the `fired` records (see the file's head).
 */
export function instantsOf(r: RuntimeSchedule, window: { start: number; end: number }, firedIds: Set<string>): Map<string, Instant> {
  const out = new Map<string, Instant>();
  const add = (tr: number, required: boolean) => {
    const id = triggerKey(r.name, tr);
    const had = out.get(id);
    if (!had) out.set(id, { id, tr, required });
    else had.required ||= required;
  };
  for (let k = 0; k < r.versions.length; k++) {
    const v = r.versions[k];
    const nextCall = k + 1 < r.versions.length ? r.versions[k + 1] : r.removed;
    const spec = specOf({ name: r.name, spec: v.spec }, 'UTC');
    const from = Math.max(window.start - 1, v.at === -Infinity ? -Infinity : v.at);
    const until = Math.min(window.end, nextCall ? nextCall.end + 1000 : window.end);
    if (until <= from) continue;
    let trs = triggersBetween(spec, from, until, 1e6).triggers.filter((tr) => inBounds(r, tr));
    if (r.maxRuns) {
      // the first maxRuns instants ≥ startAt (the window's start): the count is never changed by the run's upserts
      const keep = new Set(nextTriggers(spec, (r.startAt ?? window.start) - 1, r.maxRuns));
      trs = trs.filter((tr) => keep.has(tr));
    }
    for (const tr of trs) {
      const afterChange = tr > v.end; // past the version's ambiguous start
      const beforeNext = !nextCall || tr <= nextCall.at;
      const settled = !nextCall || tr <= nextCall.at - 10_000 || firedIds.has(triggerKey(r.name, tr));
      add(tr, afterChange && beforeNext && settled && tr >= window.start);
    }
  }
  return out;
}

export interface RuntimeOutcome {
  counts: ReturnType<RuntimeSchedules['counts']>;
  expected: number;
  once: number;
  missing: number;
  duplicated: number;
  /** Finished runs of instants the schedule may not fire in the window, by why. */
  unexpected: { afterRemoval: number; oldSpec: number; overMaxRuns: number; outOfBounds: number; other: number };
  /** Starts after a change (+1 s) with an older payload. */
  stalePayload: number;
  /** Instants the run did not require but that fired (ambiguous around a change, or fired before one). */
  optionalRan: number;
  missingIds: string[];
  unexpectedIds: string[];
  /** Every duplicated instant (the analyzer gives each a cause, as for the code schedules). */
  duplicates: { id: string; tr: number }[];
  /** The duplicates' causes (filled by analyze.ts). */
  dupCauses: Record<string, number>;
  /** maxRuns schedules that started more distinct triggers than their maxRuns (over the whole run). */
  overMaxRuns: number;
  /** `fired` records beyond the first of a trigger (a trigger enqueued twice: its guarantee is exactly once). */
  firedTwice: number;
  /** Trigger starts of runtime schedules, and of jittered ones. */
  starts: number;
  jitteredStarts: number;
}

/** The name of a trigger task id `<schedule>:<unix seconds>`. */
export function scheduleOf(id: string): string {
  return id.slice(0, id.lastIndexOf(':'));
}

/** The required ids (for the rig's drain), given the fired ids so far. */
export function requiredIds(rt: RuntimeSchedules, window: { start: number; end: number }, firedIds: Set<string>): string[] {
  const ids: string[] = [];
  for (const r of rt.list) for (const x of instantsOf(r, window, firedIds).values()) if (x.required) ids.push(x.id);
  return ids;
}

/** The shifted instant a trigger of `id` may start at (its nominal instant for code schedules). */
export function dueOf(rt: RuntimeSchedules | undefined, id: string, tr: number): number {
  const r = rt?.byName.get(scheduleOf(id));
  return r?.jitter ? tr + jitterShiftMs(r.name, tr, r.jitter) : tr;
}

/** Judges the runtime schedules on the records (see the file's head). `dones`/`starts` by id. */
export function judgeRuntime(
  rt: RuntimeSchedules,
  window: { start: number; end: number },
  records: ChaosRecord[],
  dones: (id: string) => number,
): RuntimeOutcome {
  const firedIds = new Set<string>();
  let firedTwice = 0;
  for (const x of records) {
    if (x.k !== 'fired' || !rt.byName.has(scheduleOf(x.id))) continue;
    if (firedIds.has(x.id)) firedTwice++;
    firedIds.add(x.id);
  }
  const o: RuntimeOutcome = {
    counts: rt.counts(),
    expected: 0,
    once: 0,
    missing: 0,
    duplicated: 0,
    unexpected: { afterRemoval: 0, oldSpec: 0, overMaxRuns: 0, outOfBounds: 0, other: 0 },
    stalePayload: 0,
    optionalRan: 0,
    missingIds: [],
    unexpectedIds: [],
    duplicates: [],
    dupCauses: {},
    overMaxRuns: 0,
    firedTwice,
    starts: 0,
    jitteredStarts: 0,
  };
  const all = new Map<string, Map<string, Instant>>();
  for (const r of rt.list) {
    const inst = instantsOf(r, window, firedIds);
    all.set(r.name, inst);
    for (const x of inst.values()) {
      const n = dones(x.id);
      if (n > 1) {
        o.duplicated++;
        o.duplicates.push({ id: x.id, tr: x.tr });
      }
      if (!x.required) {
        if (n > 0) o.optionalRan++;
        continue;
      }
      o.expected++;
      if (n === 1) o.once++;
      else if (n === 0) {
        o.missing++;
        if (o.missingIds.length < 8) o.missingIds.push(x.id);
      }
    }
  }
  // every finished trigger of a runtime schedule in the window must be one it may fire
  const seen = new Set<string>();
  const started = new Map<string, Set<string>>();
  for (const x of records) {
    if (x.k !== 'start' || x.q !== 't' || x.tr === undefined) continue;
    const r = rt.byName.get(scheduleOf(x.id));
    if (!r) continue;
    o.starts++;
    if (r.jitter) o.jitteredStarts++;
    if (r.maxRuns) {
      const ids = started.get(r.name) ?? new Set<string>();
      started.set(r.name, ids.add(x.id));
    }
    const vs = r.versions.filter((v) => v.end + 1000 < x.tr!);
    const min = vs.length ? vs[vs.length - 1].v : 0;
    if ((x.pv ?? 0) < min) o.stalePayload++;
    if (x.tr < window.start || x.tr > window.end || seen.has(x.id)) continue;
    seen.add(x.id);
    if (all.get(r.name)!.has(x.id)) continue;
    const why: keyof RuntimeOutcome['unexpected'] =
      r.removed && x.tr > r.removed.end + 1000
        ? 'afterRemoval'
        : !inBounds(r, x.tr)
          ? 'outOfBounds'
          : r.maxRuns
            ? 'overMaxRuns'
            : r.versions.length > 1
              ? 'oldSpec'
              : 'other';
    o.unexpected[why]++;
    if (o.unexpectedIds.length < 8) o.unexpectedIds.push(`${x.id} (${why})`);
  }
  for (const [name, ids] of started) if (ids.size > rt.byName.get(name)!.maxRuns!) o.overMaxRuns++;
  return o;
}
