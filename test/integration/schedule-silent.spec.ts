// Issue 24, item 8: silent schedules. Expected fires (from the spec) vs fired over the last hour and
// day; a schedule that should have fired and did not (no leader, not firing, paused for long, its
// fires failing) is flagged, exported as chronos_schedule_silent / chronos_schedule_missed_triggers,
// and shown on the console's overview.
import * as prom from 'prom-client';
import { ChronosMetrics } from '../../lib/core/observability/metrics.js';
import { QueueKeys, SchedulerKeys, shardOf } from '../../lib/core/redis/keys.js';
import { recordFires } from '../../lib/core/scheduler/history.js';
import { engineTime } from '../../lib/core/runtime/time.js';
import { createConsoleHandler } from '../../lib/console/handler.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cliRunner } from '../helpers/cli.js';
import { QueueRig } from '../helpers/queue.js';
import { registryKey, storedJson } from '../helpers/registry.js';

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

const MIN = 60_000;

/** Adds a runtime schedule registered `agoMs` ago whose last fire was `lastAgoMs` ago (state seeded as the engine stores it). */
async function seed(name: string, every: string, agoMs: number, lastAgoMs: number): Promise<void> {
  await rig.inspector.addSchedule({ name, spec: every, type: 'report', queue: 'reports' });
  const stored = JSON.parse((await storedJson(rig.client.redis, rig.namespace, name))!) as Record<string, unknown>;
  const now = engineTime.now();
  await rig.client.redis.hset(registryKey(rig.namespace, name), name, JSON.stringify({ ...stored, registeredAt: now - agoMs }));
  await rig.client.redis.hset(new QueueKeys(rig.namespace, 'reports').lastFired, name, String(Math.floor((now - lastAgoMs) / MIN) * MIN));
}

