// The Inspector's reads against a real Redis: queues (counts, latency, 7 days, lost, memory), task
// pages by state with cursors and decoded payloads, one task by id across queues, dead groups,
// schedules (note, origin, liveness, orphaned), fire history, leader, servers, Redis.
import { InvalidOptionsError, InvalidTaskStateError, NonRetryableError, ScheduleNotFoundError } from '../../lib/core/runtime/errors.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { utcDay } from '../../lib/core/queue/codec.js';
import { GlobalKeys, QueueKeys } from '../../lib/core/redis/keys.js';
import { recordFires } from '../../lib/core/scheduler/history.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { QueueRig } from '../helpers/queue.js';
import { quietHourly } from '../helpers/quiet-spec.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, waitFor } from '../helpers/wait.js';
import { engineTime } from '../../lib/core/runtime/time.js';

let rig: QueueRig;
let inspector: Inspector;
const stoppers: (() => Promise<void>)[] = [];
beforeEach(() => {
  rig = new QueueRig();
  inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace, livenessWindow: 1000 });
});
afterEach(async () => {
  for (const stop of stoppers.splice(0).reverse()) await stop();
  await inspector.close();
  await rig.close();
});

test('queue: counts by state, paused, latency of the oldest pending task, 7 days of processed/failed/lost, memory', async () => {
  const k = new QueueKeys(rig.namespace, 'mail');
  for (let i = 0; i < 4; i++) await rig.client.enqueue('mail.send', { i }, { queue: 'mail' });
  await rig.client.enqueue('mail.send', {}, { queue: 'mail', delay: 60_000 });
  // the lost counter is written by the queue-integrity work; the Inspector reads whatever is there
  const yesterday = utcDay(Date.now() - 86_400_000);
  await rig.client.redis.set(k.lost(yesterday), '2');
  await waitFor(async () => (await inspector.queue('mail')).latencyMs >= 30, 'the oldest pending task to age');
  await inspector.pauseQueue('mail');
  const q = await inspector.queue('mail');
  expect(q).toMatchObject({ name: 'mail', pending: 4, active: 0, scheduled: 1, retry: 0, dead: 0, paused: true, lost: 2 });
  expect(q.days.map((d) => d.day)).toEqual(Array.from({ length: 7 }, (_, i) => utcDay(Date.now() - (6 - i) * 86_400_000)));
  expect(q.days[5]).toEqual({ day: yesterday, processed: 0, failed: 0, lost: 2 });
  expect(q.memoryBytes).toBeGreaterThan(0);

  await inspector.resumeQueue('mail');
  const s = rig.server({ queues: ['mail'] });
  const done = deferred();
  let n = 0;
  s.handle('mail.send', (t) => {
    if ((t.payload as { i?: number }).i === 0) throw new NonRetryableError('mailbox full');
    if (++n === 3) done.resolve();
  });
  await s.start();
  await done.promise;
  await waitFor(async () => {
    const x = await inspector.queue('mail');
    return x.processedToday === 3 && x.failedToday === 1 && x.dead === 1 && x.pending === 0 ? x : undefined;
  }, 'the counters of today');
  const after = await inspector.queue('mail');
  expect(after).toMatchObject({ paused: false, latencyMs: 0, pending: 0, active: 0 });
  expect(after.days[6]).toMatchObject({ day: utcDay(Date.now()), processed: 3, failed: 1 });
  expect((await inspector.queues()).map((x) => x.name)).toEqual(['mail']);
});

