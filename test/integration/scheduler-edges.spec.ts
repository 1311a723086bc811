// The scheduler at its edges (issue 8), faults 1, 2, 3 and 6, on real scheduler-and-worker
// processes with the admin calls made from this process: a pause skips its triggers (and a resume
// starts at the next instant), a registry change reaches the leader at once and is fenced in the
// queue's slot even when the notice is lost, a changed spec fires nothing dated before the change
// and never flips back across leaderships, and the fencing term never goes backwards.
import { jest } from '@jest/globals';
import { QueueKeys, SchedulerKeys } from '../../lib/core/redis/keys.js';
import { pauseSchedule, resumeSchedule } from '../../lib/core/scheduler/registry.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import type { Rec } from '../helpers/records.js';
import { expectOnceEach, Fleet, nextAligned } from '../helpers/fleet.js';
import { connect, deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger, until, waitFor } from '../helpers/wait.js';

jest.setTimeout(120_000);

const fleets: Fleet[] = [];
function fleet(...args: ConstructorParameters<typeof Fleet>): Fleet {
  const f = new Fleet(...args);
  fleets.push(f);
  return f;
}
afterEach(async () => {
  await Promise.all(fleets.splice(0).map((f) => f.close()));
});

const of = (recs: Rec[], phase: string, schedule: string) => recs.filter((r) => r.phase === phase && r.schedule === schedule);
const at = (recs: Rec[]) => recs.map((r) => r.triggerAt as number);

/** The instant `ms` after one of the leader's renewals (it renews every ttl/2 from its acquisition), and not before `notBefore`. */
function afterRenewal(acquiredAt: number, ttlMs: number, ms: number, notBefore = Date.now()): number {
  const every = ttlMs / 2;
  return acquiredAt + Math.ceil((notBefore - acquiredAt - ms) / every) * every + ms;
}

test('fault 1: a pause skips its triggers (catch-up all and none alike); after the resume, the next instant fires', async () => {
  const f = fleet([
    { name: 'p-all', spec: '@every 1s' },
    { name: 'p-none', spec: '@every 1s', catchUp: 'none' },
  ]);
  await Promise.all([f.start('A'), f.start('B')]);
  await f.waitLeader();
  await waitFor(async () => of(await f.records(), 'done', 'p-all').length > 0, 'a first run');
  const keys = new SchedulerKeys(f.ns);
  await until(nextAligned(Date.now(), 1000) + 300); // away from an instant: the next one is not enqueued yet (lead 500 ms)
  await Promise.all([pauseSchedule(f.redis, keys, 'p-all'), pauseSchedule(f.redis, keys, 'p-none')]);
  const pausedAt = Date.now();
  await until(pausedAt + 5000);
  const resumeStart = Date.now();
  await Promise.all([resumeSchedule(f.redis, keys, 'p-all'), resumeSchedule(f.redis, keys, 'p-none')]);
  const resumedAt = Date.now();
  await until(resumedAt + 4500);
  const recs = await f.records();
  // a trigger within the lead (500 ms) may have been enqueued before the pause resolved; none after it runs
  const lateRuns = (name: string) =>
    of(recs, 'start', name)
      .filter((r) => (r.triggerAt as number) > pausedAt + 500 && (r.triggerAt as number) <= resumeStart)
      .map((r) => ({ triggerAt: r.triggerAt, lateMs: r.t - (r.triggerAt as number) }));
  expect({ all: lateRuns('p-all'), none: lateRuns('p-none') }).toEqual({ all: [], none: [] });
  for (const name of ['p-all', 'p-none']) {
    const firstAfter = Math.min(...at(of(recs, 'fired', name)).filter((t) => t > pausedAt + 500));
    expect([nextAligned(resumeStart, 1000), nextAligned(resumedAt, 1000)]).toContain(firstAfter);
    await expectOnceEach(f, name, nextAligned(resumedAt, 1000), Date.now() - 1000);
    // the skip is counted and logged once per pause, as a schedule.skipped event with reason 'pause'
    const skips = of(recs, 'skipped', name).filter((r) => r.reason === 'pause');
    expect(skips).toHaveLength(1);
    expect(skips[0].count).toBeGreaterThanOrEqual(4);
    const line = new RegExp(`Skipped \\d+ trigger\\(s\\) while paused \\(schedule=${name}[ )]`, 'g');
    expect(f.children.reduce((n, c) => n + (c.output.match(line)?.length ?? 0), 0)).toBe(1);
  }
  // lastFired moved past the paused triggers, in Redis
  expect(Number(await f.redis.hget(new QueueKeys(f.ns, 'default').lastFired, 'p-none'))).toBeGreaterThan(resumeStart);
  await f.stopAll();
});

test('fault 2: a pause reaches the leader at once: no trigger after pauseSchedule() resolved is enqueued; a resume too', async () => {
  const TTL = 8000; // renewals every 4 s: only a notice makes a change take effect sooner
  const f = fleet([{ name: 'n', spec: '@every 1s' }], { LEADER_TTL_MS: TTL });
  await f.start('A');
  const leader = await f.waitLeader();
  await waitFor(async () => of(await f.records(), 'fired', 'n').length > 0, 'a first fire');
  const keys = new SchedulerKeys(f.ns);
  await until(afterRenewal(leader.t, TTL, 200));
  await pauseSchedule(f.redis, keys, 'n');
  const pausedAt = Date.now();
  await until(pausedAt + 4500);
  const enqueuedAfter = at(of(await f.records(), 'fired', 'n')).filter((t) => t > pausedAt + 500);
  expect({ enqueuedAfterPause: enqueuedAfter }).toEqual({ enqueuedAfterPause: [] });
  await until(afterRenewal(leader.t, TTL, 200));
  const resumedAt = Date.now();
  await resumeSchedule(f.redis, keys, 'n');
  // the next renewal is ~3.8 s away: the resume is seen by the notice well before it
  await waitFor(async () => at(of(await f.records(), 'fired', 'n')).some((t) => t > resumedAt), 'a trigger after the resume', 2500);
  await f.stopAll();
});

