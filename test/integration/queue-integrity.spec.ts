// The queue-integrity issue, faults 1-3: a pending entry whose stream entry is gone is reported lost
// (logged once, counted, task.lost); uid and overlap markers are released by the dead path and bounded
// by TTLs; an ack that finds its entry no longer pending names the task and the real reason.
import type { Redis } from 'ioredis';
import { fireScript } from '../../lib/core/redis/commands/schedule.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { decodeDays } from '../../lib/core/admin/history.js';
import { engineTime } from '../../lib/core/runtime/time.js';
import { QueueRig } from '../helpers/queue.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
let keys: QueueKeys;
let r: Redis;
/** Every event, loosely typed (so the test also compiles against a ChronosEvent union without task.lost). */
let events: Record<string, unknown>[];
beforeEach(() => {
  rig = new QueueRig();
  keys = new QueueKeys(rig.namespace, 'default');
  r = rig.client.redis as Redis;
  events = [];
  rig.events.subscribe((e) => void events.push(e as unknown as Record<string, unknown>));
});
afterEach(async () => {
  await rig.close();
});

const ofType = (type: string) => events.filter((e) => e.type === type);
const pendingCount = async () => ((await r.call('XPENDING', keys.stream, 'chronos')) as [number])[0];
/** The lost counter of today, by its documented name (the Inspector reads exactly this key). */
const countsKey = () => new QueueKeys(rig.namespace, 'default').counts;
/** Today's lost count in the queue's counts (the day ring). */
const lostToday = async () => decodeDays(await rig.client.redis.getBuffer(countsKey()), engineTime.now(), 1)[0][2];

/** A consumer that takes one delivery and never finishes it, like a worker SIGKILLed holding it. @returns its entry id */
async function ghostTakes(): Promise<string> {
  const reply = (await r.call('XREADGROUP', 'GROUP', 'chronos', 'ghost', 'COUNT', 1, 'STREAMS', keys.stream, '>')) as [
    string,
    [string, string[]][],
  ][];
  return reply[0][1][0][0];
}

test('fault 1: an entry deleted while pending is reported lost once (queue, entry id), counted per day, emitted as task.lost', async () => {
  const server = rig.server({ visibilityTimeout: 200, recoverInterval: 50 });
  await server.pause('default'); // this server only recovers
  await server.start();
  await rig.client.enqueue('x', { n: 1 });
  const entryId = await ghostTakes();
  await r.xdel(keys.stream, entryId);
  await waitFor(() => ofType('task.lost').length === 1, 'a task.lost event');
  expect(ofType('task.lost')[0]).toMatchObject({ queue: 'default', entryId });
  expect(await lostToday()).toBe(1);
  expect(await r.pttl(countsKey())).toBeGreaterThan(80 * 24 * 3600_000); // the counts key lives 90 days, renewed daily
  // a second lost entry: by the time it is reported the recoverer has run many rounds; the first was logged once
  await rig.client.enqueue('x', { n: 2 });
  const second = await ghostTakes();
  await r.xdel(keys.stream, second);
  await waitFor(() => ofType('task.lost').length === 2, 'the second task.lost event');
  const lines = rig.logger.lines.filter((l) => l.message.includes(entryId));
  expect(lines).toHaveLength(1);
  expect(lines[0].message).toMatch(/lost/);
  expect(lines[0].message).toContain('queue=default');
  expect(await lostToday()).toBe(2);
  expect(await pendingCount()).toBe(0);
});

test('fault 2: a poison task releases its uid and overlap markers, emits task.dead with its type; requeued ones carry it', async () => {
  const deadline = Date.now() + 15_000;
  const server = rig.server({ visibilityTimeout: 200, recoverInterval: 50, maxDeliveries: 1 });
  await server.pause('default');
  await server.start();
  await rig.client.enqueue('crashy', {}, { taskId: 'order-1' });
  const now = Date.now();
  const meta = JSON.stringify({ r: 0, m: 25, t: 0, e: now, s: 'nightly', tr: now, o: 1 });
  const taskId = `nightly:${Math.floor(now / 1000)}`;
  const fire = { schedule: 'nightly', triggerAt: now, type: 'crashy.schedule', payload: 'null' };
  await fireScript(rig.client.redis, keys, undefined, 1000, [{ ...fire, meta, dedupTtlMs: 3_600_000, mode: 's', generation: 0 }]);
  expect(await r.get(keys.overlap('nightly'))).toBe(taskId);
  // the ghost takes every delivery and never finishes: 1 redelivery, then poison
  while (ofType('task.dead').length < 2 && Date.now() < deadline) {
    await r.call('XREADGROUP', 'GROUP', 'chronos', 'ghost', 'COUNT', 10, 'BLOCK', 100, 'STREAMS', keys.stream, '>');
  }
  const dead = ofType('task.dead');
  expect(dead).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ taskId: 'order-1', taskType: 'crashy', reason: 'poison' }),
      expect.objectContaining({ taskId, taskType: 'crashy.schedule', reason: 'poison' }),
    ]),
  );
  const requeued = ofType('task.requeued');
  expect(requeued.map((e) => e.taskType).sort()).toEqual(['crashy', 'crashy.schedule']);
  expect(await r.exists(keys.uniqueId('order-1'), keys.overlap('nightly'))).toBe(0);
  expect((await rig.client.enqueue('crashy', {}, { taskId: 'order-1' })).deduplicated).toBe(false);
});

