// One worker on many queues (issue 15 target 6): the due-time index finds a delayed task on queue k
// of many, a delayed task the index does not know (an older writer) is found by the sweep, the index
// scripts keep a due time an enqueuer wrote during a forward, and backlogged queues share the fetches.
import type { Redis } from 'ioredis';
import { RedisTime, engineTime } from '../../lib/core/runtime/time.js';
import { Forwarder } from '../../lib/core/fetch/forwarder.js';
import { Loops } from '../../lib/core/worker/loops.js';
import { createRuntime } from '../../lib/core/runtime/runtime.js';
import { claimDue, settleDue } from '../../lib/core/redis/commands/due.js';
import { GlobalKeys, QueueKeys } from '../../lib/core/redis/keys.js';
import { DUE_INDEX } from '../../lib/core/redis/protocol.js';
import { QueueRig } from '../helpers/queue.js';
import { deferred, recordingLogger, within } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => {
  rig = new QueueRig();
});
afterEach(async () => {
  await rig.close();
});

const names = (n: number) => Array.from({ length: n }, (_, i) => `m${i}`);
const redis = () => rig.client.redis as Redis;
const dueKey = () => new GlobalKeys(rig.namespace).due;

test('a delayed task on queue k of 50 is indexed by its enqueue and forwarded by the index, not before it is due', async () => {
  const queues = names(50);
  const server = rig.server({ queues });
  const ran = deferred<{ queue: string; at: number }>();
  server.handle('later', (t) => ran.resolve({ queue: t.queue, at: Date.now() }));
  await server.start();
  const sent = engineTime.now(); // the enqueue's clock (Redis time, estimated never ahead), not the wall clock, which may run ahead of it
  await rig.client.enqueue('later', {}, { queue: 'm37', delay: 400 });
  // the enqueue wrote the queue's due time into the index in the same round trip
  const score = Number(await redis().zscore(dueKey(), 'm37'));
  expect(score).toBeGreaterThanOrEqual(sent + 400);
  expect(score).toBeLessThan(DUE_INDEX.claimBase);
  const { queue, at } = await within(ran.promise, 10_000, 'the delayed task to run');
  expect(queue).toBe('m37');
  expect(at - sent).toBeGreaterThanOrEqual(400 - 50); // Redis time vs local clock: a little slack
});

test('a delayed task written without the index (an older writer) is found by the rolling sweep', async () => {
  const queues = names(20).map((name) => ({ name, weight: 1, keys: new QueueKeys(rig.namespace, name) }));
  const client = redis();
  let running = true;
  const loops = new Loops();
  const runtime = createRuntime({ logger: recordingLogger(), time: new RedisTime() });
  const forwarder = new Forwarder({
    client,
    queues,
    dueKey: dueKey(),
    forwardIntervalMs: 1000,
    loops,
    isRunning: () => running,
    runtime,
    sweepPeriodMs: 400,
  });
  const done = forwarder.run();
  const reader = client.duplicate();
  try {
    // an older writer: the task in the scheduled set and the tasks hash, nothing in the index
    const at = Date.now() - 1;
    await rig.client.enqueue('old', { v: 1 }, { queue: 'm13', processAt: Date.now() + 60_000 });
    const k = queues[13].keys;
    const [id] = await client.zrange(k.scheduled, 0, 0);
    await client.zadd(k.scheduled, at, id);
    await client.zrem(dueKey(), 'm13');
    // a blocking read on the stream wakes when the sweep forwards it (within one sweep period of 400 ms)
    const got = (await reader.xread('BLOCK', 5000, 'STREAMS', k.stream, '0')) as [string, [string, string[]][]][] | null;
    expect(got?.[0][1]).toHaveLength(1);
    expect(await client.zcard(k.scheduled)).toBe(0);
  } finally {
    reader.disconnect();
    running = false;
    loops.stop();
    await done;
  }
});

