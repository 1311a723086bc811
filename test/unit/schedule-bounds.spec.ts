import { InvalidScheduleError } from '../../lib/core/runtime/errors.js';
import { storedSpec, type ScheduleDefinition } from '../../lib/core/scheduler/definition.js';
import { toStored } from '../../lib/core/scheduler/definition-check.js';
import { plan, wakeAt } from '../../lib/core/scheduler/plan.js';
import { fireTriggers } from '../../lib/core/scheduler/fire-triggers.js';
import type { Entry } from '../../lib/core/scheduler/due-entry.js';
import { FIRE_LEAD, FIRE_MODE, META } from '../../lib/core/redis/protocol.js';
import { jitterShiftMs, MAX_JITTER_MS } from '../../lib/core/scheduler/schedule-bounds.js';
import { nextTriggers, triggersBetween } from '../../lib/core/scheduler/spec.js';
import { validateDefinitions, validateNames } from '../../lib/core/admin/schedule-bulk.js';

/** Unit tests of a schedule's jitter, startAt/endAt and maxRuns: validation, the shift, the bounded spec. No Redis. */

const T0 = Date.parse('2024-03-01T12:00:00Z');

function stored(def: Partial<ScheduleDefinition>) {
  return toStored({ name: 'job', spec: { every: 1000 }, ...def } as ScheduleDefinition, 'UTC', false);
}

/** A second computation of the shift, written apart from the engine's (BigInt arithmetic, no Math.imul). */
function referenceShift(schedule: string, triggerAtMs: number, jitterMs: number): number {
  const M = 0xffffffffn;
  const mul = (a: bigint, b: bigint) => (a * b) & M;
  let h = 0x811c9dc5n;
  for (const b of new TextEncoder().encode(`${schedule}:${triggerAtMs}`)) h = mul(h ^ BigInt(b), 0x01000193n);
  h ^= h >> 16n;
  h = mul(h, 0x85ebca6bn);
  h ^= h >> 13n;
  h = mul(h, 0xc2b2ae35n);
  h ^= h >> 16n;
  return Number(h % BigInt(jitterMs));
}

describe('validation', () => {
  test.each([
    [{ jitter: -1 }, /"-1": jitter/],
    [{ jitter: 1.5 }, /"1\.5": jitter/],
    [{ jitter: MAX_JITTER_MS + 1 }, /"86400001": jitter/],
    [{ jitter: '10s' }, /"10s": jitter/],
    [{ jitter: 1000 }, /jitter: expected less than the period \(1000 ms\)/],
    [{ startAt: 'tomorrow' }, /"tomorrow": startAt/],
    [{ startAt: new Date(Number.NaN) }, /"Invalid Date": startAt/],
    [{ startAt: T0, endAt: T0 }, /endAt: expected an instant after startAt/],
    [{ maxRuns: 0 }, /"0": maxRuns/],
    [{ maxRuns: 2.5 }, /"2\.5": maxRuns/],
    // past 2^53 a count cannot be told from the next: its runsLeft showed 1e+300 for ever (trial 16)
    [{ maxRuns: 1e300 }, /"1e\+300": maxRuns: expected an integer from 1 to 9007199254740991/],
    [{ maxRuns: 2 ** 53 }, /"9007199254740992": maxRuns/],
  ])('%p is refused with an InvalidScheduleError naming the value', (def, message) => {
    expect(() => stored(def as Partial<ScheduleDefinition>)).toThrow(InvalidScheduleError);
    expect(() => stored(def as Partial<ScheduleDefinition>)).toThrow(message);
  });

  test('a startAt/endAt window with no trigger in it is refused, naming the window, the spec and its first trigger after startAt', () => {
    // 12:00 to 13:00 holds no 03:00 trigger: before, stored without a word and never fired
    const empty = () => stored({ spec: '0 3 * * *', timeZone: 'Europe/Budapest', startAt: T0, endAt: T0 + 3_600_000 });
    expect(empty).toThrow(InvalidScheduleError);
    expect(empty).toThrow(
      'Invalid schedule "job": "1709298000000": endAt: the window [startAt 2024-03-01T12:00:00.000Z, endAt 2024-03-01T13:00:00.000Z) ' +
        'holds no trigger of "0 3 * * *" (Europe/Budapest; its first trigger at or after startAt: 2024-03-02T02:00:00.000Z), so the schedule would never fire',
    );
    expect(() => stored({ startAt: T0 + 200, endAt: T0 + 900 })).toThrow(/endAt: the window .* holds no trigger of "@every 1s"/);
    // the end is exclusive, the start inclusive: a window of exactly one trigger is taken
    expect(stored({ startAt: T0, endAt: T0 + 1 }).stored).toMatchObject({ startAt: T0, endAt: T0 + 1 });
    expect(stored({ spec: '0 3 * * *', startAt: T0, endAt: Date.parse('2024-03-02T03:00:00.001Z') }).stored.endAt).toBeDefined();
    // one bound alone is no closed window: taken as before
    expect(stored({ spec: '0 3 * * *', endAt: T0 }).stored.endAt).toBe(T0);
  });

  test('a cron spec takes any jitter up to a day; every-specs less than their period', () => {
    expect(stored({ spec: '* * * * *', jitter: MAX_JITTER_MS }).stored.jitterMs).toBe(MAX_JITTER_MS);
    expect(stored({ spec: { every: 60_000 }, jitter: 59_999 }).stored.jitterMs).toBe(59_999);
  });

  test('stored additively: Dates become epoch ms, a jitter of 0 is none, the fingerprint of a plain schedule is unchanged', () => {
    const s = stored({ jitter: 500, startAt: new Date(T0), endAt: T0 + 5000, maxRuns: 3 }).stored;
    expect(s).toMatchObject({ jitterMs: 500, startAt: T0, endAt: T0 + 5000, maxRuns: 3 });
    const plain = stored({}).stored;
    expect(stored({ jitter: 0 }).stored).toEqual(plain);
    expect(Object.keys(plain)).not.toEqual(expect.arrayContaining(['jitterMs', 'startAt', 'endAt', 'maxRuns']));
    expect(s.fp).not.toBe(plain.fp);
  });
});

