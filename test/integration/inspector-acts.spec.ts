// The Inspector's acts against a real Redis: each is atomic, safe to repeat, done in batches, and
// emitted as an `operator.acted` event naming its actor.
import {
  ChronosStateError,
  InvalidOptionsError,
  InvalidTaskStateError,
  NonRetryableError,
  TaskCancelledError,
  TaskNotFoundError,
} from '../../lib/core/runtime/errors.js';
import { EventBus, type ChronosEvent } from '../../lib/core/runtime/events.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { GlobalKeys, QueueKeys } from '../../lib/core/redis/keys.js';
import { triggerKey } from '../../lib/core/scheduler/definition.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
let inspector: Inspector;
let acted: Extract<ChronosEvent, { type: 'operator.acted' }>[];
const stoppers: (() => Promise<void>)[] = [];
beforeEach(() => {
  rig = new QueueRig();
  const events = new EventBus();
  acted = [];
  events.subscribe((e) => e.type === 'operator.acted' && acted.push(e));
  inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace, livenessWindow: 1000, events, actor: 'test' });
});
afterEach(async () => {
  for (const stop of stoppers.splice(0).reverse()) await stop();
  await inspector.close();
  await rig.close();
});

/** Dead tasks made by a real server whose handler throws NonRetryableError(payload.m); the server is stopped after. */
async function seedDead(queue: string, items: { type: string; m: string; taskId?: string }[]): Promise<string[]> {
  const s = rig.server({ queues: [queue] });
  for (const type of new Set(items.map((i) => i.type))) {
    s.handle(type, (t) => {
      throw new NonRetryableError((t.payload as { m: string }).m);
    });
  }
  await s.start();
  const ids: string[] = [];
  for (const i of items) ids.push((await rig.client.enqueue(i.type, { m: i.m }, { queue, taskId: i.taskId })).id);
  await waitFor(async () => (await inspector.queue(queue)).dead === items.length, `${items.length} dead`);
  await s.shutdown();
  return ids;
}

test('dead: retry one (fresh budget), retry all filtered by type and error; repeat-safe; an explicit id live again stays dead', async () => {
  const ids = await seedDead('d', [
    { type: 'a', m: 'timeout' },
    { type: 'a', m: 'refused' },
    { type: 'b', m: 'timeout' },
    { type: 'b', m: 'timeout', taskId: 'fixed-id' },
  ]);
  const one = await inspector.retryDead('d', ids[0], { actor: 'ops:ada' });
  expect(one).toEqual({ count: 1, ids: [ids[0]] });
  const back = await inspector.findTask(ids[0]);
  expect(back).toMatchObject({ state: 'pending', retried: 0, payload: { m: 'timeout' } });
  expect(back!.reason).toBeUndefined();
  // retried already: it is there, pending, and the error says so (was: TaskNotFoundError "… not found … (state dead)")
  await expect(inspector.retryDead('d', ids[0])).rejects.toThrow(
    new ChronosStateError(`Task ${ids[0]} of queue "d" is in state pending, not dead: only a dead task can be retried`),
  );
  await expect(inspector.retryDead('d', 'no-such-task')).rejects.toBeInstanceOf(TaskNotFoundError);

  await rig.client.enqueue('b', {}, { queue: 'd', taskId: 'fixed-id' }); // the explicit id is live again
  const byType = await inspector.retryAllDead('d', { type: 'b', error: 'TIMEOUT' });
  expect(byType.count).toBe(1);
  expect(byType.ids).toEqual([ids[2]]);
  expect(byType.skipped).toEqual([{ id: 'fixed-id', reason: expect.stringMatching(/live again/) }]);
  expect(await inspector.retryAllDead('d', { type: 'b', error: 'timeout' })).toMatchObject({ count: 0 });
  expect((await inspector.queue('d')).dead).toBe(2); // a:refused and the conflicting fixed-id
  expect((await inspector.retryAllDead('d', { actor: 'ops:bob' })).count).toBe(1);
  expect(acted.map((e) => [e.action, e.actor, e.count, e.taskId])).toEqual([
    ['dead.retry', 'ops:ada', 1, ids[0]],
    ['dead.retry', 'test', 1, undefined],
    ['dead.retry', 'test', 0, undefined],
    ['dead.retry', 'ops:bob', 1, undefined],
  ]);
});

test('bulk acts work in batches past one page (450 dead tasks) and leave the rest alone', async () => {
  const k = new QueueKeys(rig.namespace, 'big');
  const p = rig.client.redis.pipeline();
  for (let i = 0; i < 450; i++) {
    const id = `t${String(i).padStart(3, '0')}`;
    const meta = { r: 3, m: 3, t: 0, e: 1, le: i % 3 ? 'Error: disk full' : 'Error: quota', fa: 1000 + i, rs: 'retries' };
    p.hset(k.deadTasks, id, JSON.stringify([id, 'x', JSON.stringify({ i }), JSON.stringify(meta)])).zadd(k.dead, 1000 + (i % 7), id);
  }
  p.sadd(new GlobalKeys(rig.namespace).queues, 'big');
  await p.exec();
  expect((await inspector.deleteAllTasks('big', 'dead', { error: 'quota' })).count).toBe(150);
  const r = await inspector.retryAllDead('big');
  expect(r.count).toBe(300);
  expect(await rig.client.redis.xlen(k.stream)).toBe(300);
  expect((await inspector.queue('big')).dead).toBe(0);
  const pending = await inspector.taskPage('big', 'pending', { limit: 1000 });
  expect(new Set(pending.tasks.map((t) => t.id)).size).toBe(300);
  expect(pending.tasks.every((t) => t.retried === 0 && t.lastError === 'Error: disk full')).toBe(true);
});

