// The scheduler at its edges (issue 8), faults 1, 2, 3 and 6, on real scheduler-and-worker
// processes with the admin calls made from this process: a pause skips its triggers (and a resume
// starts at the next instant), a registry change reaches the leader at once and is fenced in the
// queue's slot even when the notice is lost, a changed spec fires nothing dated before the change
// and never flips back across leaderships, and the fencing term never goes backwards.
import { jest } from '@jest/globals';
import { QueueKeys, SchedulerKeys } from '../../lib/core/redis/keys.js';
import { InspectorContext } from '../../lib/core/admin/context.js';
import * as acts from '../../lib/core/admin/schedule-acts.js';
import type { RedisClient } from '../../lib/core/redis/types.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import type { Rec } from '../helpers/records.js';
import { expectOnceEach, Fleet, freshLease, nextAligned, waitTriggers } from '../helpers/fleet.js';
import { connect, deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';
import { registryKey, storedJson } from '../helpers/registry.js';

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

/** The operator's pause and resume (lib/core/admin/schedule-acts.ts), made from this process on `client`. */
const admin = (client: RedisClient, keys: SchedulerKeys) => new InspectorContext(client, keys.namespace, 3000, 'test');
const pauseSchedule = (client: RedisClient, keys: SchedulerKeys, name: string) => acts.pauseSchedule(admin(client, keys), name);
const resumeSchedule = (client: RedisClient, keys: SchedulerKeys, name: string) => acts.resumeSchedule(admin(client, keys), name);

/** The witness schedule added to every fleet that must let trigger instants pass: never paused or changed. */
const TOCK = { name: 'tock', spec: '@every 1s' };

/**
 * Waits until the witness schedule `tock` started its trigger at the first second at or after
 * `atMs` (epoch ms): no trigger task starts before its instant (fault 4), so the fleet's clock has
 * passed `atMs`, and every trigger of the fleet's other schedules due by then was planned.
 */
async function tockPassed(f: Fleet, atMs: number): Promise<void> {
  const second = Math.ceil(atMs / 1000) * 1000;
  await waitTriggers(f, TOCK.name, second, second, { phase: 'start' });
}

/**
 * Waits until the first `tock` trigger after now has started: the fleet is just past an instant,
 * so the next one (enqueued 500 ms ahead of it) is not enqueued yet.
 */
async function pastAnInstant(f: Fleet): Promise<void> {
  await tockPassed(f, nextAligned(Date.now(), 1000));
}

/**
 * Waits until the lease of the shard of schedule `n` was renewed 200 to 800 ms ago (TTL − time left
 * in that range, polled in Redis): the next renewal is ttl/2 − 800 ms or more away.
 */
async function afterRenewal(f: Fleet, ttlMs: number): Promise<void> {
  const shard = f.shardOf('n');
  await waitFor(
    async () => {
      const until = await freshLease(f.redis, f.ns, ttlMs, shard, ttlMs);
      const age = ttlMs - (until - Date.now());
      return age >= 200 && age <= 800;
    },
    { what: `the lease of shard ${shard} renewed 200-800 ms ago`, timeoutMs: ttlMs + 10_000, intervalMs: 10 },
  );
}

test('fault 1: a pause skips its triggers (catch-up all and none alike); after the resume, the next instant fires', async () => {
  const f = fleet([{ name: 'p-all', spec: '@every 1s' }, { name: 'p-none', spec: '@every 1s', catchUp: 'none' }, TOCK]);
  await Promise.all([f.start('A'), f.start('B')]);
  await f.waitLeader();
  await waitFor(async () => of(await f.records(), 'done', 'p-all').length > 0, 'a first run');
  const keys = new SchedulerKeys(f.ns);
  await pastAnInstant(f); // away from an instant: the next one is not enqueued yet (lead 500 ms)
  await Promise.all([pauseSchedule(f.redis, keys, 'p-all'), pauseSchedule(f.redis, keys, 'p-none')]);
  const pausedAt = Date.now();
  await tockPassed(f, pausedAt + 5000); // paused for 5 s
  const resumeStart = Date.now();
  await Promise.all([resumeSchedule(f.redis, keys, 'p-all'), resumeSchedule(f.redis, keys, 'p-none')]);
  const resumedAt = Date.now();
  await tockPassed(f, resumedAt + 4500);
  // the outcomes asserted below are recorded (the leader fired both again and reported each skip)
  const recs = await waitFor(async () => {
    const r = await f.records();
    const ok = ['p-all', 'p-none'].every((n) => of(r, 'skipped', n).length > 0 && at(of(r, 'fired', n)).some((t) => t > resumedAt));
    return ok ? r : undefined;
  }, 'the fires after the resume and the pause skips to be recorded');
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
    const logged = () => f.children.reduce((n, c) => n + (c.output.match(line)?.length ?? 0), 0);
    await waitFor(() => logged() > 0, `the pause skip of ${name} to be logged`);
    expect(logged()).toBe(1);
  }
  // lastFired moved past the paused triggers, in Redis
  expect(Number(await f.redis.hget(new QueueKeys(f.ns, 'default').lastFired, 'p-none'))).toBeGreaterThan(resumeStart);
  await f.stopAll();
});

