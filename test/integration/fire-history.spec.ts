// fire.lua writes a schedule's fire history with the fire itself (no second round trip): the
// records readFires returns, per outcome; trimmed to HISTORY.limit once it holds limit + trimSlack;
// its TTL renewed only when the trigger's flag is upper case; a pause's skips, one record with their count.
import type { Redis } from 'ioredis';
import { fireScript, type FireTrigger } from '../../lib/core/redis/commands/schedule.js';
import { openConnection } from '../../lib/core/redis/connection.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { FIRE_MODE, HISTORY, META, newMeta, type FireMode } from '../../lib/core/redis/protocol.js';
import { readFires } from '../../lib/core/scheduler/history.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';
import { EventBus } from '../../lib/core/runtime/events.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { Inspector } from '../../lib/core/admin/inspector.js';

let ns: string;
let client: Redis;
let keys: QueueKeys;
beforeEach(() => {
  ns = newNamespace('fhist');
  client = openConnection(redisUrl()).client as Redis;
  keys = new QueueKeys(ns, 'q');
});
afterEach(async () => {
  client.disconnect();
  await deleteNamespace(ns);
});

const NOW = 1_700_000_000_000;

function trigger(schedule: string, triggerAt: number, mode: FireMode, history?: FireTrigger['history']): FireTrigger {
  const meta = newMeta(0, 0, triggerAt);
  meta[META.schedule] = schedule;
  meta[META.triggerAt] = triggerAt;
  const t: FireTrigger = {
    schedule,
    triggerAt,
    type: 'job',
    payload: 'null',
    meta: JSON.stringify(meta),
    dedupTtlMs: 60_000,
    mode,
    generation: 0,
  };
  if (history !== undefined) t.history = history;
  return t;
}

test('each outcome leaves the record the Inspector reads; early and stale leave none; no flag, no record', async () => {
  const r = await fireScript(
    client,
    keys,
    NOW,
    0,
    [
      trigger('a', NOW - 3000, FIRE_MODE.advanceOnly, 'p'),
      trigger('a', NOW - 2000, FIRE_MODE.advanceOnly, 'c'),
      trigger('a', NOW - 1000, FIRE_MODE.allowOverlap, 'r'),
      trigger('a', NOW - 1000, FIRE_MODE.allowOverlap, 'r'), // stale: at lastFired
      trigger('a', NOW + 5000, FIRE_MODE.allowOverlap, 'r'), // early
      trigger('b', NOW, FIRE_MODE.allowOverlap), // no flag
    ],
    'leader-1',
  );
  expect(r.results).toEqual(['advanced', 'advanced', 'enqueued', 'stale', 'early', 'enqueued']);
  expect(await readFires(client, keys, 'a', 10)).toEqual([
    { triggerAt: NOW - 1000, at: NOW, outcome: 'enqueued', taskId: `a:${(NOW - 1000) / 1000}`, by: 'leader-1' },
    { triggerAt: NOW - 2000, at: NOW, outcome: 'skipped-catch-up', by: 'leader-1' },
    { triggerAt: NOW - 3000, at: NOW, outcome: 'skipped-paused', by: 'leader-1' },
  ]);
  expect(await client.exists(keys.history('b'))).toBe(0);
  // a trigger fired before: its dedup key stands after lastFired was lost
  await client.del(keys.lastFired);
  const again = await fireScript(client, keys, NOW, 0, [trigger('a', NOW - 1000, FIRE_MODE.allowOverlap, 'r')], 'leader-"2"');
  expect(again.results).toEqual(['duplicate']);
  expect((await readFires(client, keys, 'a', 1))[0]).toEqual({
    triggerAt: NOW - 1000,
    at: NOW,
    outcome: 'duplicate',
    taskId: `a:${(NOW - 1000) / 1000}`,
    by: 'leader-"2"',
  });
});

test('the list is trimmed to HISTORY.limit once it holds limit + trimSlack; the TTL is renewed only on an upper-case flag', async () => {
  const fires = HISTORY.limit + HISTORY.trimSlack - 1;
  const triggers = Array.from({ length: fires }, (_, i) => trigger('a', NOW - (fires - i) * 1000, FIRE_MODE.allowOverlap, 'r'));
  await fireScript(client, keys, NOW, 0, triggers, 'l');
  expect(await client.llen(keys.history('a'))).toBe(fires);
  expect(await client.pttl(keys.history('a'))).toBe(-1);
  await fireScript(client, keys, NOW, 0, [trigger('a', NOW, FIRE_MODE.allowOverlap, 'R')], 'l');
  expect(await client.llen(keys.history('a'))).toBe(HISTORY.limit);
  expect((await readFires(client, keys, 'a', 1))[0].triggerAt).toBe(NOW);
  const ttl = await client.pttl(keys.history('a'));
  expect(ttl).toBeGreaterThan(HISTORY.ttlMs - 60_000);
  expect(ttl).toBeLessThanOrEqual(HISTORY.ttlMs);
});