test('delete: pending, scheduled, retry and dead tasks, one or all (filtered); markers released; repeat-safe; typed errors', async () => {
  const a = await rig.client.enqueue('x', { n: 1 }, { queue: 'q', taskId: 'uniq' });
  const pending = await rig.client.enqueue('x', { n: 2 }, { queue: 'q' });
  await rig.client.enqueue('y', { n: 3 }, { queue: 'q' });
  // there, in another state than the act takes: the error says which (was: only "not found … (state scheduled or retry)")
  await expect(inspector.runTask('q', pending.id)).rejects.toThrow(new TaskNotFoundError('q', pending.id, 'scheduled or retry', 'pending'));
  expect(((await inspector.runTask('q', pending.id).catch((e: unknown) => e)) as Error).message).toMatch(
    /\(state scheduled or retry; it is pending\)$/,
  );
  const later = await rig.client.enqueue('x', {}, { queue: 'q', delay: 60_000, taskId: 'later' });
  expect(await inspector.deleteTask('q', a.id, { actor: 'ops' })).toEqual({ count: 1, ids: ['uniq'] });
  expect((await rig.client.enqueue('x', {}, { queue: 'q', taskId: 'uniq' })).deduplicated).toBe(false); // its id is free again
  const missing = 'Task missing not found in queue "q" (state pending or scheduled or retry or dead)';
  await expect(inspector.deleteTask('q', 'missing')).rejects.toThrow(missing);
  expect(await inspector.deleteTask('q', later.id, { state: 'scheduled' })).toMatchObject({ count: 1 });
  expect((await inspector.deleteAllTasks('q', 'pending', { type: 'x' })).count).toBe(2);
  expect((await inspector.taskPage('q', 'pending')).tasks.map((t) => t.type)).toEqual(['y']);
  expect((await inspector.deleteAllTasks('q', 'pending', { type: 'x' })).count).toBe(0);
  await expect(inspector.deleteAllTasks('q', 'active')).rejects.toBeInstanceOf(InvalidTaskStateError);

  const [dead] = await seedDead('q', [{ type: 'z', m: 'boom' }]);
  expect((await inspector.deleteTask('q', dead, { state: 'dead' })).count).toBe(1);
  expect((await inspector.queue('q')).dead).toBe(0);
  expect(acted.map((e) => e.action)).toEqual(['task.delete', 'task.delete', 'task.delete', 'task.delete', 'task.delete']);
});

test('run now: a scheduled and a retry task move into the stream at once and run; all of a state in one call', async () => {
  const s = rig.server({ queues: ['r'] });
  const ran: string[] = [];
  let fail = true;
  s.handle('job', (t) => {
    ran.push(t.id);
    if (fail && t.id === 'flaky') throw new Error('first attempt fails');
  });
  await s.start();
  const sched = await rig.client.enqueue('job', {}, { queue: 'r', delay: 3_600_000 });
  await rig.client.enqueue('job', {}, { queue: 'r', taskId: 'flaky', maxRetry: 3 });
  await waitFor(async () => (await inspector.queue('r')).retry === 1, 'flaky waits for its retry');
  fail = false;
  expect(await inspector.runTask('r', sched.id)).toEqual({ count: 1, ids: [sched.id] });
  expect((await inspector.runAllTasks('r', 'retry')).count).toBe(1);
  await waitFor(() => ran.includes(sched.id) && ran.filter((id) => id === 'flaky').length === 2, 'both to run');
  await expect(inspector.runTask('r', sched.id)).rejects.toBeInstanceOf(TaskNotFoundError);
  expect(await inspector.runAllTasks('r', 'scheduled')).toMatchObject({ count: 0 });
  await expect(inspector.runAllTasks('r', 'dead' as never)).rejects.toBeInstanceOf(InvalidTaskStateError);
});

