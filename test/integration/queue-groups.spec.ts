// Groups (issue 21): the tasks of a queue's groups are served round-robin between the groups, a group
// that enters the round runs up to GROUPS.catchUp turns ahead of the backlog, ungrouped tasks go
// first, grouped tasks coming back through the stream (a retry, a delayed task) go back to their
// group, and an idle grouped queue wakes on a new grouped task without polling.
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { GROUPS } from '../../lib/core/redis/protocol.js';
import type { Task } from '../../lib/core/queue/task.js';
import { QueueRig } from '../helpers/queue.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => {
  rig = new QueueRig();
});
afterEach(async () => {
  await rig.close();
});

const FAR = 120_000; // blockTimeout, ms: only a new entry or the group signal can end an idle wait in time

const bulk = (group: string | undefined, n: number, queue = 'g') =>
  rig.client.enqueueBulk(Array.from({ length: n }, (_, i) => ({ type: 't', payload: { group, i }, options: { queue, group } })));

test('three backlogged groups share a worker equally: every run of 3 starts has each group once', async () => {
  await bulk('a', 30);
  await bulk('b', 30);
  await bulk('c', 30);
  const order: string[] = [];
  const s = rig.server({ queues: ['g'], concurrency: 1 });
  s.handle<{ group: string }>('t', (t) => void order.push(t.group!));
  await s.start();
  await waitFor(() => order.length === 90, 'all 90 tasks');
  for (let i = 0; i + 3 <= 90; i += 3) expect(new Set(order.slice(i, i + 3)).size).toBe(3);
});

test('a group with 10 tasks behind another with 200 runs within a few tasks, not after the backlog', async () => {
  await bulk('big', 200);
  const order: string[] = [];
  const gate = deferred();
  let started = 0;
  const fifth = deferred();
  const s = rig.server({ queues: ['g'], concurrency: 1 });
  s.handle<{ group: string }>('t', async (t) => {
    order.push(t.group!);
    if (++started === 5) {
      fifth.resolve();
      await gate.promise; // the worker holds its only slot while the small group is enqueued
    }
  });
  await s.start();
  await fifth.promise;
  await bulk('small', 10);
  gate.resolve();
  await waitFor(() => order.length === 210, 'all 210 tasks');
  const small = order.flatMap((g, i) => (g === 'small' ? [i] : []));
  expect(small).toHaveLength(10);
  // it entered the round GROUPS.catchUp turns ahead of the backlog: its 10 tasks run next, one after another
  expect(GROUPS.catchUp).toBeGreaterThanOrEqual(10);
  expect(small).toEqual(Array.from({ length: 10 }, (_, i) => 5 + i));
});

test('groups that each get one task (a group per order) leave at most GROUPS.idleMax remembered turns behind', async () => {
  // before (trial 28): no served turn ever passed the floor, so each group's turn stayed in groups-idle for good
  const n = GROUPS.idleMax + 500;
  for (let i = 0; i < n; i += 1000)
    await rig.client.enqueueBulk(
      Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({
        type: 't',
        payload: {},
        options: { queue: 'g', group: `order:${i + j}` },
      })),
    );
  let done = 0;
  const s = rig.server({ queues: ['g'], concurrency: 50 });
  s.handle('t', () => void done++);
  await s.start();
  await waitFor(() => done === n, `all ${n} tasks`, 60_000);
  expect(await rig.client.redis.zcard(new QueueKeys(rig.namespace, 'g').groupsIdle)).toBeLessThanOrEqual(GROUPS.idleMax);
});