test('task pages: cursors, decoded payloads, ties kept in order when the cursor task leaves; an unknown state is a typed error', async () => {
  for (let i = 0; i < 7; i++) await rig.client.enqueue('p', { i }, { queue: 'q' });
  const seen: unknown[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await inspector.taskPage('q', 'pending', { limit: 3, cursor });
    seen.push(...page.tasks.map((t) => t.payload));
    cursor = page.cursor;
    pages++;
  } while (cursor);
  expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => ({ i })));
  expect(pages).toBe(3);

  // five scheduled tasks due at the same instant: the page order is the member order
  const at = Date.now() + 3_600_000;
  for (let i = 0; i < 5; i++) await rig.client.enqueue('s', { i }, { queue: 'q', processAt: at, taskId: `s-${i}` });
  const first = await inspector.taskPage('q', 'scheduled', { limit: 2 });
  expect(first.tasks.map((t) => [t.id, t.at, t.state])).toEqual([
    ['s-0', at, 'scheduled'],
    ['s-1', at, 'scheduled'],
  ]);
  // the cursor's own task leaves the set: the next page still starts right after it
  await rig.client.redis.zrem(new QueueKeys(rig.namespace, 'q').scheduled, 's-1');
  const second = await inspector.taskPage('q', 'scheduled', { limit: 2, cursor: first.cursor });
  expect(second.tasks.map((t) => t.id)).toEqual(['s-2', 's-3']);
  const third = await inspector.taskPage('q', 'scheduled', { limit: 2, cursor: second.cursor });
  expect(third.tasks.map((t) => t.id)).toEqual(['s-4']);
  expect(third.cursor).toBeUndefined();
  expect((await inspector.tasks('q', 'scheduled', { offset: 1, limit: 2 })).map((t) => t.id)).toEqual(['s-2', 's-3']);

  const err = await inspector.taskPage('q', 'waiting' as never).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidTaskStateError);
  expect((err as Error).message).toBe('Unknown task state "waiting": expected one of pending, active, scheduled, retry, dead');
  await expect(inspector.taskPage('q', 'pending', { cursor: 'nonsense' })).rejects.toBeInstanceOf(InvalidOptionsError);
  await expect(inspector.taskPage('q', 'dead', { limit: 0 })).rejects.toBeInstanceOf(InvalidOptionsError);
  // tasks()'s offset was not checked: -1 sliced from the end (the last task, in silence), NaN was told as a bad limit
  for (const [page, message] of [
    [{ offset: -1, limit: 10 }, 'offset: expected an integer >= 0, got -1'],
    [{ offset: Number.NaN }, 'offset: expected an integer >= 0, got NaN'],
    [{ offset: '1' }, 'offset: expected an integer >= 0, got "1"'],
    [{ limit: 0 }, 'limit: expected an integer >= 1, got 0'],
  ] as const) {
    const bad = await inspector.tasks('q', 'scheduled', page as never).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(InvalidOptionsError);
    expect((bad as Error).message).toContain(message);
  }
});

test('active, retry and dead tasks: who holds them, the last error with its stack, filters by type and error', async () => {
  const release = deferred();
  const s = rig.server({ queues: ['w'], concurrency: 2 });
  s.handle('hold', () => release.promise);
  s.handle('flaky', () => {
    throw new Error('upstream 503');
  });
  s.handle('broken', (t) => {
    throw new NonRetryableError(`bad input ${String((t.payload as { n: number }).n)}`);
  });
  await s.start();
  stoppers.push(async () => release.resolve());
  const held = await rig.client.enqueue('hold', { a: 1 }, { queue: 'w' });
  await rig.client.enqueue('flaky', null, { queue: 'w', maxRetry: 5 });
  for (let n = 0; n < 3; n++) await rig.client.enqueue('broken', { n }, { queue: 'w' });
  await waitFor(async () => {
    const q = await inspector.queue('w');
    return q.active === 1 && q.retry === 1 && q.dead === 3;
  }, 'one active, one retry, three dead');
  const [active] = (await inspector.taskPage('w', 'active')).tasks;
  expect(active).toMatchObject({ id: held.id, state: 'active', payload: { a: 1 }, consumer: s.id, deliveries: 1 });
  expect(active.idleMs).toBeGreaterThanOrEqual(0);
  const [retry] = (await inspector.taskPage('w', 'retry')).tasks;
  expect(retry).toMatchObject({ type: 'flaky', retried: 1, maxRetry: 5, payload: null });
  expect(retry.lastError).toMatch(/^Error: upstream 503\n\s+at /); // message and stack
  const dead = await inspector.taskPage('w', 'dead', { type: 'broken', error: 'BAD INPUT 1' });
  expect(dead.tasks.map((t) => t.payload)).toEqual([{ n: 1 }]);
  expect(dead.tasks[0]).toMatchObject({ reason: 'non-retryable', state: 'dead' });
  expect(dead.tasks[0].failedAt).toBeGreaterThan(0);
  expect((await inspector.taskPage('w', 'dead', { type: 'flaky' })).tasks).toEqual([]);
});

