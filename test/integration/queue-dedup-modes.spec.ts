// Keyed dedup modes (issue 21): `first` (the first task wins while the key lives, as dedupKey),
// `debounce` (a new enqueue replaces the waiting task and moves its start to `delay` after itself)
// and `replace` (the newest payload wins, the start time stays); once the key's task has left the
// scheduled set, a new task is enqueued. Judged by what is stored in Redis and what the handler got.
import { QueueKeys } from '../../lib/core/redis/keys.js';
import type { Task } from '../../lib/core/queue/task.js';
import { NonRetryableError } from '../../lib/core/runtime/errors.js';
import { QueueRig } from '../helpers/queue.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
let keys: QueueKeys;
beforeEach(() => {
  rig = new QueueRig();
  keys = new QueueKeys(rig.namespace, 'default');
});
afterEach(async () => {
  await rig.close();
});

const due = async (id: string) => Number(await rig.client.redis.zscore(keys.scheduled, id));

test('first: the first task wins within the TTL, the same as dedupKey', async () => {
  const a = await rig.client.enqueue('t', { n: 1 }, { dedup: { key: 'k' }, delay: 60_000 });
  const b = await rig.client.enqueue('t', { n: 2 }, { dedup: { key: 'k', mode: 'first' }, delay: 60_000 });
  const c = await rig.client.enqueue('t', { n: 3 }, { dedupKey: 'k' });
  // the first task waits for its time: the deduplicated enqueues say so (they said 'pending')
  expect(b).toEqual({ id: a.id, queue: 'default', deduplicated: true, state: 'scheduled' });
  expect(c).toEqual({ id: a.id, queue: 'default', deduplicated: true, state: 'scheduled' });
  expect(await rig.client.redis.zcard(keys.scheduled)).toBe(1);
});

test('debounce: each enqueue replaces the waiting task and moves its start to delay after itself; one run, the last payload', async () => {
  const ran = deferred<Task<{ n: number }>>();
  const s = rig.server({ forwardInterval: 50 });
  s.handle<{ n: number }>('t', (t) => ran.resolve(t));
  await s.start();
  const a = await rig.client.enqueue('t', { n: 1 }, { dedup: { key: 'k', mode: 'debounce' }, delay: 1000 });
  expect(a.state).toBe('scheduled');
  const first = await due(a.id);
  const b = await rig.client.enqueue('t', { n: 2 }, { dedup: { key: 'k', mode: 'debounce' }, delay: 1000 });
  const c = await rig.client.enqueue('t', { n: 3 }, { dedup: { key: 'k', mode: 'debounce' }, delay: 1500 });
  expect(b).toEqual({ id: a.id, queue: 'default', deduplicated: true, replaced: true, state: 'scheduled' });
  expect(c.id).toBe(a.id);
  expect(await due(a.id)).toBeGreaterThanOrEqual(first + 500); // moved to 1500 ms after the last enqueue
  expect(await rig.client.redis.zcard(keys.scheduled)).toBe(1);
  const t = await ran.promise;
  expect(t.id).toBe(a.id);
  expect(t.payload).toEqual({ n: 3 });
  // the key's task has run: the next debounced enqueue is a new task
  const d = await rig.client.enqueue('t', { n: 4 }, { dedup: { key: 'k', mode: 'debounce' }, delay: 60_000 });
  expect(d.deduplicated).toBe(false);
  expect(d.id).not.toBe(a.id);
});

test('replace: the newest payload wins and the start time stays', async () => {
  const a = await rig.client.enqueue('t', { n: 1 }, { dedup: { key: 'k', mode: 'replace' }, delay: 30_000 });
  const at = await due(a.id);
  const b = await rig.client.enqueue('t', { n: 2 }, { dedup: { key: 'k', mode: 'replace' }, delay: 90_000, maxRetry: 3 });
  expect(b).toMatchObject({ id: a.id, deduplicated: true, replaced: true });
  expect(await due(a.id)).toBe(at);
  const stored = (await rig.client.redis.hget(keys.tasks, a.id))!;
  expect(stored).toContain('{"n":2}');
  expect(stored).toContain('"m":3');
  // a replace-mode enqueue while nothing waits under the key is a new task
  const c = await rig.client.enqueue('t', { n: 3 }, { dedup: { key: 'other', mode: 'replace' }, delay: 60_000 });
  expect(c).toMatchObject({ deduplicated: false, state: 'scheduled' });
  expect(c.id).not.toBe(a.id);
});