test('a pause leaves one skipped-paused record with its count, also when a trigger is enqueued at the same tick (trial 7: no record, no count)', async () => {
  const events = new EventBus();
  const pauseSkips: number[] = [];
  events.subscribe((e) => e.type === 'schedule.skipped' && e.reason === 'pause' && pauseSkips.push(e.count));
  const s = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, events, logger: recordingLogger() });
  const insp = new Inspector({ connection: redisUrl(), namespace: ns });
  try {
    await s.start();
    await s.addSchedule({ name: 'fast', spec: '@every 1s' });
    const history = () => insp.scheduleHistory('fast', 50);
    await waitFor(async () => (await history()).some((f) => f.outcome === 'enqueued'), 'a first fire');
    await s.pauseSchedule('fast');
    const pausedAt = Date.now();
    await waitFor(() => Date.now() >= pausedAt + 3500, 'three triggers into the pause');
    await s.resumeSchedule('fast');
    await waitFor(() => pauseSkips.length > 0, 'the skip reported');
    // the first tick after the resume enqueues the next trigger too (every 1 s, 500 ms ahead)
    await waitFor(async () => {
      const h = await history();
      return h.some((f) => f.outcome === 'skipped-paused') && h[0].outcome === 'enqueued' && h[0].triggerAt > pausedAt + 3500;
    }, 'the skip recorded and a trigger after the resume enqueued');
    const skips = (await history()).filter((f) => f.outcome === 'skipped-paused');
    expect(skips).toEqual([expect.objectContaining({ count: pauseSkips[0] })]);
    expect(pauseSkips[0]).toBeGreaterThanOrEqual(3);
  } finally {
    await s.stop();
    await insp.close();
  }
});

describe('historyLimit (a full history is about 14.5 KB per schedule: 14.5 GB at 1,000,000 schedules)', () => {
  test('fire.lua trims the list to the limit it is given, once it holds a tenth more (at least 1)', async () => {
    const fire = (i: number, limit: number) =>
      fireScript(client, keys, NOW, 0, [trigger('a', NOW - 100_000 + i * 1000, FIRE_MODE.allowOverlap, 'r')], 'l', limit);
    for (let i = 0; i < 3; i++) await fire(i, 3);
    expect(await client.llen(keys.history('a'))).toBe(3);
    await fire(3, 3); // 4 = 3 + its slack of 1: trimmed back to 3, the newest kept
    expect((await readFires(client, keys, 'a', 10)).map((f) => f.triggerAt)).toEqual([3, 2, 1].map((i) => NOW - 100_000 + i * 1000));
    for (let i = 4; i < 4 + 24; i++) await fire(i, 20); // a limit of 20 trims at 22
    expect(await client.llen(keys.history('a'))).toBeLessThanOrEqual(21);
    expect(await client.llen(keys.history('a'))).toBeGreaterThanOrEqual(20);
  });

  test('a scheduler with historyLimit 0 fires as before and writes no history; 2 keeps at most 2 + 1', async () => {
    const run = async (historyLimit: number, name: string) => {
      const s = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, historyLimit, logger: recordingLogger() });
      const stream = new QueueKeys(ns, 'default').stream;
      try {
        await s.start();
        await s.addSchedule({ name, spec: '@every 1s' });
        const fired = async () => (await client.xrange(stream, '-', '+')).filter(([, f]) => f.join(' ').includes(`${name}:`)).length;
        await waitFor(async () => (await fired()) >= 5, `five fires of ${name}`);
      } finally {
        await s.stop();
      }
      return client.llen(new QueueKeys(ns, 'default').history(name));
    };
    expect(await run(0, 'quiet')).toBe(0);
    expect(await client.exists(new QueueKeys(ns, 'default').history('quiet'))).toBe(0);
    const kept = await run(2, 'short');
    expect(kept).toBeGreaterThanOrEqual(2);
    expect(kept).toBeLessThanOrEqual(3);
  });

  test('historyLimit is an integer from 0 to 100, refused naming the value', () => {
    for (const bad of [-1, 1.5, 101, '10', null]) {
      expect(() => new Scheduler({ connection: redisUrl(), namespace: ns, historyLimit: bad as number })).toThrow(
        new RegExp(`historyLimit: expected an integer (>= 0|from 0 to 100), got ${bad === '10' ? '"10"' : String(bad)}`),
      );
    }
  });
});