test('ungrouped tasks of a grouped queue go first; grouped retries and delayed tasks return to their group', async () => {
  const seen: Task[] = [];
  const done = deferred();
  const s = rig.server({ queues: ['g'], concurrency: 1, backoff: () => 30, forwardInterval: 50 });
  s.handle('t', (t) => {
    seen.push(t);
    if (seen.length === 5) done.resolve();
  });
  s.handle('failOnce', (t) => {
    seen.push(t);
    if (t.retried === 0) throw new Error('first attempt fails');
    if (seen.length === 5) done.resolve();
  });
  await s.start();
  await rig.client.enqueue('failOnce', { i: 0 }, { queue: 'g', group: 'x' });
  await rig.client.enqueue('t', { i: 1 }, { queue: 'g', group: 'x', delay: 100 });
  await rig.client.enqueue('t', { i: 2 }, { queue: 'g', group: 'y', dedupKey: 'k' });
  await rig.client.enqueue('t', { i: 3 }, { queue: 'g' });
  await done.promise;
  expect(seen.map((t) => [t.type, (t.payload as { i: number }).i, t.group, t.retried]).sort()).toEqual(
    [
      ['failOnce', 0, 'x', 0],
      ['failOnce', 0, 'x', 1],
      ['t', 1, 'x', 0],
      ['t', 2, 'y', 0],
      ['t', 3, undefined, 0],
    ].sort(),
  );
  const k = new QueueKeys(rig.namespace, 'g');
  await waitFor(async () => (await rig.client.redis.hget(k.limits, 'gwaiting')) === '0', 'nothing waiting in groups');
  expect(await rig.client.redis.zcard(k.groups)).toBe(0);
  expect(await rig.client.redis.zcard(k.groupsWaiting)).toBe(0);
});

test('an idle grouped queue wakes on a new grouped task (the group signal), not by a poll', async () => {
  const ran: number[] = [];
  const s = rig.server({ queues: ['g'], concurrency: 2, blockTimeout: FAR });
  s.handle<{ i: number }>('t', (t) => void ran.push(t.payload.i));
  await s.start();
  await rig.client.enqueue('t', { i: 1 }, { queue: 'g', group: 'a' });
  await waitFor(() => ran.length === 1, 'the first grouped task');
  await rig.client.enqueue('t', { i: 2 }, { queue: 'g', group: 'b' });
  await waitFor(() => ran.length === 2, 'the grouped task enqueued to the idle queue');
  await rig.client.enqueue('t', { i: 3 }, { queue: 'g' });
  await waitFor(() => ran.length === 3, 'an ungrouped task enqueued to the idle grouped queue');
  expect(ran).toEqual([1, 2, 3]);
});

test('a bad group is refused, naming the value', async () => {
  await expect(rig.client.enqueue('t', {}, { group: '' })).rejects.toThrow(/group: .*""/);
  await expect(rig.client.enqueue('t', {}, { group: 'a\nb' })).rejects.toThrow(/group: /);
  await expect(rig.client.enqueue('t', {}, { group: 'x'.repeat(201) })).rejects.toThrow(/group: /);
});

test('group limits: bad ones are refused naming the value; overrides merge, clear, and read back', async () => {
  const c = rig.client;
  await expect(c.setQueueLimits('g', { groupConcurrency: 0 })).rejects.toThrow(/groupConcurrency: .*got 0/);
  await expect(c.setQueueLimits('g', { groupRate: { max: 1, duration: 0 } })).rejects.toThrow(/groupRate: /);
  await expect(c.setQueueLimits('g', { groups: { vip: { concurrency: -1 } } })).rejects.toThrow(/groups\["vip"\]\.concurrency: .*got -1/);
  await expect(c.setQueueLimits('g', { groups: { '': { concurrency: 1 } } })).rejects.toThrow(/groups\[""\]: not a group name/);
  await expect(c.setQueueLimits('g', { groups: { vip: { weight: 2 } as never } })).rejects.toThrow(
    /groups\["vip"\]\.weight: not a group limit/,
  );
  await c.setQueueLimits('g', { groupConcurrency: 2, groupRate: { max: 5, duration: 1000 }, groups: { vip: { concurrency: 10 } } });
  await c.setQueueLimits('g', { groups: { vip: { rate: { max: 50, duration: 1000 } }, slow: { concurrency: 1 } } });
  expect(await c.getQueueLimits('g')).toEqual({
    groupConcurrency: 2,
    groupRate: { max: 5, duration: 1000 },
    groups: { vip: { concurrency: 10, rate: { max: 50, duration: 1000 } }, slow: { concurrency: 1 } },
  });
  await c.setQueueLimits('g', { groupRate: null, groups: { vip: { concurrency: null }, slow: null } });
  expect(await c.getQueueLimits('g')).toEqual({ groupConcurrency: 2, groups: { vip: { rate: { max: 50, duration: 1000 } } } });
});