test('the index scripts keep a due time an enqueuer wrote while the queue was being forwarded', async () => {
  const client = redis();
  const key = dueKey();
  await client.zadd(key, 1, 'a', 1, 'b', 1, 'c', Date.now() + 60_000, 'later', 1, 'not-mine');
  const claim = await claimDue(client, key, 100, ['a', 'b', 'c', 'later']);
  expect(claim.claimed.sort()).toEqual(['a', 'b', 'c']);
  expect(claim.nextDueAt).toBe(Number(await client.zscore(key, 'later')));
  expect(Number(await client.zscore(key, 'a'))).toBe(claim.mark); // claimed: a mark above every due time
  expect(Number(await client.zscore(key, 'not-mine'))).toBe(1); // a queue this server does not serve is left alone
  // while forward.lua ran: an enqueuer gave `b` a new delayed task (its ZADD LT replaces the mark)
  await client.zadd(key, 'LT', 5000, 'b');
  // forward.lua found nothing waiting in a and b, and c's next task at 7000
  await settleDue(
    client,
    key,
    claim.mark,
    new Map<string, number | undefined>([
      ['a', undefined],
      ['b', undefined],
      ['c', 7000],
    ]),
  );
  expect(await client.zscore(key, 'a')).toBeNull();
  expect(Number(await client.zscore(key, 'b'))).toBe(5000);
  expect(Number(await client.zscore(key, 'c'))).toBe(7000);
});

test('claim-due.lua finds the served queues behind more overdue rows of other queues than it reads at once', async () => {
  const client = redis();
  const key = dueKey();
  const others: (string | number)[] = [];
  for (let i = 0; i < 300; i++) others.push(1 + i, `other${i}`); // overdue, served by nobody here: ahead of ours
  await client.zadd(key, ...others);
  const later = Date.now() + 60_000;
  await client.zadd(key, 500, 'mine', later, 'mine-later');
  // before: the range of limit + 64 rows held only other queues: nothing claimed, no next due time
  const claim = await claimDue(client, key, 100, ['mine', 'mine-later', 'absent']);
  expect(claim.claimed).toEqual(['mine']);
  expect(claim.nextDueAt).toBe(later);
  expect(Number(await client.zscore(key, 'mine'))).toBe(claim.mark);
  expect(Number(await client.zscore(key, 'other0'))).toBe(1); // the others left alone
  // claimed already (its mark above every due time): not claimed again, not taken for a due time
  const again = await claimDue(client, key, 100, ['mine', 'mine-later']);
  expect(again.claimed).toEqual([]);
  expect(again.nextDueAt).toBe(later);
});

test('20 backlogged queues with equal weights: every queue is served within the first 20 × batch tasks, shares even', async () => {
  const queues = names(20);
  const batch = 5;
  const perQueue = 30;
  const total = 400;
  const order: string[] = [];
  const all = deferred();
  const server = rig.server({ queues, concurrency: batch });
  server.handle('w', (t) => {
    if (order.length < total) order.push(t.queue);
    if (order.length === total) all.resolve();
  });
  const tasks = [];
  for (let i = 0; i < perQueue; i++) for (const queue of queues) tasks.push({ type: 'w', options: { queue } });
  await rig.client.enqueueBulk(tasks);
  await server.start();
  await within(all.promise, 30_000, `the first ${total} tasks`);
  for (const q of queues) {
    expect(order.indexOf(q)).toBeGreaterThanOrEqual(0);
    expect(order.indexOf(q)).toBeLessThan(20 * batch);
    const share = order.filter((x) => x === q).length;
    expect(share).toBeGreaterThanOrEqual(15); // 20 expected
    expect(share).toBeLessThanOrEqual(25);
  }
});

test.each([
  ['plain queues', undefined],
  // trial 28: a queue with groups or limits made the worker serve its queues in their order, so w1 (listed
  // first, weight 1) took every slot while it had tasks: 0 of the first 140 to a queue of weight 6
  ['the lowest-weight queue grouped', 'grouped'],
  ['the lowest-weight queue limited (a limit that does not bind)', 'limited'],
] as const)('backlogged queues with weights 1:2:3 get about 1:2:3 of the tasks: %s', async (_, w1) => {
  const weights = { w1: 1, w2: 2, w3: 3 };
  if (w1 === 'limited') await rig.client.setQueueLimits('w1', { concurrency: 100 });
  const total = 300;
  const order: string[] = [];
  const all = deferred();
  const server = rig.server({ queues: weights, concurrency: 4 });
  server.handle('w', (t) => {
    if (order.length < total) order.push(t.queue);
    if (order.length === total) all.resolve();
  });
  const tasks = [];
  for (let i = 0; i < 200; i++)
    for (const queue of Object.keys(weights))
      tasks.push({ type: 'w', options: { queue, group: queue === 'w1' && w1 === 'grouped' ? `g${i % 3}` : undefined } });
  await rig.client.enqueueBulk(tasks);
  await server.start();
  await within(all.promise, 30_000, `the first ${total} tasks`);
  for (const [q, w] of Object.entries(weights)) {
    const share = order.filter((x) => x === q).length / total;
    expect(share).toBeGreaterThan((w / 6) * 0.8);
    expect(share).toBeLessThan((w / 6) * 1.2);
  }
});