test('issue 24: an active task says when its handler started (running for), which the claim renewals do not reset as they do idleMs', async () => {
  const release = deferred();
  const started = deferred<number>();
  const s = rig.server({ queues: ['run'], visibilityTimeout: 1500 }); // claims renewed every 500 ms
  s.handle('long', () => (started.resolve(engineTime.now()), release.promise));
  await s.start();
  stoppers.push(async () => release.resolve());
  const before = engineTime.now();
  const { id } = await rig.client.enqueue('long', null, { queue: 'run' });
  const handlerAt = await started.promise;
  // the server's heartbeat names it with its start; a claim renewal since has reset its idle time
  const t = await waitFor(
    async () => {
      const [a] = (await inspector.taskPage('run', 'active')).tasks;
      return a?.startedAt !== undefined && engineTime.now() - a.startedAt > a.idleMs! ? a : undefined;
    },
    { what: 'the active task with its start, renewed since', timeoutMs: 15_000 },
  );
  expect(t).toMatchObject({ id, consumer: s.id });
  // the same clock (this process's engine time, which the executor reads): the run began after the enqueue, and before the handler was called
  expect(t.startedAt).toBeGreaterThanOrEqual(before);
  expect(t.startedAt).toBeLessThanOrEqual(handlerAt);
  expect((await inspector.findTask(id))?.startedAt).toBe(t.startedAt);
  expect(Object.keys((await inspector.servers()).find((x) => x.id === s.id)!)).not.toContain('runningSince');
});

test('one task by id across all queues, in each state; a trigger task has its schedule and instant; garbage is shown, not thrown', async () => {
  const a = await rig.client.enqueue('x', { where: 'a' }, { queue: 'a' });
  const b = await rig.client.enqueue('x', { where: 'b' }, { queue: 'b', delay: 60_000 });
  const k = new QueueKeys(rig.namespace, 'c');
  await rig.client.redis.sadd(new GlobalKeys(rig.namespace).queues, 'c');
  const meta = JSON.stringify({ r: 0, m: 3, t: 0, e: 1, s: 'nightly', tr: 1764547200000 });
  await rig.client.redis.xadd(k.stream, '*', 'id', 'nightly:1764547200', 'type', 'report', 'payload', '{"n":1}', 'meta', meta);
  await rig.client.redis.xadd(k.stream, '*', 'id', 'junk', 'type', 'report', 'payload', '{not json', 'meta', '{"r":0,"m":1,"t":0,"e":1}');
  expect(await inspector.findTask(a.id)).toMatchObject({ queue: 'a', state: 'pending', payload: { where: 'a' } });
  expect(await inspector.findTask(b.id)).toMatchObject({ queue: 'b', state: 'scheduled', payload: { where: 'b' } });
  const trigger = await inspector.findTask('nightly:1764547200');
  expect(trigger).toMatchObject({ queue: 'c', schedule: 'nightly', triggerAt: 1764547200000, maxRetry: 3 });
  expect(await inspector.findTask('junk')).toMatchObject({ payload: '{not json', payloadError: expect.stringMatching(/invalid JSON/) });
  expect(await inspector.findTask(a.id, 'b')).toBeUndefined();
  // an id no task can have was looked for through every queue's stream and answered "not found";
  // requireTask (the CLI's `task`, the console's task page) answered TaskNotFoundError for it
  for (const [id, shown] of [
    ['', '""'],
    [5, '5'],
    [undefined, 'undefined'],
  ] as const) {
    for (const read of [inspector.findTask, inspector.requireTask]) {
      const bad = await read.call(inspector, id as never).catch((e: unknown) => e);
      expect(bad).toBeInstanceOf(InvalidOptionsError);
      expect((bad as Error).message).toContain(`id: expected a non-empty string, got ${shown}`);
    }
  }
  expect(await inspector.task('a', a.id)).toMatchObject({ id: a.id });
  expect(await inspector.findTask('nope')).toBeUndefined();
});