test('fault 2: a pause reaches the leader at once: no trigger after pauseSchedule() resolved is enqueued; a resume too', async () => {
  const TTL = 8000; // renewals every 4 s: only a notice makes a change take effect sooner
  const f = fleet([{ name: 'n', spec: '@every 1s' }, TOCK], { LEADER_TTL_MS: TTL });
  await f.start('A');
  await f.waitLeader();
  await waitFor(async () => of(await f.records(), 'fired', 'n').length > 0, 'a first fire');
  const keys = new SchedulerKeys(f.ns);
  await afterRenewal(f, TTL);
  await pauseSchedule(f.redis, keys, 'n');
  const pausedAt = Date.now();
  await tockPassed(f, pausedAt + 4500);
  const enqueuedAfter = at(of(await f.records(), 'fired', 'n')).filter((t) => t > pausedAt + 500);
  expect({ enqueuedAfterPause: enqueuedAfter }).toEqual({ enqueuedAfterPause: [] });
  await afterRenewal(f, TTL);
  const resumedAt = Date.now();
  await resumeSchedule(f.redis, keys, 'n');
  // the next renewal is ~3.8 s away: the resume is seen by the notice well before it
  await waitFor(async () => at(of(await f.records(), 'fired', 'n')).some((t) => t > resumedAt), 'a trigger after the resume', 2500);
  await f.stopAll();
});

test('fault 2: even if the notice is lost, a fenced change stops the old state at fire.lua', async () => {
  const TTL = 8000;
  const f = fleet([{ name: 'n', spec: '@every 1s' }, TOCK], { LEADER_TTL_MS: TTL });
  await f.start('A');
  await f.waitLeader();
  await waitFor(async () => of(await f.records(), 'fired', 'n').length > 0, 'a first fire');
  await pastAnInstant(f);
  // what pauseSchedule() writes, minus the notice and the version bump the renewal would see
  const def = JSON.parse((await storedJson(f.redis, f.ns, 'n'))!) as { generation?: number };
  const generation = Math.max((def.generation ?? 0) + 1, Date.now());
  await f.redis.hset(registryKey(f.ns, 'n'), 'n', JSON.stringify({ ...def, paused: true, generation }));
  await f.redis.hset(new QueueKeys(f.ns, 'default').generation, 'n', generation); // what fence-schedules.lua does
  const fencedAt = Date.now();
  await tockPassed(f, fencedAt + 4500);
  const enqueuedAfter = at(of(await f.records(), 'fired', 'n')).filter((t) => t > fencedAt + 500);
  expect({ enqueuedAfterFence: enqueuedAfter }).toEqual({ enqueuedAfterFence: [] });
  await f.stopAll();
});

test('fault 3: a changed spec fires nothing dated before the change, the old spec stops at once, and it never flips back', async () => {
  const TTL = 8000;
  // hourly, with its instants half an hour from now: none falls in the test (a plain '@every 1h' fires
  // at the top of the hour, and a run across it saw that fire of the old spec as backdated)
  const hourly = { every: '1h', offset: Math.floor(((Date.now() + 1_800_000) % 3_600_000) / 1000) * 1000 };
  const oldDefs = [
    { name: 'burst', spec: hourly },
    { name: 'stop', spec: { every: '2s', offset: 1000 } }, // odd seconds
    TOCK, // the same in both: a witness
  ];
  const newDefs = [{ name: 'burst', spec: '@every 1s' }, { name: 'stop', spec: hourly }, TOCK];
  const f = fleet(oldDefs, { LEADER_TTL_MS: TTL });
  await f.start('A');
  await f.waitLeader();
  await f.start('C');
  await waitFor(async () => of(await f.records(), 'fired', 'stop').length > 0, 'the old spec to fire');
  const { registeredAt } = JSON.parse((await storedJson(f.redis, f.ns, 'burst'))!) as { registeredAt: number };
  await tockPassed(f, registeredAt + 5500); // the new spec's instants since the registration: 5 or more
  const changeStart = Date.now();
  await f.start('B', { SCHEDULES: JSON.stringify(newDefs) }); // a newer replica of a rolling deploy
  const changedAt = Date.now();
  await tockPassed(f, changedAt + 4500);
  let recs = await waitFor(async () => {
    const r = await f.records();
    return of(r, 'fired', 'burst').length > 0 ? r : undefined;
  }, 'the new spec to fire');
  const backdated = at(of(recs, 'fired', 'burst')).filter((t) => t < changeStart);
  expect({ backdated }).toEqual({ backdated: [] });
  // the new spec's first trigger is its first instant after the change was stored
  const stored0 = JSON.parse((await storedJson(f.redis, f.ns, 'burst'))!) as { changedAt: number };
  expect(stored0.changedAt).toBeGreaterThanOrEqual(changeStart);
  expect(Math.min(...at(of(recs, 'fired', 'burst')))).toBe(nextAligned(stored0.changedAt, 1000));
  const oldAfterChange = at(of(recs, 'fired', 'stop')).filter((t) => t > changedAt + 1000);
  expect({ oldAfterChange }).toEqual({ oldAfterChange: [] });
  // leadership moves between old and new replicas: the last writer (B) keeps winning
  for (let i = 0; i < 2; i++) {
    const current = f.currentLeader()!;
    const movedAt = Date.now();
    current.kill('SIGTERM');
    const led = await f.waitLeader(movedAt);
    await tockPassed(f, led.t + 2500); // the new leader fired for 2.5 s
  }
  await expectOnceEach(f, 'burst', nextAligned(changedAt, 1000), Date.now() - 1000);
  recs = await f.records();
  expect(at(of(recs, 'fired', 'stop')).filter((t) => t > changedAt + 1000)).toEqual([]);
  const stored = JSON.parse((await storedJson(f.redis, f.ns, 'burst'))!) as { expression: string };
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
    await r.del(keys.term, keys.shards, keys.members); // as after a FLUSHDB (of this namespace only)
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
