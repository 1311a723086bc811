// The chaos run's judgement of runtime schedules (bench/chaos/runtime.ts, issue 25): what each
// schedule must, may and must not fire around its upserts and its removal, on fabricated records.
import type { ChaosRecord } from '../../bench/chaos/common.js';
import { RuntimeSchedules, dueOf, judgeRuntime, type RuntimeSchedule } from '../../bench/chaos/runtime.js';

const W = 1_800_000_000_000; // a whole minute
const window = { start: W, end: W + 60_000 };
const every10 = { every: 10_000 };

function fleet(...list: RuntimeSchedule[]): RuntimeSchedules {
  const rt = new RuntimeSchedules(0, 1, W, 60);
  rt.list.push(...list);
  return rt;
}

/** A start and a done record of `name`'s instant `tr` (payload v = pv). */
function ran(name: string, tr: number, pv = 0): ChaosRecord[] {
  const id = `${name}:${Math.floor(tr / 1000)}`;
  return [
    { k: 'start', id, q: 't', t: tr + 5, i: 'r1.1', tr, rt: tr + 5, eb: 0.1, r: 0, pv },
    { k: 'done', id, q: 't', t: tr + 15, i: 'r1.1' },
  ];
}

function judge(rt: RuntimeSchedules, records: ChaosRecord[]) {
  const dones = new Map<string, number>();
  for (const r of records) if (r.k === 'done') dones.set(r.id, (dones.get(r.id) ?? 0) + 1);
  return judgeRuntime(rt, window, records, (id) => dones.get(id) ?? 0);
}

const instants = (from: number, to: number, step = 10_000) => Array.from({ length: (to - from) / step + 1 }, (_, k) => from + k * step);

test('every instant of the window once: nothing missing; one left out is missing, one run twice duplicated', () => {
  const rt = fleet({ name: 'a', versions: [{ spec: every10, v: 0, at: -Infinity, end: -Infinity }] });
  const all = instants(W, W + 60_000).flatMap((tr) => ran('a', tr));
  const ok = judge(rt, all);
  expect([ok.expected, ok.once, ok.missing, ok.duplicated]).toEqual([7, 7, 0, 0]);
  const bad = judge(rt, [...all.slice(2), ...ran('a', W + 30_000)]);
  expect([bad.missing, bad.duplicated, bad.missingIds]).toEqual([1, 1, [`a:${W / 1000}`]]);
});

test('a removal: instants before it are required, one after it (+1 s) should not have fired', () => {
  const rt = fleet({
    name: 'b',
    versions: [{ spec: every10, v: 0, at: -Infinity, end: -Infinity }],
    removed: { at: W + 30_000, end: W + 30_050 },
  });
  const o = judge(
    rt,
    instants(W, W + 40_000).flatMap((tr) => ran('b', tr)),
  );
  // W, +10 s, +20 s required; +30 s (at the call, not recorded as fired) optional; +40 s after it
  expect([o.expected, o.missing, o.optionalRan, o.unexpected.afterRemoval]).toEqual([3, 0, 1, 1]);
});

test('maxRuns: the first maxRuns instants from startAt are required, a further one is over', () => {
  const rt = fleet({ name: 'c', startAt: W, maxRuns: 2, versions: [{ spec: every10, v: 0, at: -Infinity, end: -Infinity }] });
  const o = judge(
    rt,
    instants(W, W + 20_000).flatMap((tr) => ran('c', tr)),
  );
  expect([o.expected, o.once, o.unexpected.overMaxRuns, o.overMaxRuns]).toEqual([2, 2, 1, 1]);
});

test('a spec change: old instants after it should not fire, new ones must, with the new payload', () => {
  const versions = [
    { spec: every10, v: 0, at: -Infinity, end: -Infinity },
    { spec: { every: 20_000 }, v: 1, at: W + 25_000, end: W + 25_100 },
  ];
  const rt = fleet({ name: 'd', versions });
  const good = [W, W + 10_000, W + 20_000].flatMap((tr) => ran('d', tr)).concat([W + 40_000, W + 60_000].flatMap((tr) => ran('d', tr, 1)));
  const o = judge(rt, good);
  // +20 s lies within 10 s before the change and no scheduler recorded firing it: optional
  expect([o.expected, o.once, o.missing, o.optionalRan, o.unexpected.oldSpec, o.stalePayload]).toEqual([4, 4, 0, 1, 0, 0]);
  const fired: ChaosRecord = { k: 'fired', id: `d:${(W + 20_000) / 1000}`, tr: W + 20_000, t: W + 19_500, i: 'r2.1' };
  const firedNotRun = judge(rt, [fired, ...good.filter((r) => !('id' in r) || r.id !== fired.id)]);
  expect([firedNotRun.expected, firedNotRun.missing]).toEqual([5, 1]);
  const bad = judge(rt, [...good, ...ran('d', W + 30_000), ...ran('d', W + 40_000, 0).slice(0, 1)]);
  // the old-spec start at +30 s carries the old payload too
  expect([bad.unexpected.oldSpec, bad.stalePayload]).toEqual([1, 2]);
});

test('a jittered trigger is due at its shifted instant, within [instant, instant + jitter)', () => {
  const rt = fleet({ name: 'e', jitter: 4000, versions: [{ spec: every10, v: 0, at: -Infinity, end: -Infinity }] });
  const shifts = instants(W, W + 60_000).map((tr) => dueOf(rt, `e:${tr / 1000}`, tr) - tr);
  for (const s of shifts) expect(s >= 0 && s < 4000).toBe(true);
  expect(new Set(shifts).size).toBeGreaterThan(1);
  expect(dueOf(rt, `every-1:${W / 1000}`, W)).toBe(W);
});

test('a duplicate whose first run ended in a Redis outage longer than the visibility timeout is documented, not a failure', async () => {
  const { analyze } = await import('../../bench/chaos/analyze.js');
  const rt = fleet({ name: 'f', versions: [{ spec: { every: 60_000 }, v: 0, at: -Infinity, end: -Infinity }] });
  const tr = W + 60_000;
  const twice = [...ran('f', W), ...ran('f', tr), ...ran('f', tr).map((r) => ({ ...r, i: 'r2.1', t: r.t + 8000 }))];
  const log = (downMs: number) => ({
    records: twice,
    window,
    faults: [],
    crashes: [],
    restarts: [{ how: 'sigterm' as const, at: tr, downAt: tr + 50, upAt: tr + downMs }],
    outputs: [],
    floodLinesPerSecond: 20,
    aofLossMs: 0,
    runtime: rt,
  });
  const ownFailures = (o: { failures: string[] }) => o.failures.filter((f) => f.includes('runtime'));
  const long = analyze(log(7000));
  expect([long.runtime!.duplicated, long.runtime!.dupCauses.outage, ownFailures(long)]).toEqual([1, 1, []]);
  // a 2 s outage and no SIGKILL: the ack was written late but in time, so a second run is a failure
  const short = analyze(log(2000));
  expect([short.runtime!.dupCauses.redis, ownFailures(short)]).toEqual([1, ['1 runtime-schedule trigger(s) duplicated']]);
});