test('dead groups: by error message with counts, queues and types, newest sample; filtered; bounded', async () => {
  const s = rig.server({ queues: { one: 1, two: 1 } });
  s.handle('fetch', (t) => {
    throw new NonRetryableError((t.payload as { m: string }).m);
  });
  await s.start();
  const msgs = ['timeout', 'timeout', 'timeout', 'refused', 'refused', 'parse'];
  for (const [i, m] of msgs.entries()) await rig.client.enqueue('fetch', { m }, { queue: i % 2 ? 'one' : 'two' });
  await waitFor(async () => (await inspector.queues()).reduce((n, q) => n + q.dead, 0) === 6, 'six dead');
  const all = await inspector.deadGroups();
  expect(all.groups.map((g) => [g.message, g.count])).toEqual([
    ['NonRetryableError: timeout', 3],
    ['NonRetryableError: refused', 2],
    ['NonRetryableError: parse', 1],
  ]);
  expect(all.groups[0]).toMatchObject({ queues: ['one', 'two'], types: ['fetch'] });
  expect(all).toMatchObject({ scanned: 6, truncated: false });
  expect((await inspector.deadGroups({ error: 'refus' })).groups.map((g) => g.count)).toEqual([2]);
  expect((await inspector.deadGroups({ queue: 'one' })).groups.reduce((n, g) => n + g.count, 0)).toBe(3);
  expect(await inspector.deadGroups({ scan: 4 })).toMatchObject({ scanned: 4, truncated: true });
});

