// Limits and groups made visible (issue 21): the Inspector's queue view (limits, slots taken, the
// groups with the most waiting tasks, the "limited" state and by which limit), the operator's act that
// sets limits (an operator.acted event), the `queue.limited` event a held-back worker emits, and the
// CLI's `queue limits` and `queue show`.
import { Inspector } from '../../lib/core/admin/inspector.js';
import type { ChronosEvent } from '../../lib/core/runtime/events.js';
import { cliRunner } from '../helpers/cli.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
let inspector: Inspector;
const { chronos, json } = cliRunner(() => rig.namespace);
beforeEach(() => {
  rig = new QueueRig();
  inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace, events: rig.events });
});
afterEach(async () => {
  await inspector.close();
  await rig.close();
});

test('a queue held back by its concurrency shows limited (concurrency), its slots taken, its top groups; the worker emits queue.limited', async () => {
  const events: ChronosEvent[] = [];
  rig.events.subscribe((e) => void events.push(e));
  await inspector.setQueueLimits('l', { concurrency: 1 }, { actor: 'ops:ada' });
  expect(events).toContainEqual({ type: 'operator.acted', action: 'queue.limits', actor: 'ops:ada', queue: 'l', count: 1 });
  const release = deferred();
  const started = deferred();
  const s = rig.server({ queues: ['l'], concurrency: 5 });
  s.handle('hold', () => (started.resolve(), release.promise));
  await s.start();
  await rig.client.enqueue('hold', {}, { queue: 'l' });
  await started.promise;
  await rig.client.enqueueBulk([
    ...Array.from({ length: 3 }, () => ({ type: 'hold', options: { queue: 'l', group: 'big' } })),
    { type: 'hold', options: { queue: 'l', group: 'small' } },
  ]);
  await waitFor(async () => (await inspector.queue('l')).state === 'limited', 'the queue to show limited');
  const q = await inspector.queue('l');
  expect(q).toMatchObject({ state: 'limited', limitedBy: 'concurrency', active: 1, pending: 4, limits: { concurrency: 1 } });
  expect(q.groups).toEqual({
    waiting: 4,
    count: 2,
    held: 0,
    top: [
      { group: 'big', waiting: 3, running: 0 },
      { group: 'small', waiting: 1, running: 0 },
    ],
  });
  // the fetch held back ends its wait when the slot frees: a queue.limited event with how long it waited
  release.resolve();
  await waitFor(
    () => events.some((e) => e.type === 'queue.limited' && e.queue === 'l' && e.limit === 'concurrency'),
    'a queue.limited event',
  );
  await waitFor(async () => (await inspector.queue('l')).pending === 0, 'every task to run');
  expect((await inspector.queue('l')).state).toBe('running');
});

