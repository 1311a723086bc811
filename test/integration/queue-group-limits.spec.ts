// Per-group limits (issue 21) with real worker processes: groupConcurrency holds across 3 workers for
// every group (judged by the order of the start/done records every handler pushes to one Redis list: a
// start is recorded after the hand-out, a done before the ack, so the running count read from the list
// is never below the real one), an override per group applies, a change at runtime applies, a
// SIGKILLed worker's group slots free by liveness, a SIGSTOPped one keeps them until its visibility
// timeout; a group rate holds per group by Redis time. Nothing is lost or run twice.
import { beforeEach, jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { DEFAULTS } from '../../lib/core/runtime/defaults.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { startWorker, useWorkerRig } from '../helpers/worker-rig.js';
import { countBy, readRecords, type Rec } from '../helpers/records.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

const rig = useWorkerRig('glimits');
let recordKey: string;
let client: QueueClient;
let redis: Redis;
let keys: QueueKeys;
beforeEach(() => {
  ({ recordKey, client, redis, keys } = rig);
});

const worker = (name: string, env: Record<string, number | string> = {}) => startWorker(rig, name, env);
const records = () => readRecords(redis, recordKey);
/** `n` slow tasks of `ms` in each of `groups`, interleaved. */
const slow = (groups: string[], n: number, ms: number) =>
  client.enqueueBulk(
    Array.from({ length: n * groups.length }, (_, i) => ({
      type: 'slow',
      payload: { ms, i },
      options: { group: groups[i % groups.length] },
    })),
  );

/** The most tasks running at once by the order of the records (start +1, done -1), per group. */
function peaks(recs: readonly Rec[]): Map<string, number> {
  const running = new Map<string, number>();
  const max = new Map<string, number>();
  for (const r of recs) {
    const g = String(r.group);
    const n = (running.get(g) ?? 0) + (r.phase === 'start' ? 1 : r.phase === 'done' ? -1 : 0);
    running.set(g, n);
    max.set(g, Math.max(max.get(g) ?? 0, n));
  }
  return max;
}

/** Every task done exactly once, and started once (a crash excepted: `restarted` ids may start twice). */
function onceEach(recs: Rec[], ids: string[], restarted = new Set<string>()): void {
  const done = countBy(recs, 'done');
  expect([...done.keys()].sort()).toEqual([...ids].sort());
  for (const n of done.values()) expect(n).toBe(1);
  for (const [id, n] of countBy(recs, 'start')) expect(n).toBe(restarted.has(id) ? 2 : 1);
}

test('groupConcurrency 2 across 3 workers of c=10, with an override of 4 for one group: no group over its limit', async () => {
  await client.setQueueLimits('default', { groupConcurrency: 2, groups: { vip: { concurrency: 4 } } });
  for (const w of ['W1', 'W2', 'W3']) await worker(w, { CONCURRENCY: 10 });
  const tasks = await slow(['a', 'b', 'c', 'vip'], 8, 150);
  await waitFor(async () => countBy(await records(), 'done').size === 32, 'all 32 tasks done', 60_000);
  const recs = await records();
  const p = peaks(recs);
  // exactly the limit: bound and used
  expect(Object.fromEntries(p)).toEqual({ a: 2, b: 2, c: 2, vip: 4 });
  onceEach(
    recs,
    tasks.map((t) => t.id),
  );
  await waitFor(async () => (await redis.scard(keys.groupRunning('a'))) === 0, 'no group slot left taken');
});

test('a group limit changed at runtime applies: 1, then 3', async () => {
  await client.setQueueLimits('default', { groupConcurrency: 1 });
  for (const w of ['W1', 'W2']) await worker(w, { CONCURRENCY: 10 });
  const tasks = await slow(['a'], 18, 150);
  await waitFor(async () => countBy(await records(), 'done').size >= 3, '3 tasks done under groupConcurrency 1');
  const before = (await records()).length; // read before the change: a later record may be a start the new limit allowed
  await client.setQueueLimits('default', { groupConcurrency: 3 });
  await waitFor(async () => countBy(await records(), 'done').size === 18, 'all tasks done', 60_000);
  const recs = await records();
  expect(peaks(recs.slice(0, before)).get('a')).toBe(1);
  expect(peaks(recs).get('a')).toBe(3);
  onceEach(
    recs,
    tasks.map((t) => t.id),
  );
});

test("a SIGKILLed worker's group slots free by liveness, long before the visibility timeout", async () => {
  await client.setQueueLimits('default', { groupConcurrency: 1 });
  const w1 = await worker('W1', { CONCURRENCY: 10 });
  const held = await slow(['a', 'b'], 1, 120_000);
  await waitFor(async () => countBy(await records(), 'start').size === 2, 'W1 to hold both groups');
  await worker('W2', { CONCURRENCY: 10, SLOW_CAP_MS: 20 });
  const more = await slow(['a', 'b'], 3, 20);
  const killedAt = Date.now();
  w1.kill('SIGKILL');
  await w1.exited;
  await waitFor(async () => countBy(await records(), 'done').size === 8, 'W2 to run all 8', 25_000);
  const recs = await records();
  onceEach(
    recs,
    [...held, ...more].map((t) => t.id),
    new Set(held.map((t) => t.id)),
  );
  const w2 = recs.filter((r) => r.instance === 'W2');
  expect(Object.fromEntries(peaks(w2))).toEqual({ a: 1, b: 1 });
  for (const r of w2.filter((x) => x.phase === 'done')) expect(r.t - killedAt).toBeLessThan(DEFAULTS.visibilityTimeoutMs);
});

test('a SIGSTOPped worker keeps its group slots until its visibility timeout', async () => {
  const vis = 5000;
  await client.setQueueLimits('default', { groupConcurrency: 1 });
  const env = { CONCURRENCY: 10, VISIBILITY_MS: vis, SLOW_CAP_MS: 20, CAP_AFTER_FIRST: 1 };
  const w1 = await worker('W1', env);
  const held = await slow(['a'], 1, 120_000);
  await waitFor(async () => countBy(await records(), 'start').size === 1, 'W1 to hold the slot of group a');
  await worker('W2', env);
  const more = await slow(['a'], 3, 20);
  w1.kill('SIGSTOP');
  const other = await slow(['b'], 2, 20); // after the stop: W1 cannot take them
  await waitFor(async () => countBy(await records(), 'done').size === 6, 'W2 to run all 6 after the reclaim', 30_000);
  const recs = await records();
  const reclaimedAt = Math.min(...(await redis.zrange(keys.reclaimed, 0, -1, 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number));
  const aOnW2 = recs.filter((r) => r.instance === 'W2' && r.group === 'a');
  expect(Math.min(...aOnW2.filter((r) => r.phase === 'start').map((r) => r.t))).toBeGreaterThanOrEqual(reclaimedAt);
  // group b was not held back by a's slot
  const bDone = recs.filter((r) => r.group === 'b' && r.phase === 'done').map((r) => r.t);
  expect(Math.max(...bDone)).toBeLessThan(reclaimedAt);
  onceEach(
    recs,
    [...held, ...more, ...other].map((t) => t.id),
    new Set(held.map((t) => t.id)),
  );
  expect(peaks(recs.filter((r) => r.instance === 'W2')).get('a')).toBe(1);
});

test('groupRate 2 per 500 ms across 3 workers: no group has more than 2 hand-outs in any 500 ms (Redis time)', async () => {
  await client.setQueueLimits('default', { groupRate: { max: 2, duration: 500 } });
  for (const w of ['W1', 'W2', 'W3']) await worker(w, { CONCURRENCY: 10 });
  const tasks = await slow(['a', 'b'], 6, 30_000); // they stay pending: their hand-out instants are read from the pending entries list
  await waitFor(async () => countBy(await records(), 'start').size === 12, 'all 12 handed out', 30_000);
  const [[, time], [, rows]] = (await redis.multi().time().xpending(keys.stream, 'chronos', '-', '+', 100).exec()) as [
    [null, [string, string]],
    [null, [string, string, number, number][]],
  ];
  const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
  const groupOf = new Map((await records()).map((r) => [r.id, String(r.group)]));
  const entries = await redis.xrange(keys.stream, '-', '+');
  const taskOfEntry = new Map(entries.map(([id, f]) => [id, f[f.indexOf('id') + 1]]));
  const at = new Map<string, number[]>();
  for (const [entryId, , idle] of rows) {
    const g = groupOf.get(taskOfEntry.get(entryId)!)!;
    at.set(g, [...(at.get(g) ?? []), now - idle]);
  }
  expect([...at.keys()].sort()).toEqual(['a', 'b']);
  for (const times of at.values()) {
    expect(times).toHaveLength(6);
    // idle times are whole ms: an instant read back may be 1 ms off, so the window is judged 1 ms short
    for (const t0 of times) expect(times.filter((t) => t >= t0 && t < t0 + 499).length).toBeLessThanOrEqual(2);
  }
  expect(tasks).toHaveLength(12);
});
