// The scheduler in one process: runtime API, overlap policy, orphaned schedules, registration rules.
import { Redis } from 'ioredis';
import { ChronosServer } from '../../lib/core/worker/server.js';
import {
  ChronosStateError,
  ChronosError,
  DuplicateScheduleError,
  InvalidOptionsError,
  InvalidScheduleError,
  ScheduleNotFoundError,
} from '../../lib/core/runtime/errors.js';
import { EventBus, type ChronosEvent } from '../../lib/core/runtime/events.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { SchedulerKeys } from '../../lib/core/redis/keys.js';
import { Scheduler, type SchedulerOptions } from '../../lib/core/scheduler/scheduler.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { deferred, recordingLogger, waitFor } from '../helpers/wait.js';
import { storedJson } from '../helpers/registry.js';
import { quietHourly } from '../helpers/quiet-spec.js';

let ns: string;
const started: { stop(): Promise<void> }[] = [];
const logger = recordingLogger();
beforeEach(() => {
  ns = newNamespace('sched');
});
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
  await deleteNamespace(ns);
});

function scheduler(options: SchedulerOptions = {}): Scheduler {
  const s = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, heartbeatInterval: 200, logger, ...options });
  started.push(s);
  return s;
}

function worker(events?: EventBus): ChronosServer {
  const w = new ChronosServer({ connection: redisUrl(), namespace: ns, logger, events });
  started.push({ stop: () => w.shutdown() });
  return w;
}

test('registration validates at once, naming the schedule and the value; after start it throws', async () => {
  const s = scheduler();
  expect(() => s.register({ name: 'bad', spec: '0 0 31 2 *' })).toThrow(InvalidScheduleError);
  expect(() => s.register({ name: 'bad', spec: '61 * * * *' })).toThrow(/"bad".*61/);
  expect(() => s.register({ name: 'tz', spec: '0 3 * * *', timeZone: 'Mars/Olympus' })).toThrow(/Mars\/Olympus/);
  expect(() => s.register({ name: 'x', spec: '@every 1s', catchUp: 'sometimes' as never })).toThrow(/catchUp/);
  s.register({ name: 'ok', spec: '@every 1s' });
  expect(() => s.register({ name: 'ok', spec: '@every 2s' })).toThrow(DuplicateScheduleError);
  await s.start();
  expect(() => s.register({ name: 'late', spec: '@every 1s' })).toThrow(ChronosStateError);
});

test('scheduler options are validated: leaderTtl below 1 s, unknown keys, unknown zone', () => {
  const err = (() => {
    try {
      new Scheduler({ connection: redisUrl(), leaderTtl: 500, timeZone: 'Nowhere/City', lease: 1 } as never);
    } catch (e) {
      return e as Error;
    }
  })();
  expect(err).toBeInstanceOf(InvalidOptionsError);
  expect(err?.message).toMatch(/leaderTtl: .*got 500/);
  expect(err?.message).toMatch(/Nowhere\/City/);
  expect(err?.message).toMatch(/unknown option "lease"/);
});

test('a Redis client with its own keyPrefix is refused with a clear error', () => {
  const client = new Redis(redisUrl(), { keyPrefix: 'app:', lazyConnect: true });
  expect(() => new Scheduler({ connection: client })).toThrow(/keyPrefix "app:".*namespace/);
  client.disconnect();
});

test('runtime API: add, triggerNow (cadence unchanged), pause, resume, remove; the task carries schedule and trigger', async () => {
  const events = new EventBus();
  const seen: ChronosEvent[] = [];
  events.subscribe((e) => seen.push(e));
  const w = worker(events);
  const runs: { id: string; schedule?: string; triggerAt?: number }[] = [];
  w.handle('ping', (t) => void runs.push({ id: t.id, schedule: t.schedule, triggerAt: t.triggerAt }));
  w.handle('tock', () => {});
  await w.start();
  const s = scheduler({ events });
  // `tock` fires every second beside `pinger`: its fires count trigger instants in the leader while pinger is paused
  s.register({ name: 'tock', spec: '@every 1s', type: 'tock' });
  await s.start();
  await waitFor(() => s.isLeader, 'leadership');
  await s.addSchedule({ name: 'pinger', spec: '@every 1s', type: 'ping' });
  await waitFor(() => runs.length >= 2, 'two fires');
  const fired = runs.filter((r) => !r.id.includes(':manual:'));
  expect(fired.length).toBeGreaterThanOrEqual(2);
  for (const r of fired) {
    expect(r.schedule).toBe('pinger');
    expect(r.triggerAt! % 1000).toBe(0);
    expect(r.id).toBe(`pinger:${r.triggerAt! / 1000}`);
  }
  const manualId = await s.triggerNow('pinger');
  await waitFor(() => runs.some((r) => r.id === manualId), 'the manual run');
  await s.pauseSchedule('pinger');
  expect(JSON.parse((await storedJson(w.redis, ns, 'pinger'))!).paused).toBe(true);
  // the leader reloads at its next renewal (every leaderTtl/2 = 500 ms); after that nothing fires.
  // Time is counted in tock's fires (enqueued half a period ahead: a fire of trigger t means it is t − 500 ms)
  const firedOf = (schedule: string) =>
    seen.filter((e) => e.type === 'schedule.fired' && e.schedule === schedule) as { triggerAt: number; taskId: string }[];
  const tockPast = (atMs: number) => firedOf('tock').some((e) => e.triggerAt - 500 >= atMs);
  const pausedAt = Date.now();
  await waitFor(() => tockPast(pausedAt + 1500), { what: 'a renewal and a trigger (tock fired past pausedAt + 1.5 s)' });
  // what pinger fired before the pause has run
  await waitFor(() => firedOf('pinger').every((e) => runs.some((r) => r.id === e.taskId)), { what: 'every pinger fire to run' });
  const count = runs.length;
  const firedCount = firedOf('pinger').length;
  const mark = Math.max(...firedOf('tock').map((e) => e.triggerAt));
  await waitFor(() => firedOf('tock').some((e) => e.triggerAt >= mark + 2000), { what: 'two more trigger instants (two more tock fires)' });
  expect(firedOf('pinger')).toHaveLength(firedCount);
  expect(runs.length).toBe(count);
  await s.resumeSchedule('pinger');
  await waitFor(() => runs.length > count, 'fires after resume', 5000);
  await s.removeSchedule('pinger');
  await expect(s.removeSchedule('pinger')).rejects.toThrow(ScheduleNotFoundError);
  await expect(s.triggerNow('nope')).rejects.toBeInstanceOf(ChronosError);
  expect(seen.some((e) => e.type === 'schedule.fired' && e.schedule === 'pinger')).toBe(true);
  expect(seen.some((e) => e.type === 'leader.acquired')).toBe(true);
});

