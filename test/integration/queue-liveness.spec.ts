// Liveness-driven recovery (issue 15, target 1) with real worker processes: a SIGKILLed worker's tasks
// come back at once (long before the visibility timeout), while a busy or stopped worker keeps its
// tasks until the visibility timeout, and a Redis restart makes nobody look dead.
import { beforeEach, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { DEFAULTS } from '../../lib/core/runtime/defaults.js';
import { GlobalKeys, QueueKeys } from '../../lib/core/redis/keys.js';
import { killAllChildren } from '../helpers/children.js';
import { startWorker, useWorkerRig } from '../helpers/worker-rig.js';
import { countBy, readRecords, type Rec } from '../helpers/records.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

const rig = useWorkerRig('live');
let ns: string;
let recordKey: string;
let client: QueueClient;
let redis: Redis;
let keys: QueueKeys;
beforeEach(() => {
  ({ ns, recordKey, client, redis, keys } = rig);
});

const worker = (name: string, env: Record<string, number | string> = {}) => startWorker(rig, name, env);
const records = () => readRecords(redis, recordKey);
const phase = (recs: Rec[], p: string) => recs.filter((r) => r.phase === p);

test('a worker SIGKILLed with 20 tasks in flight: a live survivor runs every one long before the visibility timeout', async () => {
  const w1 = await worker('W1', { CONCURRENCY: 20 }); // default visibility timeout (30 s) and recover interval
  const enqueued = await client.enqueueBulk(Array.from({ length: 20 }, (_, i) => ({ type: 'slow', payload: { ms: 120_000, i } })));
  await waitFor(async () => countBy(await records(), 'start').size === 20, 'W1 to start all 20');
  await worker('W2', { CONCURRENCY: 20, SLOW_CAP_MS: 20 });
  const killedAt = Date.now();
  w1.kill('SIGKILL');
  await w1.exited;
  await waitFor(async () => countBy(await records(), 'done').size === 20, 'W2 to finish all 20', 25_000);
  const recs = await records();
  const dones = phase(recs, 'done');
  expect(dones.map((r) => r.id).sort()).toEqual(enqueued.map((e) => e.id).sort()); // every task, none lost
  expect(dones.every((r) => r.instance === 'W2')).toBe(true);
  for (const n of countBy(recs, 'done').values()) expect(n).toBe(1);
  for (const n of countBy(recs, 'start').values()) expect(n).toBe(2); // once on W1 (killed), once on W2
  // found dead by its liveness, not by the visibility timeout (the ≤ 5 s figure is measured in bench w6)
  for (const r of dones) expect(r.t - killedAt).toBeLessThan(DEFAULTS.visibilityTimeoutMs);
  expect(phase(recs, 'start').every((r) => r.retried === 0)).toBe(true); // a crash does not use the retry budget
  expect(await redis.zscore(new GlobalKeys(ns).servers, 'W1')).toBeNull(); // the Inspector no longer lists it
  await waitFor(async () => ((await redis.call('XPENDING', keys.stream, 'chronos')) as [number])[0] === 0, 'nothing pending');
});

test('a handler busy-looping the main event loop for 10 s is not reclaimed: it runs once, with no duplicate', async () => {
  const w1 = await worker('W1');
  const { id } = await client.enqueue('spin', { ms: 10_000 });
  await waitFor(async () => phase(await records(), 'start').length === 1, 'W1 to start the busy task');
  await worker('W2');
  await waitFor(async () => phase(await records(), 'done').length === 1, 'the busy task to finish', 30_000);
  // W2 watched throughout, and keeps running: a quick task afterwards still goes through
  await client.enqueue('quick', {});
  await waitFor(async () => phase(await records(), 'done').length === 2, 'a quick task after it');
  const recs = await records();
  expect(recs.filter((r) => r.id === id).map((r) => `${r.instance}:${r.phase}`)).toEqual(['W1:start', 'W1:done']);
  expect(await redis.zcard(keys.reclaimed)).toBe(0); // nobody reclaimed anything
  expect(w1.alive).toBe(true);
});

test('a SIGSTOPped worker keeps its task until the visibility timeout; then a survivor reclaims it', async () => {
  const vis = 6000;
  // both cap the task's sleep at 20 ms once it is reclaimed; the first start (the one stopped) is not capped
  const children = {
    W1: await worker('W1', { VISIBILITY_MS: vis, SLOW_CAP_MS: 20, CAP_AFTER_FIRST: 1 }),
    W2: await worker('W2', { VISIBILITY_MS: vis, SLOW_CAP_MS: 20, CAP_AFTER_FIRST: 1 }),
  };
  // enqueued once both run: either may take it; the one that starts it is stopped
  const { id } = await client.enqueue('slow', { ms: 120_000 });
  const start = await waitFor(async () => phase(await records(), 'start')[0], 'a worker to start T');
  const stopped = children[start.instance as 'W1' | 'W2'];
  const other = start.instance === 'W1' ? 'W2' : 'W1';
  // when T was delivered (or its claim last renewed), by Redis time: now − its idle time in the
  // pending entries list (the start record comes a round trip or more later, on a loaded machine)
  const [[, time], [, rows]] = (await redis.multi().time().xpending(keys.stream, 'chronos', '-', '+', 10).exec()) as [
    [null, [string, string]],
    [null, [string, string, number, number][]],
  ];
  const deliveredAt = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000) - rows[0][2];
  stopped.kill('SIGSTOP');
  try {
    const done = await waitFor(async () => phase(await records(), 'done')[0], 'T done by the survivor', 30_000);
    expect(done.instance).toBe(other);
    expect(done.id).toBe(id);
    // reclaimed by the visibility timeout, not before: the entry was idle past vis (Redis time of the reclaim)
    const reclaimedAt = Number(await waitFor(async () => (await redis.zrange(keys.reclaimed, 0, -1, 'WITHSCORES'))[1], 'the reclaim'));
    expect(reclaimedAt - deliveredAt).toBeGreaterThanOrEqual(vis - 1); // idle times are whole ms
    expect(phase(await records(), 'start').map((r) => r.instance)).toEqual([start.instance, other]);
  } finally {
    stopped.kill('SIGCONT');
  }
});