test('fault 2: even if the notice is lost, a fenced change stops the old state at fire.lua', async () => {
  const TTL = 8000;
  const f = fleet([{ name: 'n', spec: '@every 1s' }], { LEADER_TTL_MS: TTL });
  await f.start('A');
  await f.waitLeader();
  await waitFor(async () => of(await f.records(), 'fired', 'n').length > 0, 'a first fire');
  const keys = new SchedulerKeys(f.ns);
  await until(nextAligned(Date.now(), 1000) + 300);
  // what pauseSchedule() writes, minus the notice and the version bump the renewal would see
  const def = JSON.parse((await f.redis.hget(keys.schedules, 'n'))!) as { generation?: number };
  const generation = Math.max((def.generation ?? 0) + 1, Date.now());
  await f.redis.hset(keys.schedules, 'n', JSON.stringify({ ...def, paused: true, generation }));
  await f.redis.hset(new QueueKeys(f.ns, 'default').generation, 'n', generation); // what fence-schedules.lua does
  const fencedAt = Date.now();
  await until(fencedAt + 4500);
  const enqueuedAfter = at(of(await f.records(), 'fired', 'n')).filter((t) => t > fencedAt + 500);
  expect({ enqueuedAfterFence: enqueuedAfter }).toEqual({ enqueuedAfterFence: [] });
  await f.stopAll();
});

test('fault 3: a changed spec fires nothing dated before the change, the old spec stops at once, and it never flips back', async () => {
  const TTL = 8000;
  const oldDefs = [
    { name: 'burst', spec: '@every 1h' },
    { name: 'stop', spec: { every: '2s', offset: 1000 } }, // odd seconds
  ];
  const newDefs = [
    { name: 'burst', spec: '@every 1s' },
    { name: 'stop', spec: '@every 1h' },
  ];
  const f = fleet(oldDefs, { LEADER_TTL_MS: TTL });
  await f.start('A');
  await f.waitLeader();
  await f.start('C');
  await waitFor(async () => of(await f.records(), 'fired', 'stop').length > 0, 'the old spec to fire');
  const { registeredAt } = JSON.parse((await f.redis.hget(new SchedulerKeys(f.ns).schedules, 'burst'))!) as { registeredAt: number };
  await until(registeredAt + 5500); // the new spec's instants since the registration: 5 or more
  const changeStart = Date.now();
  await f.start('B', { SCHEDULES: JSON.stringify(newDefs) }); // a newer replica of a rolling deploy
  const changedAt = Date.now();
  await until(changedAt + 4500);
  let recs = await f.records();
  const backdated = at(of(recs, 'fired', 'burst')).filter((t) => t < changeStart);
  expect({ backdated }).toEqual({ backdated: [] });
  // the new spec's first trigger is its first instant after the change was stored
  const stored0 = JSON.parse((await f.redis.hget(new SchedulerKeys(f.ns).schedules, 'burst'))!) as { changedAt: number };
  expect(stored0.changedAt).toBeGreaterThanOrEqual(changeStart);
  expect(Math.min(...at(of(recs, 'fired', 'burst')))).toBe(nextAligned(stored0.changedAt, 1000));
  const oldAfterChange = at(of(recs, 'fired', 'stop')).filter((t) => t > changedAt + 1000);
  expect({ oldAfterChange }).toEqual({ oldAfterChange: [] });
  // leadership moves between old and new replicas: the last writer (B) keeps winning
  for (let i = 0; i < 2; i++) {
    const current = f.currentLeader()!;
    const movedAt = Date.now();
    current.kill('SIGTERM');
    await f.waitLeader(movedAt);
    await until(Date.now() + 2500);
  }
  await expectOnceEach(f, 'burst', nextAligned(changedAt, 1000), Date.now() - 1000);
  recs = await f.records();
  expect(at(of(recs, 'fired', 'stop')).filter((t) => t > changedAt + 1000)).toEqual([]);
  const stored = JSON.parse((await f.redis.hget(new SchedulerKeys(f.ns).schedules, 'burst'))!) as { expression: string };
  expect(stored.expression).toBe('@every 1s');
  await f.stopAll();
});

test('fault 6: the fencing term never decreases, even when its key is gone', async () => {
  const ns = newNamespace('term');
  const logger = recordingLogger();
  const make = () => new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, heartbeatInterval: 200, logger });
  const keys = new SchedulerKeys(ns);
  try {
    const a = make();
    await a.start();
    await waitFor(() => a.isLeader, 'leadership');
    const first = a.term;
    await a.stop();
    const b = make();
    await b.start();
    await waitFor(() => b.isLeader, 'leadership again');
    const second = b.term;
    await b.stop();
    expect(second).toBeGreaterThan(first);
    const r = connect();
    await r.del(keys.term, keys.lease); // as after a FLUSHDB (of this namespace only)
    r.disconnect();
    const c = make();
    await c.start();
    await waitFor(() => c.isLeader, 'leadership after the term key was lost');
    const third = c.term;
    await c.stop();
    expect({ first, second, third, grows: third > second }).toMatchObject({ grows: true });
  } finally {
    await deleteNamespace(ns);
  }
});