test('fault 2: uid and overlap markers have TTLs; a delayed task keeps its uid until its time, a retry until its retry', async () => {
  const week = 7 * 24 * 3600_000;
  await rig.client.enqueue('now', {}, { taskId: 'a' });
  await rig.client.enqueue('later', {}, { taskId: 'b', delay: week });
  const ttlA = await r.pttl(keys.uniqueId('a'));
  expect(ttlA).toBeGreaterThan(0);
  expect(await r.pttl(keys.uniqueId('b'))).toBeGreaterThan(week);
  const now = Date.now();
  const meta = JSON.stringify({ r: 0, m: 25, t: 0, e: now, s: 'hourly', tr: now, o: 1 });
  await fireScript(rig.client.redis, keys, undefined, 1000, [
    {
      schedule: 'hourly',
      triggerAt: now,
      type: 'x',
      payload: 'null',
      meta,
      dedupTtlMs: 3_600_000,
      mode: 's',
      generation: 0,
    },
  ]);
  expect(await r.pttl(keys.overlap('hourly'))).toBeGreaterThan(0);

  // a failed task waiting an hour for its retry keeps its uid past the retry time
  const failed = deferred();
  const server = rig.server({ backoff: () => 3_600_000 });
  server.handle('flaky', () => {
    failed.resolve();
    throw new Error('not yet');
  });
  await server.start();
  await rig.client.enqueue('flaky', {}, { taskId: 'c' });
  await failed.promise;
  await waitFor(async () => (await r.zcard(keys.retry)) === 1, 'the retry');
  expect(await r.pttl(keys.uniqueId('c'))).toBeGreaterThan(3_600_000);
});

test('fault 3: an ack after another consumer reclaimed the entry names the task and says so', async () => {
  const a = rig.server();
  const started = deferred();
  const release = deferred();
  let runs = 0;
  a.handle('job', async () => {
    if (++runs > 1) return;
    started.resolve();
    await release.promise;
  });
  await a.start();
  const { id } = await rig.client.enqueue('job', {});
  await started.promise;
  await a.pause('default'); // the requeued copy waits; only b's recoverer acts
  const b = rig.server({ visibilityTimeout: 100, recoverInterval: 20 });
  await b.start();
  await waitFor(() => ofType('task.requeued').length === 1, 'b to reclaim the entry');
  expect(ofType('task.requeued')[0]).toMatchObject({ taskId: id, taskType: 'job', reason: 'recovered' });
  release.resolve();
  const ackWarning = () => rig.logger.lines.find((l) => l.level === 'warn' && /finished/.test(l.message) && l.message.includes(id));
  const line = await waitFor(ackWarning, 'a warning naming the task');
  expect(line.message).toMatch(/reclaimed by another consumer/);
  expect(line.message).not.toMatch(/gone|deleted/);
});

test('fault 3: an ack after the entry was deleted (XDEL) names the task and says the entry is gone', async () => {
  const server = rig.server({ visibilityTimeout: 300, recoverInterval: 50 });
  const started = deferred<string>();
  const release = deferred();
  server.handle('job', async (t) => {
    started.resolve(t.id);
    await release.promise;
  });
  await server.start();
  const { id } = await rig.client.enqueue('job', {});
  await started.promise;
  const [[entryId]] = await r.xrange(keys.stream, '-', '+');
  await r.xdel(keys.stream, entryId);
  await waitFor(async () => (await pendingCount()) === 0, 'the deleted entry to leave the pending entries list');
  release.resolve();
  const ackWarning = () => rig.logger.lines.find((l) => l.level === 'warn' && /finished/.test(l.message) && l.message.includes(id));
  const line = await waitFor(ackWarning, 'a warning naming the task');
  expect(line.message).toMatch(/gone/);
  expect(line.message).not.toMatch(/reclaimed/);
});