/** The fleet gauges of one scrape, as `name{labels} value` lines for the schedule gauges. */
async function scrape(): Promise<string[]> {
  const registry = new prom.Registry();
  const m = new ChronosMetrics({ registry, inspector: rig.inspector });
  try {
    const text = await registry.metrics();
    return text.split('\n').filter((l) => /^chronos_schedule_(silent|missed_triggers)\{/.test(l));
  } finally {
    m.close();
  }
}

test('no leader: a schedule whose triggers are overdue is silent (no-leader), with its missed triggers; expected vs fired over the hour and day', async () => {
  await seed('report.minutely', '@every 60s', 3 * 3600_000, 10 * MIN); // registered 3 h ago, last fired 10 minutes ago
  const [a] = await rig.inspector.scheduleActivity();
  expect(a.silent).toMatchObject({
    reason: 'no-leader',
    message: expect.stringMatching(/^(9|10) triggers due since .* not fired: no leader$/) as unknown,
  });
  expect(a.overdue).toBeGreaterThanOrEqual(9);
  expect(a.hour.expected).toBe(60);
  expect(a.hour.fired).toBe(60 - 10);
  expect(a.day.expected).toBe(180); // since its registration 3 h ago
  expect(a.day.fired).toBe(170);
  expect(await scrape()).toEqual([
    expect.stringMatching(/^chronos_schedule_missed_triggers\{schedule="report\.minutely"\} (9|10)$/),
    'chronos_schedule_silent{schedule="report.minutely",reason="no_leader"} 1',
  ]);
  // chronos stats says so
  const stats = await cliRunner(() => rig.namespace).chronos('stats');
  expect(stats.out).toMatch(/\nSILENT: schedule report\.minutely: (9|10) triggers due since .* not fired: no leader\n/);
  // with a leader of its shard that does not fire it: not-firing
  const [sec] = await rig.client.redis.time();
  const shard = String(shardOf('report.minutely'));
  await rig.client.redis.hset(new SchedulerKeys(rig.namespace).shards, shard, `stuck-leader|1|${Number(sec) * 1000 + 60_000}`);
  expect((await rig.inspector.scheduleActivity())[0].silent?.reason).toBe('not-firing');
  // fired up to now: not silent, nothing missed
  await rig.client.redis.hset(
    new QueueKeys(rig.namespace, 'reports').lastFired,
    'report.minutely',
    String(Math.floor(engineTime.now() / MIN) * MIN),
  );
  const [b] = await rig.inspector.scheduleActivity();
  expect(b.silent).toBeUndefined();
  expect(b.overdue).toBe(0);
  expect(await scrape()).toEqual(['chronos_schedule_missed_triggers{schedule="report.minutely"} 0']);
});

test('paused for an hour or more is silent (paused); a short pause is not; its triggers are skipped, not missed', async () => {
  await seed('report.paused', '@every 60s', 3 * 3600_000, 0);
  await rig.inspector.pauseSchedule('report.paused', { note: 'disk maintenance', actor: 'ops:ada' });
  expect((await rig.inspector.scheduleActivity())[0].silent).toBeUndefined(); // paused just now
  const note = JSON.parse((await rig.client.redis.hget(new SchedulerKeys(rig.namespace).pauseNotes, 'report.paused'))!) as Record<
    string,
    unknown
  >;
  await rig.client.redis.hset(
    new SchedulerKeys(rig.namespace).pauseNotes,
    'report.paused',
    JSON.stringify({ ...note, at: engineTime.now() - 2 * 3600_000 }),
  );
  const [a] = await rig.inspector.scheduleActivity();
  expect(a.silent).toMatchObject({ reason: 'paused', message: 'paused for 2h+ by ops:ada ("disk maintenance")' });
  expect(a.overdue).toBe(0); // a paused schedule's triggers are skipped, not missed
  // nor expected: paused 2 h ago, its last hour expects none (trial 5: "1 h: 0 of 60" for a paused schedule)
  expect(a.hour).toMatchObject({ expected: 0, fired: 0 });
});

test('every fire failing: the last three fires whose tasks are dead make it silent (failing); the marks show on time, late, skipped, failed', async () => {
  await seed('report.flaky', '@every 60s', 3600_000, 0);
  const k = new QueueKeys(rig.namespace, 'reports');
  const now = engineTime.now();
  const t = (i: number) => Math.floor(now / MIN) * MIN - (5 - i) * MIN;
  await recordFires(rig.client.redis, k, [
    { schedule: 'report.flaky', triggerAt: t(0), at: t(0) + 5, outcome: 'enqueued', taskId: 'report.flaky:0' },
    { schedule: 'report.flaky', triggerAt: t(1), at: t(1) + 5000, outcome: 'enqueued', taskId: 'report.flaky:1' },
    { schedule: 'report.flaky', triggerAt: t(2), at: t(2), outcome: 'skipped-overlap' },
    { schedule: 'report.flaky', triggerAt: t(3), at: t(3) + 5, outcome: 'enqueued', taskId: 'report.flaky:3' },
    { schedule: 'report.flaky', triggerAt: t(4), at: t(4) + 5, outcome: 'enqueued', taskId: 'report.flaky:4' },
    { schedule: 'report.flaky', triggerAt: t(5), at: t(5) + 5, outcome: 'enqueued', taskId: 'report.flaky:5' },
  ]);
  for (const i of [3, 4, 5]) await rig.client.redis.zadd(k.dead, now, `report.flaky:${i}`);
  const [a] = await rig.inspector.scheduleActivity();
  expect(a.fires.map((f) => f.mark)).toEqual(['on-time', 'late', 'skipped', 'failed', 'failed', 'failed']);
  expect(a.silent).toMatchObject({ reason: 'failing' });
  expect(a.hour).toMatchObject({ expected: 60, exact: true });

  // the console's overview flags it beside the warnings
  const handler = createConsoleHandler({ inspector: rig.inspector });
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const port = (server.address() as AddressInfo).port;
    // the overview judges from the spec and lastFired (no history read): no leader, overdue → flagged
    await rig.client.redis.hset(k.lastFired, 'report.flaky', String(t(0) - 30 * MIN));
    const o = (await (await fetch(`http://127.0.0.1:${port}/api/overview`)).json()) as {
      warnings: { schedule?: string; message: string }[];
    };
    expect(o.warnings.filter((w) => w.schedule)).toEqual([
      {
        schedule: 'report.flaky',
        message: expect.stringMatching(/^schedule report\.flaky is silent: \d+ triggers due since .* not fired: no leader$/) as unknown,
      },
    ]);
  } finally {
    server.close();
  }
});

test('the overview names at most 20 silent schedules and counts the rest: its size does not grow with the registry (trial 4 F2)', async () => {
  for (let i = 0; i < 23; i++) await seed(`report.s${String(i).padStart(2, '0')}`, '@every 60s', 3 * 3600_000, 10 * MIN);
  const handler = createConsoleHandler({ inspector: rig.inspector });
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const port = (server.address() as AddressInfo).port;
    const o = (await (await fetch(`http://127.0.0.1:${port}/api/overview`)).json()) as {
      schedules: unknown;
      warnings: { schedule?: string; message: string }[];
    };
    expect(o.schedules).toEqual({ total: 23, paused: 0, orphaned: 0, ended: 0, invalid: 0, silent: 23, countedAt: expect.any(Number) });
    expect(o.warnings.filter((w) => w.schedule).map((w) => w.schedule)).toEqual(
      [...Array(20).keys()].map((i) => `report.s${String(i).padStart(2, '0')}`),
    );
    expect(o.warnings.at(-1)).toEqual({ message: "and 3 more silent schedules (the schedules page shows each one's activity)" });
  } finally {
    server.close();
  }
});