test('the runtime API writes as the Inspector does: pause note, history, events, the guard on live code schedules', async () => {
  const events = new EventBus();
  const acted: Extract<ChronosEvent, { type: 'operator.acted' }>[] = [];
  events.subscribe((e) => e.type === 'operator.acted' && acted.push(e));
  const s = scheduler({ events, eligible: false }); // no Inspector in this app: the scheduler acts alone
  s.register({ name: 'code.job', spec: '@every 60s' });
  await s.start();
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns, livenessWindow: 1000 }); // only reads
  started.push({ stop: () => inspector.close() });
  const me = `app:${s.instanceId}`;
  await s.addSchedule({ name: 'rt', spec: '@every 1h', type: 'rt' });

  await s.pauseSchedule('rt');
  expect((await inspector.schedule('rt')).pause).toMatchObject({ note: '', actor: me });
  await inspector.pauseSchedule('rt', { note: 'vendor outage', actor: 'ops:ada' });
  await s.resumeSchedule('rt'); // drops the operator's note with the pause
  expect(await inspector.redis.hget(new SchedulerKeys(ns).pauseNotes, 'rt')).toBeNull();

  const id = await s.triggerNow('rt');
  expect((await inspector.scheduleHistory('rt')).map((f) => [f.outcome, f.taskId, f.by])).toEqual([['manual', id, me]]);
  expect(await inspector.findTask(id)).toMatchObject({ schedule: 'rt', state: 'pending' });

  // a schedule a live instance declares in code would come back: refused, as by the Inspector
  await expect(s.removeSchedule('code.job')).rejects.toBeInstanceOf(ChronosStateError);
  await s.pauseSchedule('rt');
  await s.removeSchedule('rt');
  expect(await inspector.redis.hget(new SchedulerKeys(ns).pauseNotes, 'rt')).toBeNull();
  expect((await inspector.schedules()).map((x) => x.name)).toEqual(['code.job']);
  expect(acted.map((e) => [e.action, e.schedule, e.actor])).toEqual([
    ['schedule.pause', 'rt', me],
    ['schedule.resume', 'rt', me],
    ['schedule.trigger', 'rt', me],
    ['schedule.pause', 'rt', me],
    ['schedule.remove', 'rt', me],
  ]);
});

test('overlap skip: no trigger is enqueued while the previous task of the schedule is pending or running', async () => {
  const events = new EventBus();
  const skipped = deferred();
  let nextSkip = deferred();
  events.subscribe((e) => {
    if (e.type !== 'schedule.skipped' || e.reason !== 'overlap') return;
    skipped.resolve();
    nextSkip.resolve();
    nextSkip = deferred();
  });
  const w = worker(events);
  const spans: [number, number][] = [];
  w.handle('slow', async (t) => {
    const start = Date.now();
    // runs until a trigger came due during it and was skipped (instead of sleeping past the next trigger)
    await nextSkip.promise;
    spans.push([start, Date.now()]);
    return t.id;
  });
  await w.start();
  const s = scheduler({ events });
  s.register({ name: 'job', spec: '@every 1s', type: 'slow', overlap: 'skip' });
  await s.start();
  await skipped.promise;
  await waitFor(() => spans.length >= 2, 'two runs', 10_000);
  expect(spans.length).toBeGreaterThanOrEqual(2);
  for (let i = 1; i < spans.length; i++) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[i - 1][1]);
});

