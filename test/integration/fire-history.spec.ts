// fire.lua writes a schedule's fire history with the fire itself (no second round trip): the
// records readFires returns, per outcome; trimmed to HISTORY.limit once it holds limit + trimSlack;
// its TTL renewed only when the trigger's flag is upper case.
import type { Redis } from 'ioredis';
import { fireScript, type FireTrigger } from '../../lib/core/redis/commands/schedule.js';
import { openConnection } from '../../lib/core/redis/connection.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { FIRE_MODE, HISTORY, META, newMeta, type FireMode } from '../../lib/core/redis/protocol.js';
import { readFires } from '../../lib/core/scheduler/history.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

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