test('cancel: the active task is dead at once (reason cancelled, never retried); its server aborts its signal with TaskCancelledError', async () => {
  const s = rig.server({ queues: ['c'] });
  const started = deferred();
  const reasons: unknown[] = [];
  s.handle('long', (t) => {
    started.resolve();
    return new Promise((_, reject) => t.signal.addEventListener('abort', () => (reasons.push(t.signal.reason), reject(t.signal.reason))));
  });
  await s.start();
  // the server subscribed to cancel notices at start (cancel-listener.ts)
  const serverEvents: ChronosEvent[] = [];
  rig.events.subscribe((e) => void serverEvents.push(e));
  const { id } = await rig.client.enqueue('long', { n: 1 }, { queue: 'c' });
  await started.promise;
  expect(await inspector.cancelTask(id, { actor: 'ops:eve' })).toEqual({ count: 1, ids: [id] });
  const dead = await inspector.findTask(id);
  const lastError = `TaskCancelledError: Task ${id} was cancelled by ops:eve`;
  expect(dead).toMatchObject({ state: 'dead', reason: 'cancelled', payload: { n: 1 }, lastError });
  await waitFor(() => reasons.length === 1, 'the handler to be aborted');
  const cancelled = await waitFor(() => serverEvents.find((e) => e.type === 'task.cancelled'), 'the server to emit task.cancelled');
  expect(cancelled).toMatchObject({ queue: 'c', taskId: id, taskType: 'long', actor: 'ops:eve' });
  expect(reasons[0]).toBeInstanceOf(TaskCancelledError);
  expect(reasons[0]).toMatchObject({ taskId: id, actor: 'ops:eve' });
  await waitFor(() => s.activeCount === 0, 'the handler to end');
  expect(await inspector.queue('c')).toMatchObject({ pending: 0, active: 0, retry: 0, dead: 1 });
  // issue 24: not "not found in any queue (state active)" for a task that is there, dead
  await expect(inspector.cancelTask(id)).rejects.toThrow(
    `Task ${id} of queue "c" is dead, not active: only a running task can be cancelled; it is dead already (reason cancelled)`,
  );
  expect(acted.map((e) => [e.action, e.actor, e.queue, e.taskId])).toEqual([['task.cancel', 'ops:eve', 'c', id]]);
});

test('queues and schedules: pause/resume, trigger now, remove (runtime, orphaned; live code needs force), backfill once each', async () => {
  await inspector.pauseQueue('q1', { actor: 'ops' });
  expect((await inspector.queue('q1')).paused).toBe(true);
  await inspector.resumeQueue('q1');
  await inspector.resumeQueue('q1'); // repeat: nothing to do
  expect(acted.map((e) => [e.action, e.count])).toEqual([
    ['queue.pause', 1],
    ['queue.resume', 1],
    ['queue.resume', 0],
  ]);

  const sch = new Scheduler({ connection: redisUrl(), namespace: rig.namespace, leaderTtl: 1000, heartbeatInterval: 200, eligible: false });
  sch.register({ name: 'code.job', spec: '@every 60s', queue: 'jobs' });
  await sch.start();
  stoppers.push(() => sch.stop());
  await expect(inspector.removeSchedule('code.job')).rejects.toBeInstanceOf(ChronosStateError);
  await inspector.addSchedule({ name: 'rt', spec: '@every 10s', queue: 'jobs', type: 'rt', payload: { p: 1 } });
  const taskId = await inspector.triggerSchedule('rt', { actor: 'ops:bob' });
  expect(taskId).toMatch(/^rt:manual:/);
  expect(await inspector.findTask(taskId)).toMatchObject({ queue: 'jobs', schedule: 'rt', payload: { p: 1 }, state: 'pending' });

  // backfill the last minute: 6 triggers, each once by its dedup key
  const now = Date.now();
  const from = Math.floor(now / 10_000) * 10_000 - 60_000;
  const first = await inspector.backfillSchedule('rt', from, from + 50_000, { actor: 'ops:bob' });
  expect(first).toMatchObject({ triggers: 6, enqueued: 6, duplicates: 0 });
  expect(first.ids[0]).toBe(triggerKey('rt', from));
  const again = await inspector.backfillSchedule('rt', from - 10_000, from + 50_000);
  expect(again).toMatchObject({ triggers: 7, enqueued: 1, duplicates: 6 });
  expect(await inspector.findTask(triggerKey('rt', from))).toMatchObject({ schedule: 'rt', triggerAt: from });
  expect((await inspector.scheduleHistory('rt', 100)).filter((r) => r.outcome === 'backfill')).toHaveLength(7);
  await expect(inspector.backfillSchedule('rt', now, now - 1)).rejects.toBeInstanceOf(InvalidOptionsError);
  await expect(inspector.backfillSchedule('rt', now - 86_400_000 * 2, now)).rejects.toThrow(/more than 10000/);

  await inspector.removeSchedule('rt');
  await sch.stop();
  await waitFor(async () => (await inspector.schedule('code.job')).orphaned, 'code.job orphaned', 5000);
  await inspector.removeSchedule('code.job'); // orphaned: no force needed
  expect(await inspector.schedules()).toEqual([]);
  expect(acted.filter((e) => e.schedule).map((e) => [e.action, e.schedule, e.count])).toEqual([
    ['schedule.trigger', 'rt', 1],
    ['schedule.backfill', 'rt', 6],
    ['schedule.backfill', 'rt', 1],
    ['schedule.remove', 'rt', 1],
    ['schedule.remove', 'code.job', 1],
  ]);
});