test('tasks waiting only in groups at their limit show limited (group); the CLI sets, shows and clears limits', async () => {
  const release = deferred();
  const s = rig.server({ queues: ['l'], concurrency: 5 });
  s.handle('hold', () => release.promise);
  await s.start();
  let r = await chronos('queue', 'limits', 'l', '--group-concurrency', '1', '--rate', '100/1000', '--group', 'vip', '--concurrency', '3');
  expect(r.code).toBe(0);
  expect(r.out).toContain('Limits of queue l set.');
  expect(await inspector.queueLimits('l')).toEqual({
    groupConcurrency: 1,
    groups: { vip: { concurrency: 3, rate: { max: 100, duration: 1000 } } },
  });
  await rig.client.enqueueBulk(Array.from({ length: 3 }, () => ({ type: 'hold', options: { queue: 'l', group: 'a' } })));
  await waitFor(async () => (await inspector.queue('l')).limitedBy === 'group', 'the queue to show limited by its groups');
  const q = await inspector.queue('l');
  expect(q.groups).toMatchObject({ waiting: 2, count: 1, held: 1, top: [{ group: 'a', waiting: 2, running: 1 }] });
  const show = await chronos('queue', 'show', 'l');
  expect(show.out).toContain('limited (group)');
  expect(show.out).toMatch(/group concurrency\s*│\s*1\s/);
  expect(show.out).toMatch(/Groups: 1 with waiting tasks \(2 tasks\), 1 held back/);
  expect(show.out).toMatch(/a\s+│?\s*2\s+│?\s*1/);
  expect((await json<{ limits: object }>('queue', 'limits', 'l')).limits).toEqual(await inspector.queueLimits('l'));
  r = await chronos('queue', 'limits', 'l', '--group-concurrency', 'none', '--clear-group', 'vip');
  expect(r.code).toBe(0);
  expect(await inspector.queueLimits('l')).toEqual({});
  // a queue name that is not known is refused (as pause), unless --force
  const typo = await chronos('queue', 'limits', 'lx', '--concurrency', '2');
  expect([typo.code, typo.out]).toEqual([1, '']);
  expect(typo.err).toMatch(/^error: Queue "lx" not found in namespace .*; pass --force to set its limits before its first task\n$/);
  expect(await inspector.queueLimits('lx')).toEqual({});
  expect((await chronos('queue', 'limits', 'lx', '--concurrency', '2', '--force')).code).toBe(0);
  expect(await inspector.queueLimits('lx')).toEqual({ concurrency: 2 });
  const bad = await chronos('queue', 'limits', 'l', '--rate', 'fast');
  expect([bad.code, bad.err]).toEqual([2, 'error: --rate: expected <max>/<duration ms> (e.g. 100/1000) or "none", got "fast"\n']);
  // decimal digits only, and a bad value is a usage error before the name is looked up (trial 10: 0x10 set 16)
  for (const text of ['0x10', '1e2']) {
    const r2 = await chronos('queue', 'limits', 'nosuch', '--concurrency', text);
    expect([r2.code, r2.err]).toEqual([2, `error: --concurrency: expected an integer >= 1 or "none", got "${text}"\n`]);
  }
  release.resolve();
  await waitFor(async () => (await inspector.queue('l')).pending === 0, 'every task to run once the limit is cleared');
});

test('a group whose slot freed while no worker fetched is due for a look, not held back: the queue is not shown limited by its groups', async () => {
  await inspector.setQueueLimits('l', { groupConcurrency: 1 });
  const release = deferred();
  const s = rig.server({ queues: ['l'], concurrency: 5 });
  s.handle('hold', () => release.promise);
  await s.start();
  await rig.client.enqueueBulk(Array.from({ length: 2 }, () => ({ type: 'hold', options: { queue: 'l', group: 'a' } })));
  await waitFor(async () => (await inspector.queue('l')).limitedBy === 'group', 'the queue to show limited by its groups');
  // nobody fetches from now on: the queue paused, the slot freed, the worker stopped, the queue resumed
  await inspector.pauseQueue('l');
  await waitFor(() => s.pausedQueues.has('l'), 'the worker to know the pause');
  release.resolve();
  await waitFor(async () => (await inspector.queue('l')).active === 0, 'the running task to end');
  await s.shutdown();
  await inspector.resumeQueue('l');
  const q = await inspector.queue('l');
  // before: held 1 and state limited (group): the group's freed slot (its parked score 0) was counted as held
  expect(q).toMatchObject({ state: 'running', pending: 1, groups: { waiting: 1, count: 1, held: 0 } });
  expect(q.limitedBy).toBeUndefined();
});

test('a task waiting in its group is not found by id, and the not-found error says that tasks wait in the queue’s groups', async () => {
  const { id } = await rig.client.enqueue('t', {}, { queue: 'g', group: 'tenant-a' });
  expect((await inspector.queue('g')).pending).toBe(1);
  // before: 'Task … not found in queue "g" (state pending or scheduled or retry or dead)': a task the user just enqueued, seemingly lost
  await expect(inspector.deleteTask('g', id)).rejects.toThrow(
    /^Task \S+ not found in queue "g" \(state pending or scheduled or retry or dead\); 1 task waits in the groups of queue "g", where a task is not found by id until a worker takes it$/,
  );
  await expect(inspector.requireTask(id)).rejects.toThrow(/not found in any queue; 1 task waits in the groups of queue "g"/);
  const show = await chronos('task', 'show', id);
  expect([show.code, show.err]).toEqual([1, expect.stringMatching(/not found in any queue; 1 task waits in the groups of queue "g"/)]);
  // no note where no task waits in a group
  await expect(inspector.requireTask('nosuch', 'g')).rejects.toThrow(/; 1 task waits/);
  await rig.client.enqueue('t', {}, { queue: 'plain' });
  await expect(inspector.requireTask('nosuch', 'plain')).rejects.toThrow(/^Task nosuch not found in queue "plain"$/);
});