test("a Redis restart (data kept) makes no live worker look dead: nobody's task is reclaimed or run twice", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chronos-live-'));
  const priv = await PrivateRedis.start(['--dir', dir]);
  const pclient = new QueueClient({ connection: priv.url, namespace: ns });
  const pkeys = new QueueKeys(ns, 'default');
  const pr = new Redis(priv.url);
  try {
    // W1 comes back 3 s after Redis does (reconnect attempts 3 s apart): W2 must not take it for dead meanwhile
    await worker('W1', { CHRONOS_URL: priv.url, CONCURRENCY: 4, RETRY_MS: 3000 });
    await worker('W2', { CHRONOS_URL: priv.url, CONCURRENCY: 4 });
    // both past their reconnect grace and judging: a presence tick of each is in <ns>:live
    await waitFor(async () => (await pr.zcard(new GlobalKeys(ns).live)) === 2, 'both workers present');
    await pclient.enqueueBulk(Array.from({ length: 6 }, (_, i) => ({ type: 'slow', payload: { ms: 12_000, i } })));
    await waitFor(async () => countBy(await records(), 'start').size === 6, 'all 6 started');
    pr.disconnect();
    await priv.restartKeepingData(dir);
    const pr2 = new Redis(priv.url);
    try {
      await waitFor(async () => countBy(await records(), 'done').size === 6, 'all 6 done', 40_000);
      const recs = await records();
      for (const n of countBy(recs, 'start').values()) expect(n).toBe(1); // nobody reclaimed a live worker's task
      for (const n of countBy(recs, 'done').values()) expect(n).toBe(1);
      expect(await pr2.zcard(pkeys.reclaimed)).toBe(0);
      await waitFor(async () => ((await pr2.call('XPENDING', pkeys.stream, 'chronos')) as [number])[0] === 0, 'the acks');
    } finally {
      pr2.disconnect();
    }
  } finally {
    await pclient.close();
    await killAllChildren();
    await priv.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a worker restarted with the same serverId takes back at start what its previous process left (no waiting for the timeout)', async () => {
  const first = await worker('W1', { CONCURRENCY: 5 }); // default visibility timeout (30 s)
  await client.enqueueBulk(Array.from({ length: 5 }, (_, i) => ({ type: 'slow', payload: { ms: 120_000, i } })));
  await waitFor(async () => countBy(await records(), 'start').size === 5, 'W1 to start all 5');
  const killedAt = Date.now();
  first.kill('SIGKILL');
  await first.exited;
  await worker('W1', { CONCURRENCY: 5, SLOW_CAP_MS: 20 }); // the same id, alone: nobody else could reclaim them
  await waitFor(async () => countBy(await records(), 'done').size === 5, 'the new W1 to finish all 5', 25_000);
  const recs = await records();
  for (const n of countBy(recs, 'start').values()) expect(n).toBe(2);
  for (const r of phase(recs, 'done')) expect(r.t - killedAt).toBeLessThan(DEFAULTS.visibilityTimeoutMs);
});
