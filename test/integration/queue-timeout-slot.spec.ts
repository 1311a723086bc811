// A task's timeout aborts its signal and records the failure at once; a handler that ignores the
// signal runs on. It keeps its slot until it returns (as a cancelled task's handler does), so a
// server never runs more than `concurrency` handlers at once, and a shutdown does not report it as
// put back (its failure is recorded: it waits for its retry).
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { QueueRig } from '../helpers/queue.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => {
  rig = new QueueRig();
});
afterEach(async () => {
  await rig.close();
});

test('a timed-out handler that ignores its signal keeps its slot until it returns: never more than concurrency handlers', async () => {
  const s = rig.server({ queues: ['t'], concurrency: 1 });
  let running = 0;
  let most = 0;
  const stuckEnd = deferred();
  const quickStarted = deferred();
  const enter = () => void (most = Math.max(most, ++running));
  s.handle(
    'stuck',
    async () => {
      enter();
      await stuckEnd.promise; // ignores its signal
      running--;
    },
    { backoff: () => 3_600_000 },
  );
  s.handle('quick', () => {
    enter();
    quickStarted.resolve();
    running--;
  });
  const retried = deferred();
  rig.events.subscribe((e) => void (e.type === 'task.retried' && e.taskType === 'stuck' && retried.resolve()));
  await s.start();
  await rig.client.enqueue('stuck', {}, { queue: 't', timeout: 100 });
  await waitFor(() => running === 1, 'the stuck handler to start');
  await rig.client.enqueue('quick', {}, { queue: 't' });
  await retried.promise; // the timeout is recorded: a retry in an hour
  // before: the slot came free at the timeout and 'quick' started at once beside the stuck handler.
  // Its absence cannot be awaited: give the worker a fetch's time to (wrongly) start it.
  // eslint-disable-next-line local/no-fixed-sleep -- a start that must not happen has no event to await
  const startedBeside = await Promise.race([quickStarted.promise.then(() => true), new Promise((r) => setTimeout(() => r(false), 1000))]);
  expect(startedBeside).toBe(false);
  stuckEnd.resolve();
  await quickStarted.promise; // the slot is free once the stuck handler returned
  expect(most).toBe(1);
  expect(await rig.client.redis.zcard(new QueueKeys(rig.namespace, 't').retry)).toBe(1);
});

test('a shutdown does not put back a timed-out task whose handler ignores its signal: its failure is recorded, it waits for its retry', async () => {
  const s = rig.server({ queues: ['t'], shutdownTimeout: 100 });
  const requeued: string[] = [];
  rig.events.subscribe((e) => void (e.type === 'task.requeued' && requeued.push(e.taskId)));
  const retried = deferred();
  rig.events.subscribe((e) => void (e.type === 'task.retried' && retried.resolve()));
  const end = deferred();
  s.handle('stuck', () => end.promise, { backoff: () => 3_600_000 });
  await s.start();
  const { id } = await rig.client.enqueue('stuck', {}, { queue: 't', timeout: 100 });
  await retried.promise;
  await s.shutdown();
  end.resolve();
  expect(requeued).toEqual([]);
  expect(rig.logger.lines.filter((l) => l.message.includes(id) && /put back/.test(l.message))).toEqual([]);
  expect(await rig.client.redis.zcard(new QueueKeys(rig.namespace, 't').retry)).toBe(1);
});

test('a handler returning a thenable that settles twice frees its slot once: never more than concurrency handlers (trial 33)', async () => {
  // a hand-written or non-compliant thenable may call its callbacks twice, or call one and then throw;
  // before: each call ended the attempt again and freed its slot again (activeCount -1 after one task,
  // so a server of concurrency 1 ran two handlers at once)
  const s = rig.server({ queues: ['t'], concurrency: 1 });
  s.handle('twice', () => ({
    then(ok: () => void, fail: (e: unknown) => void) {
      ok();
      ok();
      fail(new Error('late'));
    },
  }));
  s.handle('throws-after', () => ({
    then(ok: () => void) {
      ok();
      throw new Error('then threw after settling');
    },
  }));
  const done = new Set<string>();
  rig.events.subscribe((e) => void ((e.type === 'task.succeeded' || e.type === 'task.failed') && done.add(`${e.type}:${e.taskType}`)));
  await s.start();
  await rig.client.enqueue('twice', {}, { queue: 't' });
  await rig.client.enqueue('throws-after', {}, { queue: 't' });
  await waitFor(() => done.has('task.succeeded:twice') && done.has('task.succeeded:throws-after'), 'both tasks');
  expect([...done].sort()).toEqual(['task.succeeded:throws-after', 'task.succeeded:twice']);
  expect(s.activeCount).toBe(0);
});

test('long timeouts (past 5 s: checked by the sweep) expire each in turn while other runs with long timeouts come and go', async () => {
  // the sweep's list is kept by place (a run leaving swaps the last one into its place): the stuck
  // runs change places as the quick ones (default timeout: 30 min) leave, and each still expires once
  const s = rig.server({ queues: ['t'], concurrency: 4 });
  const retried: string[] = [];
  rig.events.subscribe((e) => void (e.type === 'task.retried' && retried.push(e.taskId)));
  const end = deferred();
  let stuck = 0;
  s.handle(
    'stuck',
    async () => {
      stuck++;
      await end.promise;
    },
    { backoff: () => 3_600_000 },
  );
  let quick = 0;
  s.handle('quick', async () => {
    await Promise.resolve();
    quick++;
  });
  await s.start();
  const a = await rig.client.enqueue('stuck', {}, { queue: 't', timeout: 5_100 });
  await waitFor(() => stuck === 1, 'the first stuck handler to start');
  for (let i = 0; i < 20; i++) await rig.client.enqueue('quick', {}, { queue: 't' });
  const b = await rig.client.enqueue('stuck', {}, { queue: 't', timeout: 5_300 });
  await waitFor(() => stuck === 2 && quick === 20, 'the second stuck handler and the quick tasks');
  await waitFor(() => retried.length === 2, 'both stuck tasks timed out', 15_000);
  end.resolve();
  expect(retried.sort()).toEqual([a.id, b.id].sort());
}, 30_000);