test('schedules: origin, note, declaring instances, orphaned; history with outcomes and task states; leader, servers, Redis', async () => {
  const sch = new Scheduler({ connection: redisUrl(), namespace: rig.namespace, leaderTtl: 1000, heartbeatInterval: 200 });
  sch.register({ name: 'code.job', spec: '0 3 * * *', timeZone: 'Europe/Budapest', queue: 'jobs' });
  await sch.start();
  stoppers.push(() => sch.stop());
  // hourly, half an hour from now: the leader started above must not fire it during the test (history)
  await inspector.addSchedule({ name: 'rt.job', spec: quietHourly(), queue: 'jobs', type: 'rt' });
  // a note longer than the console takes (1,000 characters) is refused whoever sends it, and nothing is paused
  await expect(inspector.pauseSchedule('rt.job', { note: 'x'.repeat(5000) })).rejects.toThrow(
    /note: expected a string of at most 1000 characters, got 5000 characters/,
  );
  expect((await inspector.schedule('rt.job')).paused).toBe(false);
  await inspector.pauseSchedule('rt.job', { note: 'vendor outage', actor: 'ops:ada' });
  await waitFor(() => sch.isLeader, 'leadership');
  const [code, rt] = await inspector.schedules(2);
  expect(code).toMatchObject({ name: 'code.job', origin: 'code', runtime: false, orphaned: false, paused: false });
  expect(code).toMatchObject({ timeZone: 'Europe/Budapest', queue: 'jobs' });
  expect(code.declaredBy).toEqual([{ instance: sch.instanceId, lastSeenAt: expect.any(Number), alive: true }]);
  expect(code.next).toHaveLength(2);
  expect(rt).toMatchObject({ name: 'rt.job', origin: 'runtime', paused: true, pause: { note: 'vendor outage', actor: 'ops:ada' } });
  expect(rt.pause!.at).toBeGreaterThan(Date.now() - 60_000);
  await inspector.resumeSchedule('rt.job');
  expect((await inspector.schedule('rt.job')).pause).toBeUndefined();
  await expect(inspector.schedule('nope')).rejects.toBeInstanceOf(ScheduleNotFoundError);

  // history: what the scheduler's fire path records (recordFires), plus an operator's trigger
  const k = new QueueKeys(rig.namespace, 'jobs');
  const t0 = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  const [older, old] = [t0 - 7_200_000, t0 - 3_600_000];
  const meta = '{"r":0,"m":1,"t":0,"e":1}';
  await rig.client.redis.xadd(k.stream, '*', 'id', `rt.job:${old / 1000}`, 'type', 'rt', 'payload', 'null', 'meta', meta);
  await recordFires(rig.client.redis, k, [
    { schedule: 'rt.job', triggerAt: older, at: older, outcome: 'enqueued', taskId: `rt.job:${older / 1000}`, by: 'i1' },
    { schedule: 'rt.job', triggerAt: old, at: old, outcome: 'enqueued', taskId: `rt.job:${old / 1000}`, by: 'i1' },
    { schedule: 'rt.job', triggerAt: t0, at: t0, outcome: 'skipped-overlap', by: 'i1' },
    { schedule: 'rt.job', triggerAt: t0, at: t0, outcome: undefined },
  ]);
  const manual = await inspector.triggerSchedule('rt.job', { actor: 'ops:bob' });
  const h = await inspector.scheduleHistory('rt.job');
  expect(h.map((r) => [r.outcome, r.task])).toEqual([
    ['manual', 'pending'],
    ['skipped-overlap', undefined],
    ['enqueued', 'pending'],
    ['enqueued', 'done'],
  ]);
  expect(h[0]).toMatchObject({ taskId: manual, by: 'ops:bob' });
  expect((await inspector.scheduleHistory('rt.job', 1)).length).toBe(1);

  const leader = await inspector.leader();
  expect(leader).toMatchObject({ instance: sch.instanceId, term: sch.term });
  expect(leader!.ttlMs).toBeGreaterThan(0);
  const w = rig.server({ queues: ['jobs'], concurrency: 3 });
  await w.start();
  expect((await inspector.servers()).map((x) => [x.id, x.concurrency, x.queues])).toEqual([[w.id, 3, { jobs: 1 }]]);
  const redis = await inspector.redisInfo();
  expect(redis.version).toMatch(/^\d+\.\d+/);
  expect(redis).toMatchObject({ mode: 'standalone', role: 'master' });
  expect(redis.usedMemoryBytes).toBeGreaterThan(0);
  if (redis.maxMemoryPolicy === 'noeviction') expect(redis.warning).toBeUndefined();
  else expect(redis.warning).toMatch(/noeviction/);
  expect(await inspector.check()).toBe(redis.version);

  // the declaring instance stops: after the liveness window the schedule is orphaned
  await sch.stop();
  await waitFor(async () => (await inspector.schedule('code.job')).orphaned, 'code.job to be orphaned', 5000);
  const dead = async () => (await inspector.instances()).find((i) => i.instance === sch.instanceId)?.alive === false;
  await waitFor(dead, 'the instance to be dead', 5000);
});

test('the count of next triggers and the history limit are checked: Inspector.schedules(1e9) crashed the process (V8 "invalid size error"), -1 or "abc" listed none, a history limit of 0 gave one fire and "abc" a raw Redis error', async () => {
  await inspector.addSchedule({ name: 'every.second', spec: '@every 1s', type: 'rt' });
  for (const n of [1e9, 1001, -1, 1.5, 'abc', NaN]) {
    await expect(inspector.schedules(n as number)).rejects.toThrow(InvalidOptionsError);
    await expect(inspector.schedule('every.second', n as number)).rejects.toThrow(
      /n: expected an integer 0-1000 \(next triggers per schedule\), got /,
    );
  }
  expect((await inspector.schedule('every.second', 0)).next).toEqual([]);
  expect((await inspector.schedule('every.second', 1000)).next).toHaveLength(1000);
  for (const limit of [0, -1, 1.5, 'abc']) {
    await expect(inspector.scheduleHistory('every.second', limit as number)).rejects.toThrow(
      /limit: expected an integer of at least 1, got /,
    );
  }
  expect(await inspector.scheduleHistory('every.second', 1e6)).toEqual([]);
});