test("a deduplicated enqueue tells the existing task's state: ready, waiting for a retry, dead", async () => {
  const s = rig.server({ forwardInterval: 50 });
  s.handle(
    'flaky',
    () => {
      throw new Error('fails');
    },
    { backoff: () => 60_000 },
  );
  s.handle('doomed', () => {
    throw new NonRetryableError('no');
  });
  const retried = deferred();
  const dead = deferred();
  const enqueued: string[] = [];
  rig.events.subscribe((e) => {
    if (e.type === 'task.retried' && e.taskType === 'flaky') retried.resolve();
    if (e.type === 'task.dead' && e.taskType === 'doomed') dead.resolve();
    if (e.type === 'task.enqueued' && e.deduplicated) enqueued.push(e.state);
  });
  const ready = await rig.client.enqueue('idle', null, { taskId: 'ready-1' });
  expect(await rig.client.enqueue('idle', null, { taskId: 'ready-1' })).toMatchObject({ deduplicated: true, state: 'pending' });
  await s.start();
  await rig.client.enqueue('flaky', null, { taskId: 'flaky-1' });
  await rig.client.enqueue('doomed', null, { dedupKey: 'doomed' });
  await retried.promise;
  await dead.promise;
  expect(await rig.client.enqueue('flaky', null, { taskId: 'flaky-1' })).toMatchObject({ deduplicated: true, state: 'retry' });
  expect(await rig.client.enqueue('doomed', null, { dedupKey: 'doomed' })).toMatchObject({ deduplicated: true, state: 'dead' });
  expect(enqueued).toEqual(['pending', 'retry', 'dead']);
  expect(ready.state).toBe('pending');
  // a dead task's explicit id used again: the live task is the answer, not the dead one (trial 8: "dead")
  s.handle('idle2', () => {});
  const died = deferred();
  rig.events.subscribe((e) => e.type === 'task.dead' && e.taskId === 'again-1' && died.resolve());
  await rig.client.enqueue('doomed', null, { taskId: 'again-1' });
  await died.promise;
  await s.shutdown();
  expect(await rig.client.enqueue('idle2', null, { taskId: 'again-1' })).toMatchObject({ deduplicated: false, state: 'pending' });
  expect(await rig.client.enqueue('idle2', null, { taskId: 'again-1' })).toMatchObject({ deduplicated: true, state: 'pending' });
  const insp = new Inspector({ connection: redisUrl(), namespace: rig.namespace });
  try {
    expect(await insp.findTask('again-1')).toMatchObject({ type: 'idle2', state: 'pending' }); // not the dead copy
  } finally {
    await insp.close();
  }
});

test("an operator's delete releases the task's dedup key (a pending and a scheduled task): the next enqueue with it is a new task", async () => {
  // before: the key outlived the deleted task until its TTL ran out, and an enqueue with it answered
  // deduplicated, state pending, for a task that no longer existed (trial 11); BullMQ's Job.remove drops its deduplication id too
  const insp = new Inspector({ connection: redisUrl(), namespace: rig.namespace });
  try {
    const ready = await rig.client.enqueue('t', { n: 1 }, { dedupKey: 'kp' });
    const later = await rig.client.enqueue('t', { n: 2 }, { dedup: { key: 'ks', mode: 'replace' }, delay: 60_000 });
    expect(await rig.client.enqueue('t', { n: 3 }, { dedupKey: 'kp' })).toMatchObject({ id: ready.id, deduplicated: true });
    await insp.deleteTask('default', ready.id);
    await insp.deleteTask('default', later.id);
    const again = await rig.client.enqueue('t', { n: 4 }, { dedupKey: 'kp' });
    expect(again).toMatchObject({ deduplicated: false, state: 'pending' });
    expect(again.id).not.toBe(ready.id);
    expect(await rig.client.enqueue('t', { n: 5 }, { dedup: { key: 'ks', mode: 'replace' }, delay: 60_000 })).toMatchObject({
      deduplicated: false,
      state: 'scheduled',
    });
    // a key another task holds now is left alone: deleting the old task does not free the new one's key
    await insp.deleteAllTasks('default', 'scheduled');
    expect(await rig.client.enqueue('t', { n: 6 }, { dedupKey: 'kp' })).toMatchObject({ id: again.id, deduplicated: true });
  } finally {
    await insp.close();
  }
});

test('a task id and a dedup key holding "}:group-running:" are acked and deleted like any other (were taken for a group slot: WRONGTYPE)', async () => {
  // before: the marker release took the task's uid key for a group's slot SET (the text after the hash tag
  // was not checked): its ack failed with WRONGTYPE at every try and the task ran again after each visibility timeout
  const s = rig.server();
  const ran = deferred<string>();
  s.handle('odd', (t) => ran.resolve(t.id));
  await s.start();
  const id = 'x}:group-running:y';
  await rig.client.enqueue('odd', null, { taskId: id });
  expect(await ran.promise).toBe(id);
  await waitFor(async () => (await rig.client.redis.xlen(keys.stream)) === 0, 'its ack (the entry deleted)');
  expect(rig.logger.lines.filter((l) => l.level !== 'log')).toEqual([]);
  const insp = new Inspector({ connection: redisUrl(), namespace: rig.namespace });
  try {
    const later = await rig.client.enqueue('odd', null, { dedupKey: 'k}:group-running:z', delay: 60_000 });
    expect(await insp.deleteTask('default', later.id)).toMatchObject({ count: 1 });
    expect((await rig.client.enqueue('odd', null, { dedupKey: 'k}:group-running:z', delay: 60_000 })).deduplicated).toBe(false);
  } finally {
    await insp.close();
  }
});

test('bad dedup options are refused, naming the value', async () => {
  const e = (o: object) => rig.client.enqueue('t', {}, o);
  await expect(e({ dedup: { key: 'k', mode: 'debounce' } })).rejects.toThrow(/dedup.mode: debounce needs a delay/);
  // a task due at once never waits: replace would dedup nothing (trial 10: both enqueues ran)
  await expect(e({ dedup: { key: 'k', mode: 'replace' } })).rejects.toThrow(/dedup.mode: replace needs a delay or processAt/);
  await expect(e({ dedup: { key: 'k', mode: 'later' } })).rejects.toThrow(
    /dedup.mode: expected one of first, debounce, replace, got "later"/,
  );
  await expect(e({ dedup: { key: '' } })).rejects.toThrow(/dedup.key: /);
  await expect(e({ dedup: { key: 'k', ttl: 0 } })).rejects.toThrow(/dedup.ttl: /);
  await expect(e({ dedup: { key: 'k', when: 1 } })).rejects.toThrow(/dedup: unknown option "when"/);
  await expect(e({ dedup: { key: 'k' }, dedupKey: 'k' })).rejects.toThrow(/dedup: exclusive with dedupKey/);
  await expect(e({ dedup: { key: 'k', mode: 'replace' }, taskId: 'x' })).rejects.toThrow(/replace is not given with taskId/);
});