describe('jitter shift', () => {
  test('deterministic: two computations agree, within [0, jitter), and 0 without jitter', () => {
    for (let i = 0; i < 1000; i++) {
      const at = T0 + i * 1000;
      const shift = jitterShiftMs('report.daily', at, 60_000);
      expect(shift).toBe(referenceShift('report.daily', at, 60_000));
      expect(shift).toBe(jitterShiftMs('report.daily', at, 60_000));
      expect(shift).toBeGreaterThanOrEqual(0);
      expect(shift).toBeLessThan(60_000);
    }
    expect(jitterShiftMs('ünïcode:name', T0, 7777)).toBe(referenceShift('ünïcode:name', T0, 7777));
    expect(jitterShiftMs('job', T0, 0)).toBe(0);
    expect(jitterShiftMs('job', T0, undefined)).toBe(0);
  });

  test.each([
    ['10,000 triggers of one schedule', (i: number) => jitterShiftMs('job', T0 + i * 1000, 60_000)],
    ['10,000 schedules at one instant', (i: number) => jitterShiftMs(`tenant-${i}.sync`, T0, 60_000)],
  ])('spread: %s with jitter 60,000 fill each 6 s bucket within 20 %% of the mean', (_what, shiftOf) => {
    const buckets = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++) buckets[Math.floor(shiftOf(i) / 6000)]++;
    const mean = 10_000 / buckets.length;
    for (const b of buckets) expect(Math.abs(b - mean) / mean).toBeLessThanOrEqual(0.2);
  });
});

describe('startAt / endAt', () => {
  const { stored: s } = stored({ startAt: T0 + 2000, endAt: T0 + 5000 });
  const spec = storedSpec(s);

  test('triggers fall in [startAt, endAt): start inclusive, end exclusive', () => {
    expect(nextTriggers(spec, T0 - 10_000, 10)).toEqual([T0 + 2000, T0 + 3000, T0 + 4000]);
    expect(spec.nextAfter(T0 + 4000)).toBeNull();
    expect(triggersBetween(spec, T0 - 60_000, T0 + 60_000, 100)).toEqual({ triggers: [T0 + 2000, T0 + 3000, T0 + 4000], skipped: 0 });
    expect(triggersBetween(spec, T0 + 2000, T0 + 60_000, 1)).toEqual({ triggers: [T0 + 4000], skipped: 1 });
  });

  test('the plan fires nothing before startAt or from endAt on; an ended schedule is never woken', () => {
    const base = { stored: { ...s, changedAt: T0 - 60_000 }, spec, leadMs: 0, leaderSince: T0 - 60_000 };
    expect(plan({ ...base, lastFired: T0 - 60_000, now: T0 + 1500 }).triggers).toEqual([]);
    expect(plan({ ...base, lastFired: T0 - 60_000, now: T0 + 2000 }).triggers.map((t) => t.triggerAt)).toEqual([T0 + 2000]);
    expect(plan({ ...base, lastFired: T0 + 3000, now: T0 + 4000 }).triggers.map((t) => t.triggerAt)).toEqual([T0 + 4000]);
    expect(plan({ ...base, lastFired: T0 + 4000, now: T0 + 5000 }).triggers).toEqual([]);
    expect(plan({ ...base, lastFired: T0 + 4000, now: T0 + 60_000 })).toMatchObject({ triggers: [], skipped: 0 });
    const state = { stored: s, live: true, leadMs: 0, next: spec.nextAfter(T0 + 4000) };
    expect(wakeAt(state)).toBe(Infinity);
    expect(wakeAt({ ...state, next: T0 + 3000, exhausted: true })).toBe(Infinity);
  });
});

