// The overlap policies on the leader's side, pure: validation (typed errors naming the value), the
// fire mode and lead of each policy, the meta a trigger's task carries, and the supersede notices.
import { fireLeadMs, fireModeOf, OVERLAP_POLICIES, type OverlapPolicy } from '../../lib/core/scheduler/definition.js';
import { toStored, validateScheduleName } from '../../lib/core/scheduler/definition-check.js';
import { fireTriggers, supersedeNotices, type FireItem } from '../../lib/core/scheduler/fire-triggers.js';
import type { Entry } from '../../lib/core/scheduler/due-entry.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { FIRE_LEAD, FIRE_MODE, META, type TaskMeta } from '../../lib/core/redis/protocol.js';
import { InvalidScheduleError } from '../../lib/core/runtime/errors.js';
import type { FireResult } from '../../lib/core/redis/commands/schedule.js';

const T = 1_800_000_000_000;

function entry(overlap: OverlapPolicy, catchUp: 'all' | 'latest' | 'none' = 'all'): Entry {
  const { stored, spec } = toStored({ name: 'job', spec: '@every 60s', overlap, catchUp }, 'UTC', true);
  return {
    stored,
    spec,
    keys: new QueueKeys('app', stored.queue),
    lastFired: T - 60_000,
    next: T,
    live: true,
    dedupTtlMs: 7_200_000,
    leadMs: fireLeadMs(stored, spec),
    generation: 1,
    liveUntil: Infinity,
  } as Entry;
}

function metaOf(overlap: OverlapPolicy, catchUp: 'all' | 'latest' | 'none' = 'all'): TaskMeta {
  const e = entry(overlap, catchUp);
  const [t] = fireTriggers([{ entry: e, triggerAt: T, mode: fireModeOf(overlap) }], [undefined], T, false);
  return JSON.parse(t.meta) as TaskMeta;
}

test.each(['buffer', 'cancel', 'Skip', 'BufferOne', 1, null])(
  'overlap %j is refused at registration, naming the value and the choices',
  (bad) => {
    let err: unknown;
    try {
      toStored({ name: 'job', spec: '@every 60s', overlap: bad as OverlapPolicy }, 'UTC', true);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidScheduleError);
    const e = err as InvalidScheduleError;
    expect(e.schedule).toBe('job');
    expect(e.value).toBe(typeof bad === 'string' ? bad : JSON.stringify(bad));
    expect(e.problem).toBe(`overlap: expected 'allow', 'skip', 'buffer-one' or 'cancel-previous'`);
    expect(e.message).toBe(`Invalid schedule "job": ${JSON.stringify(e.value)}: ${e.problem}`);
  },
);

test('a bad schedule name is refused in the same form as a bad value: Invalid schedule "<name>": <problem>', () => {
  // was `Invalid schedule: "x y": name: …`, beside `Invalid schedule "job": "buffer": overlap: …` above
  expect(() => validateScheduleName('x y')).toThrow(
    new InvalidScheduleError(undefined, 'x y', 'name: expected 1-200 characters of [A-Za-z0-9_.:-], not "." or ".."'),
  );
  expect(() => validateScheduleName('x y')).toThrow(/^Invalid schedule "x y": name: expected 1-200 characters/);
});

test('each policy has its fire mode; every policy but allow fires at the instant (no lead)', () => {
  expect(OVERLAP_POLICIES.map(fireModeOf)).toEqual([
    FIRE_MODE.allowOverlap,
    FIRE_MODE.skipOverlap,
    FIRE_MODE.bufferOne,
    FIRE_MODE.cancelPrevious,
  ]);
  expect(OVERLAP_POLICIES.map((p) => entry(p).leadMs)).toEqual([FIRE_LEAD.maxMs, 0, 0, 0]);
});

test("a trigger's task holds the overlap marker under skip, buffer-one and cancel-previous, and says which", () => {
  const pick = (m: TaskMeta) => [m[META.overlapSkip], m[META.overlapMode]];
  expect(OVERLAP_POLICIES.map((p) => pick(metaOf(p)))).toEqual([
    [undefined, undefined],
    [1, undefined],
    [1, 'b'],
    [1, 'c'],
  ]);
});

test('the next trigger supersedes a waiting task under cancel-previous always, under buffer-one never', () => {
  const next = T + 60_000;
  expect(metaOf('allow')[META.supersededAt]).toBeUndefined();
  expect(metaOf('allow', 'latest')[META.supersededAt]).toBe(next);
  expect(metaOf('cancel-previous')[META.supersededAt]).toBe(next);
  expect(metaOf('buffer-one', 'none')[META.supersededAt]).toBeUndefined();
  expect(metaOf('buffer-one', 'none')[META.catchUpWindowMs]).toBe(3_600_000); // the window still bounds it
});

test('supersede notices: one per schedule, with its newest superseding trigger', () => {
  const e = entry('cancel-previous');
  const other = entry('cancel-previous');
  other.stored = { ...other.stored, name: 'other' };
  const items: FireItem[] = [
    { entry: e, triggerAt: T, mode: FIRE_MODE.cancelPrevious },
    { entry: e, triggerAt: T + 60_000, mode: FIRE_MODE.cancelPrevious },
    { entry: e, triggerAt: T + 120_000, mode: FIRE_MODE.cancelPrevious },
    { entry: other, triggerAt: T, mode: FIRE_MODE.cancelPrevious },
  ];
  const results: FireResult[] = ['superseding', 'superseding', 'duplicate', 'enqueued'];
  expect(supersedeNotices(items, results)).toEqual([
    { queue: 'default', schedule: 'job', supersededBy: `job:${(T + 60_000) / 1000}`, triggerAt: T + 60_000 },
  ]);
});