test('a schedule no live instance declares is orphaned: it stops firing and the Inspector says so', async () => {
  const declaring = new Scheduler({
    connection: redisUrl(),
    namespace: ns,
    leaderTtl: 1000,
    heartbeatInterval: 200,
    logger,
    eligible: false,
  });
  declaring.register({ name: 'legacy', spec: '@every 1s' });
  await declaring.start();
  const leader = scheduler();
  leader.register({ name: 'current', spec: '@every 1s' });
  await leader.start();
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns, livenessWindow: 600 });
  try {
    await waitFor(async () => (await inspector.schedules()).length === 2, 'both schedules published');
    expect((await inspector.schedules()).find((s) => s.name === 'legacy')?.orphaned).toBe(false);
    await declaring.stop(); // stops heartbeating: after 3 heartbeats it is no longer live
    await waitFor(async () => (await inspector.schedules()).find((s) => s.name === 'legacy')?.orphaned, 'legacy to be orphaned', 5000);
    await waitFor(() => logger.lines.some((l) => /orphaned.*schedule=legacy/.test(l.message)), 'the leader to log it', 5000);
    const leaderInfo = await inspector.leader();
    expect(leaderInfo?.instance).toBe(leader.instanceId);
    expect(leaderInfo?.term).toBeGreaterThan(0);
  } finally {
    await inspector.close();
  }
});

test('an instance that is not eligible never leads; two namespaces elect two leaders', async () => {
  const follower = scheduler({ eligible: false });
  await follower.start();
  const other = newNamespace('other');
  const a = scheduler();
  const b = new Scheduler({ connection: redisUrl(), namespace: other, leaderTtl: 1000, logger });
  started.push(b);
  await Promise.all([a.start(), b.start()]);
  await waitFor(() => a.isLeader && b.isLeader, 'a leader in each namespace');
  expect(follower.isLeader).toBe(false);
  await b.stop();
  await deleteNamespace(other);
});

test('a schedule removed and added again under its name does not show its namesake\'s last fire (trial 9: "last fired 56 s ago")', async () => {
  const events = new EventBus();
  const fired = deferred();
  events.subscribe((e) => e.type === 'schedule.fired' && e.schedule === 'again' && fired.resolve());
  const s = scheduler({ events });
  await s.start();
  await s.addSchedule({ name: 'again', spec: '@every 1s' });
  await fired.promise;
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns });
  started.push({ stop: () => inspector.close() });
  expect((await inspector.schedule('again')).lastFiredAt).toBeGreaterThan(0);
  await s.pauseSchedule('again');
  await s.removeSchedule('again');
  await s.addSchedule({ name: 'again', spec: quietHourly() }); // this leader must not fire it before the read below
  const info = await inspector.schedule('again');
  expect(info.lastFiredAt).toBeUndefined();
  expect(info.next[0]).toBeGreaterThan(info.registeredAt!);
});

test('an act or read on one schedule by a name no schedule can have throws the invalid-name error addSchedule gives (trial 23)', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns });
  started.push({ stop: () => inspector.close() });
  const acts: [string, (name: never) => Promise<unknown>][] = [
    ['Scheduler.removeSchedule', (n) => s.removeSchedule(n)],
    ['Scheduler.pauseSchedule', (n) => s.pauseSchedule(n)],
    ['Scheduler.resumeSchedule', (n) => s.resumeSchedule(n)],
    ['Scheduler.triggerNow', (n) => s.triggerNow(n)],
    ['Inspector.pauseSchedule', (n) => inspector.pauseSchedule(n)],
    ['Inspector.resumeSchedule', (n) => inspector.resumeSchedule(n)],
    ['Inspector.triggerSchedule', (n) => inspector.triggerSchedule(n)],
    ['Inspector.removeSchedule', (n) => inspector.removeSchedule(n)],
    ['Inspector.backfillSchedule', (n) => inspector.backfillSchedule(n, 0, 1)],
    ['Inspector.schedule', (n) => inspector.schedule(n)],
    ['Inspector.scheduleHistory', (n) => inspector.scheduleHistory(n)],
  ];
  // before: null and 5 failed with "Cannot read properties of null (reading 'length')" (a TypeError in
  // the shard hashing), 'a b' and '' with ScheduleNotFoundError
  for (const name of [null, undefined, 5, 'a b', '', 'x'.repeat(201)] as never[]) {
    const byAdd = await s.addSchedule({ name, spec: '@daily' }).catch((e: unknown) => e);
    expect(byAdd).toBeInstanceOf(InvalidScheduleError);
    for (const [what, act] of acts) {
      const err = await act(name).catch((e: unknown) => e);
      expect([what, name, err instanceof InvalidScheduleError]).toEqual([what, name, true]);
      expect([what, (err as Error).message]).toEqual([what, (byAdd as Error).message]);
      expect((err as Error).message).toMatch(/name: expected 1-200 characters/);
    }
  }
  // '.' and '..', which an earlier version stored, are still names an act looks up
  for (const [, act] of acts) await expect(act('..' as never)).rejects.toBeInstanceOf(ScheduleNotFoundError);
  expect(await inspector.schedules()).toEqual([]);
});