describe('the fire.lua triggers of a jittered, limited schedule', () => {
  test('due at nominal + shift; the stale window and the supersede instant count from the shifted instants; maxRuns passed', () => {
    const { stored: s, spec } = stored({ jitter: 900, maxRuns: 7, catchUp: 'latest', catchUpWindow: 5000 });
    const entry = { stored: s, spec, dedupTtlMs: 3_600_000, generation: 1, liveUntil: Infinity } as unknown as Entry;
    const at = T0 + 3000;
    const [t] = fireTriggers([{ entry, triggerAt: at, mode: FIRE_MODE.allowOverlap }], [undefined], T0, false);
    const shift = jitterShiftMs('job', at, 900);
    expect(t).toMatchObject({ triggerAt: at, maxRuns: 7 });
    expect(t.dueAt).toBe(shift > 0 ? at + shift : undefined);
    const meta = JSON.parse(t.meta) as Record<string, number>;
    expect(meta[META.triggerAt]).toBe(at); // the nominal instant
    expect(meta[META.catchUpWindowMs]).toBe(5000 + shift);
    expect(meta[META.supersededAt]).toBe(at + 1000 + jitterShiftMs('job', at + 1000, 900));
    // without jitter: within the hold window (1 s) the task goes to the stream (no dueAt); further ahead it
    // waits in the scheduled set, due at its instant
    const plainEntry = { ...entry, stored: stored({}).stored };
    const [held, ahead] = fireTriggers(
      [
        { entry: plainEntry, triggerAt: T0 + FIRE_LEAD.holdMs, mode: FIRE_MODE.allowOverlap },
        { entry: plainEntry, triggerAt: at, mode: FIRE_MODE.allowOverlap },
      ],
      [undefined, undefined],
      T0,
      false,
    );
    expect(held.dueAt).toBeUndefined();
    expect(ahead.dueAt).toBe(at);
    expect(held.maxRuns).toBeUndefined();
  });
});

describe('what a bad definition is told (trial 5)', () => {
  const message = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidScheduleError);
      return (err as Error).message;
    }
    throw new Error('nothing thrown');
  };
  test('NaN is shown as NaN (was "null"); every unknown option is named; a definition that is not an object says so', () => {
    expect(message(() => toStored({ name: 'a', spec: '@every 5s', jitter: NaN }, 'UTC', true))).toBe(
      'Invalid schedule "a": "NaN": jitter: expected an integer from 0 to 86400000 (ms)',
    );
    expect(message(() => toStored({ name: 'a', spec: '@every 5s', foo: 1, bar: 2 } as ScheduleDefinition, 'UTC', true))).toBe(
      'Invalid schedule "a": "foo, bar": unknown options "foo", "bar"',
    );
    expect(message(() => toStored(null as unknown as ScheduleDefinition, 'UTC', true))).toBe(
      'Invalid schedule: expected a schedule definition object { name, spec, … }, got null',
    );
    expect(message(() => validateDefinitions({ name: 'a' } as unknown as ScheduleDefinition[], 'UTC', 'upsertSchedules'))).toBe(
      'Invalid schedule: upsertSchedules: expected an array of schedule definitions, got {"name":"a"}',
    );
  });
  test('an item of a bulk call that is no definition (or no name) is named by its index and value, not quoted as a schedule name', () => {
    const defs = [{ name: 'a', spec: '@daily' }, null, 5, 'b', [1]] as unknown as ScheduleDefinition[];
    const at = (i: number): string => message(() => validateDefinitions([defs[0], defs[i]], 'UTC', 'upsertSchedules'));
    expect([1, 2, 3, 4].map(at)).toEqual(
      ['null', '5', '"b"', '[1]'].map(
        (v) => `Invalid schedule definition [1] of the call: expected a schedule definition object { name, spec, … }, got ${v}`,
      ),
    );
    expect(message(() => validateNames(['a', null, 'c'] as string[]))).toBe(
      'Invalid schedule name [1] of the call: name: expected 1-200 characters of [A-Za-z0-9_.:-], not "." or "..", got null',
    );
    // a string that is a bad name is still quoted as the name given
    expect(message(() => validateNames(['a', 'b c']))).toBe(
      'Invalid schedule "b c" (name [1] of the call): name: expected 1-200 characters of [A-Za-z0-9_.:-], not "." or ".."',
    );
  });
});
