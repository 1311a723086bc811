// The testing kit (@chronos/nest/testing) in manual and inline modes: the same discovery (and
// boot errors) as ChronosModule, enqueues recorded with the engine's checks, dedup, fan-out,
// perform/drain by the engine's retry rules, fireDue by the engine's spec math. No Redis here
// except where a test compares a boot error with ChronosModule's.
import { Injectable, type ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  ChronosClient,
  ChronosModule,
  Cron,
  Interval,
  InvalidOptionsError,
  InvalidPayloadError,
  NonRetryableError,
  SchedulerService,
  TaskHandler,
  TaskSupersededError,
  type Task,
} from '../../lib/index.js';
import { ChronosTesting, ChronosTestingError, ChronosTestingModule, type ChronosTestingOptions } from '../../lib/nest/testing/index.js';
import { jitterShiftMs } from '../../lib/core/scheduler/schedule-bounds.js';
import type { StoredSchedule } from '../../lib/core/scheduler/definition.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred } from '../helpers/wait.js';
import { BAD_SCHEDULE_ERRORS, badScheduleArgs } from '../helpers/bad-schedule-args.js';

async function kit(providers: ModuleMetadata['providers'], options: ChronosTestingOptions = {}) {
  const module = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot(options)], providers }).compile();
  module.useLogger(false);
  await module.init();
  return { module, testing: module.get(ChronosTesting), client: module.get(ChronosClient) };
}

class SendEmail {
  static readonly type = 'email.send';
  constructor(
    readonly to: string,
    readonly subject: string,
  ) {}
}

test('manual: enqueues are recorded with the engine checks; expectEnqueued says what differs', async () => {
  const { testing, client, module } = await kit([]);
  await client.enqueue(new SendEmail('ada@example.com', 'Welcome'));
  await client.enqueue('report.build', { day: '2026-03-29' }, { queue: 'reports', maxRetry: 3, delay: 60_000 });
  const [email] = testing.enqueued(SendEmail);
  expect(email).toMatchObject({ type: 'email.send', queue: 'default', payload: { to: 'ada@example.com', subject: 'Welcome' }, retried: 0 });
  expect(email.options).toEqual({ maxRetry: 25, timeout: 1_800_000 });
  expect(testing.enqueued('report.build')[0]).toMatchObject({ queue: 'reports', options: { maxRetry: 3 }, runAt: testing.now + 60_000 });
  expect(testing.expectEnqueued(SendEmail, { to: 'ada@example.com' })).toBe(email);
  expect(() => testing.expectEnqueued(SendEmail, { to: 'bob@example.com' })).toThrow(ChronosTestingError);
  expect(() => testing.expectEnqueued(SendEmail, { to: 'bob@example.com' })).toThrow(
    /payload\.to: expected 'bob@example\.com', got 'ada@example\.com'/,
  );
  expect(() => testing.expectEnqueued('invoice.send')).toThrow(/no task of that type is[\s\S]*email\.send id=/);
  // the engine's own checks, before anything is recorded
  await expect(client.enqueue('x', { n: 1n })).rejects.toThrow(InvalidPayloadError);
  await expect(client.enqueue('x', {}, { queue: 'bad queue' } as never)).rejects.toThrow(InvalidOptionsError);
  await expect(client.enqueue('x', {}, { colour: 'red' } as never)).rejects.toThrow(/colour/);
  expect(testing.enqueued()).toHaveLength(2);
  await module.close();
});

test('dedup: a live taskId and a dedupKey within its TTL return the first task, as enqueue.lua', async () => {
  @Injectable()
  class H {
    @TaskHandler('t')
    t() {}
  }
  const { testing, client, module } = await kit([H]);
  const a = await client.enqueue('t', 1, { taskId: 'one' });
  expect(await client.enqueue('t', 2, { taskId: 'one' })).toEqual({ ...a, deduplicated: true });
  const k = await client.enqueue('t', 3, { dedupKey: 'k', dedupTtl: 1000 });
  expect((await client.enqueue('t', 4, { dedupKey: 'k' })).id).toBe(k.id);
  await testing.drain();
  expect((await client.enqueue('t', 5, { taskId: 'one' })).deduplicated).toBe(false); // done frees the id
  expect((await client.enqueue('t', 6, { dedupKey: 'k' })).deduplicated).toBe(true); // the key outlives its task
  await testing.advanceTo(testing.now + 1000);
  expect((await client.enqueue('t', 7, { dedupKey: 'k' })).deduplicated).toBe(false);
  // the existing task's state, not this enqueue's: it waits for its time
  await client.enqueue('t', 8, { taskId: 'later', delay: 5000 });
  expect(await client.enqueue('t', 9, { taskId: 'later' })).toMatchObject({ deduplicated: true, state: 'scheduled' });
  await module.close();
});

test('dedup modes: debounce replaces the waiting task and moves its time, replace keeps it, as enqueue.lua', async () => {
  const { testing, client, module } = await kit([]);
  const t0 = testing.now;
  const a = await client.enqueue('t', { n: 1 }, { dedup: { key: 'd', mode: 'debounce' }, delay: 1000 });
  await testing.advanceTo(t0 + 500);
  const b = await client.enqueue('t', { n: 2 }, { dedup: { key: 'd', mode: 'debounce' }, delay: 1000, group: 'g1' });
  expect(b).toEqual({ id: a.id, queue: 'default', deduplicated: true, replaced: true, state: 'scheduled' });
  expect(testing.enqueued('t')).toMatchObject([{ id: a.id, payload: { n: 2 }, runAt: t0 + 1500, group: 'g1' }]);
  const r = await client.enqueue('r', { n: 1 }, { dedup: { key: 'r', mode: 'replace' }, delay: 1000 });
  await client.enqueue('r', { n: 2 }, { dedup: { key: 'r', mode: 'replace' }, delay: 9000 });
  expect(testing.enqueued('r')).toMatchObject([{ id: r.id, payload: { n: 2 }, runAt: t0 + 1500 }]);
  await module.close();
});

test('perform: the real handler with the Task shape; outcomes follow the retry rules and the handler backoff', async () => {
  const seen: Task[] = [];
  @Injectable()
  class Mailer {
    @TaskHandler(SendEmail, { backoff: (retried) => 1000 * (retried + 1) })
    send(task: Task<SendEmail>) {
      seen.push(task);
      if (!(task.payload instanceof SendEmail)) throw new Error('payload class not restored');
      if (task.payload.to === 'bounce@example.com') throw new NonRetryableError('mailbox does not exist');
      if (task.payload.to === 'full@example.com') throw new Error('mailbox full');
      if (task.retried < 2) throw new Error('SMTP down');
    }
  }
  const { testing, client, module } = await kit([Mailer], { now: '2026-01-01T00:00:00Z' });
  await client.enqueue(new SendEmail('ada@example.com', 'Hi'), { maxRetry: 2 });
  const [task] = testing.enqueued(SendEmail);
  const first = await testing.perform(task);
  expect(first).toMatchObject({ outcome: 'retry', delayMs: 1000, retryAt: Date.parse('2026-01-01T00:00:01Z') });
  expect(seen[0]).toMatchObject({ id: task.id, retried: 0, maxRetry: 2, queue: 'default' });
  expect(seen[0].signal).toBeInstanceOf(AbortSignal);
  await expect(testing.perform(task)).rejects.toThrow(/not in its queue/);
  const drained = await testing.drain();
  expect(drained.outcomes.map((o) => [o.outcome, o.task.retried])).toEqual([
    ['retry', 1],
    ['succeeded', 2],
  ]);
  expect(testing.now).toBe(Date.parse('2026-01-01T00:00:03Z')); // 1 s, then 2 s of virtual backoff
  expect(await testing.perform(SendEmail, { to: 'bounce@example.com', subject: 'x' })).toMatchObject({
    outcome: 'dead',
    reason: 'non-retryable',
  });
  expect(await testing.perform(SendEmail, { to: 'full@example.com', subject: 'x' }, { retried: 3, maxRetry: 3 })).toMatchObject({
    outcome: 'dead',
    reason: 'retries',
  });
  await expect(testing.perform('nobody.handles')).rejects.toThrow(/no handler for task type "nobody.handles"/);
  await module.close();
});

test('drain runs what handlers enqueue, and stops a loop with a clear error', async () => {
  @Injectable()
  class Chain {
    constructor(private readonly client: ChronosClient) {}
    @TaskHandler('step')
    async step(task: Task<{ n: number }>) {
      if (task.payload.n < 3) await this.client.enqueue('step', { n: task.payload.n + 1 });
    }
    @TaskHandler('forever')
    async forever() {
      await this.client.enqueue('forever');
    }
  }
  const { testing, client, module } = await kit([Chain]);
  await client.enqueue('step', { n: 0 });
  expect((await testing.drain()).succeeded).toBe(4);
  await client.enqueue('forever');
  await expect(testing.drain(undefined, { maxAttempts: 50 })).rejects.toThrow(/did not empty after 50 attempts.*forever ×50/);
  await module.close();
});

test('fan-out: each listener gets its child task <parent>#<listener>, as in production', async () => {
  const ran: string[] = [];
  @Injectable()
  class A {
    @TaskHandler(SendEmail)
    log(t: Task<SendEmail>) {
      ran.push(`A:${t.type}:${t.payload.to}:${t.id}`);
    }
  }
  @Injectable()
  class B {
    @TaskHandler(SendEmail)
    audit(t: Task<SendEmail>) {
      ran.push(`B:${t.type}:${t.payload.to}:${t.id}`);
    }
  }
  const { testing, client, module } = await kit([A, B]);
  await client.enqueue(new SendEmail('ada@example.com', 'Hi'), { taskId: 'p1' });
  await testing.perform(testing.enqueued(SendEmail)[0]);
  expect(testing.enqueued().map((t) => t.id)).toEqual(['p1#A.log', 'p1#B.audit']);
  await testing.drain();
  expect(ran).toEqual(['A:email.send:ada@example.com:p1#A.log', 'B:email.send:ada@example.com:p1#B.audit']);
  await module.close();
});

test('fireDue: real cron math in a zone across DST, trigger ids and triggerAt, pause honoured, fired once', async () => {
  const reports: Task[] = [];
  @Injectable()
  class Reports {
    @Cron('30 2 * * *', { name: 'nightly', timeZone: 'Europe/Budapest' })
    nightly(task: Task) {
      reports.push(task);
    }
    @Interval('1h', { name: 'hourly' })
    hourly() {}
  }
  const { testing, module } = await kit([Reports]);
  // 2026-03-29: Budapest springs from 02:00 to 03:00; the 02:30 report runs once, at 03:00 local (01:00Z)
  await testing.fireDue('2026-03-28T12:00:00Z', '2026-03-29T12:00:00Z');
  const nightly = testing.enqueued(undefined, (t) => t.schedule === 'nightly');
  expect(nightly.map((t) => [t.id, new Date(t.triggerAt!).toISOString()])).toEqual([['nightly:1774746000', '2026-03-29T01:00:00.000Z']]);
  expect(testing.enqueued('hourly')).toHaveLength(25); // [from, to]: both ends included
  // the same window again: each trigger's dedup key is alive at its instant, nothing is enqueued twice
  expect(await testing.fireDue('2026-03-28T12:00:00Z', '2026-03-29T12:00:00Z')).toEqual([]);
  expect(testing.now).toBe(Date.parse('2026-03-29T12:00:00Z'));
  await testing.drain();
  expect(reports.map((t) => [t.schedule, t.triggerAt])).toEqual([['nightly', Date.parse('2026-03-29T01:00:00Z')]]);
  await module.get(SchedulerService).pauseSchedule('hourly');
  const fired = await testing.fireDue('2026-03-30T00:00:00Z', '2026-03-31T00:00:00Z');
  expect(fired.map((t) => t.schedule)).toEqual(['nightly']);
  await module.close();
});

test('a runtime write over a schedule declared by a decorator is refused unless forced, as by the engine', async () => {
  @Injectable()
  class Reports {
    @Cron('30 2 * * *', { name: 'nightly' })
    nightly() {}
  }
  const { module } = await kit([Reports]);
  const scheduler = module.get(SchedulerService);
  const def = { name: 'nightly', spec: '@every 1h', type: 'data' };
  await expect(scheduler.addSchedule(def)).rejects.toThrow(/Schedule "nightly" is declared in code.*force: true/);
  await expect(scheduler.upsertSchedules([def, { name: 'other', spec: '@every 1h' }])).rejects.toThrow(/"nightly".*left them untouched/);
  expect((await scheduler.upsertSchedules([def], { force: true })).changed).toBe(1);
  await module.close();
});

test('the kit refuses a wrong argument of a runtime schedule call with the error the engine gives (trial 23)', async () => {
  const { module } = await kit([]);
  expect(await badScheduleArgs(module.get(SchedulerService))).toEqual(BAD_SCHEDULE_ERRORS);
  await module.close();
});

test('the kit fills a field given as undefined with the module default, as the engine-backed service does (trial 22)', async () => {
  const { module } = await kit([], { queue: 'mail', maxRetry: 3, timeout: 5000 });
  const scheduler = module.get(SchedulerService) as unknown as { get(name: string): { stored: StoredSchedule } } & SchedulerService;
  const unset = { queue: undefined, maxRetry: undefined, timeout: undefined };
  await scheduler.addSchedule({ name: 'one', spec: '@every 1h', ...unset });
  await scheduler.upsertSchedules([{ name: 'up', spec: '@every 1h', ...unset }]);
  for (const name of ['one', 'up']) expect(scheduler.get(name).stored).toMatchObject({ queue: 'mail', maxRetry: 3, timeoutMs: 5000 });
  await module.close();
});

test('a replaced runtime schedule keeps its pause and its maxRuns count, as in the engine (trial 7: 6 triggers of a paused one, 5 runs of maxRuns 3)', async () => {
  const { testing, module } = await kit([], { now: '2026-03-02T00:00:00Z' });
  const scheduler = module.get(SchedulerService);
  await scheduler.addSchedule({ name: 'p', spec: '@every 1m' });
  await scheduler.pauseSchedule('p');
  await scheduler.addSchedule({ name: 'p', spec: '@every 2m' });
  await scheduler.upsertSchedules([{ name: 'm', spec: '@every 1m', maxRuns: 3 }]);
  await testing.fireDue('2026-03-02T00:00:00Z', '2026-03-02T00:01:30Z');
  expect(testing.enqueued('m')).toHaveLength(2);
  expect(await scheduler.upsertSchedules([{ name: 'm', spec: '@every 1m', maxRuns: 3, payload: { v: 2 } }])).toMatchObject({ changed: 1 });
  await testing.fireDue('2026-03-02T00:02:00Z', '2026-03-02T00:10:00Z');
  expect([testing.enqueued('p').length, testing.enqueued('m').length]).toEqual([0, 3]);
  await module.close();
});

test('fireDue counts maxRuns and shifts by jitter as the engine does (trial 5: 7 runs of maxRuns 2; runAt = triggerAt despite a jitter)', async () => {
  const { testing, module } = await kit([]);
  const scheduler = module.get(SchedulerService);
  await scheduler.addSchedule({ name: 'limited', spec: '@every 10s', maxRuns: 2 });
  await scheduler.addSchedule({ name: 'spread', spec: '@every 10s', jitter: 5000 });
  const from = Date.parse('2026-03-28T12:00:00Z');
  await testing.fireDue(from, from + 60_000);
  expect(testing.enqueued('limited').map((t) => t.triggerAt)).toEqual([from, from + 10_000]);
  const spread = testing.enqueued('spread');
  expect(spread).toHaveLength(7);
  expect(spread.map((t) => t.runAt - t.triggerAt!)).toEqual(spread.map((t) => jitterShiftMs('spread', t.triggerAt!, 5000)));
  expect(spread.some((t) => t.runAt > t.triggerAt!)).toBe(true);
  // a new maxRuns counts afresh, as fire.lua's counter does
  await scheduler.addSchedule({ name: 'limited', spec: '@every 10s', maxRuns: 1 });
  await testing.fireDue(from + 70_000, from + 90_000);
  expect(testing.enqueued('limited').map((t) => t.triggerAt)).toEqual([from, from + 10_000, from + 70_000]);
  // a definition without maxRuns drops the count: the same maxRuns given again counts afresh (trial 29)
  await scheduler.addSchedule({ name: 'limited', spec: '@every 10s' });
  await scheduler.addSchedule({ name: 'limited', spec: '@every 10s', maxRuns: 1 });
  await testing.fireDue(from + 100_000, from + 110_000);
  expect(testing.enqueued('limited').map((t) => t.triggerAt)).toEqual([from, from + 10_000, from + 70_000, from + 100_000]);
  await module.close();
});

test('fireDue follows the overlap policies: skip, buffer-one (one waits, started when the task ends), cancel-previous (queued ones out, running ones aborted)', async () => {
  const gate = deferred();
  const seen: Task[] = [];
  @Injectable()
  class Jobs {
    @Interval('1m', { name: 'skip', overlap: 'skip' })
    skip() {}
    @Interval('1m', { name: 'buffer', overlap: 'buffer-one' })
    buffer(task: Task) {
      seen.push(task);
    }
    @Interval('1m', { name: 'cancel', overlap: 'cancel-previous' })
    async cancel(task: Task) {
      seen.push(task);
      if (seen.filter((t) => t.schedule === 'cancel').length === 1) {
        await new Promise((_, reject) => task.signal.addEventListener('abort', () => reject(task.signal.reason as Error)));
      }
      await gate.promise;
    }
  }
  const { testing, module } = await kit([Jobs], { now: Date.parse('2026-01-01T00:00:00Z') });
  const at = (m: number) => Date.parse('2026-01-01T00:00:00Z') + m * 60_000;
  const ids = (schedule: string) => testing.enqueued(undefined, (t) => t.schedule === schedule).map((t) => t.triggerAt);
  await testing.fireDue(at(1), at(3));
  expect(ids('skip')).toEqual([at(1)]);
  expect(ids('buffer')).toEqual([at(1)]); // at(2) waits behind it, at(3) is skipped
  expect(ids('cancel')).toEqual([at(3)]); // each newer trigger took the queued one out
  // the buffered trigger is enqueued when the task ends, with its own id and instant
  await testing.perform(testing.enqueued(undefined, (t) => t.schedule === 'buffer')[0]);
  expect(testing.enqueued(undefined, (t) => t.schedule === 'buffer').map((t) => [t.id, t.triggerAt])).toEqual([
    [`buffer:${at(2) / 1000}`, at(2)],
  ]);
  await testing.perform(testing.enqueued(undefined, (t) => t.schedule === 'buffer')[0]);
  expect(seen.filter((t) => t.schedule === 'buffer').map((t) => t.triggerAt)).toEqual([at(1), at(2)]);
  // cancel-previous: a running task's signal is aborted by the next trigger; its outcome is superseded, not retried
  const running = testing.perform(testing.enqueued(undefined, (t) => t.schedule === 'cancel')[0]);
  await testing.fireDue(at(4), at(4));
  const o = await running;
  expect(o).toMatchObject({ outcome: 'superseded', supersededBy: `cancel:${at(4) / 1000}` });
  expect((o as { error: unknown }).error).toBeInstanceOf(TaskSupersededError);
  expect(ids('cancel')).toEqual([at(4)]);
  gate.resolve();
  await module.close();
});

test('inline: an enqueue runs its handler before it resolves; a failure is an outcome unless rethrow', async () => {
  const order: string[] = [];
  @Injectable()
  class H {
    @TaskHandler('ok')
    ok() {
      order.push('handler');
    }
    @TaskHandler('boom', { backoff: () => 10 })
    boom() {
      throw new Error('boom');
    }
  }
  const { testing, client, module } = await kit([H], { mode: 'inline' });
  await client.enqueue('ok');
  order.push('after enqueue');
  expect(order).toEqual(['handler', 'after enqueue']);
  await client.enqueue('boom');
  expect(testing.outcomes.map((o) => o.outcome)).toEqual(['succeeded', 'retry']);
  await module.close();
  const strict = await kit([H], { mode: 'inline', rethrow: true });
  await expect(strict.client.enqueue('boom')).rejects.toThrow('boom');
  await strict.module.close();
  // trial 8: a string was taken (and meant true)
  expect(() => ChronosTestingModule.forRoot({ rethrow: 'yes' as never })).toThrow(/rethrow: expected true or false, got "yes"/);
});

test('inline: a handler that enqueues its own type each time makes the outer enqueue throw (without rethrow too)', async () => {
  @Injectable()
  class Loop {
    constructor(private readonly chronos: ChronosClient) {}
    @TaskHandler('loop')
    async loop() {
      await this.chronos.enqueue('loop');
    }
  }
  const { client, module } = await kit([Loop], { mode: 'inline' });
  // before: the 101st enqueue threw inside the 100th handler, a failed attempt (an outcome), and the outer enqueue resolved
  await expect(client.enqueue('loop')).rejects.toThrow(/inline: enqueues nested 100 deep \(last: loop\)/);
  await module.close();
});

test('a handler or schedule that fails to boot under ChronosModule fails the same way under the kit', async () => {
  @Injectable()
  class Bad {
    @Cron('61 * * * *')
    tick() {}
    @TaskHandler('x', { retries: 3 } as never)
    x() {}
  }
  const boot = async (imports: ModuleMetadata['imports']) => {
    const m = await Test.createTestingModule({ imports, providers: [Bad] }).compile();
    m.useLogger(false);
    const err = await m.init().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    await m.close().catch(() => undefined);
    return err;
  };
  const redis = new Redis(redisUrl(), { lazyConnect: true }); // discovery fails before anything connects
  const real = await boot([ChronosModule.forRoot({ connection: redis })]);
  redis.disconnect();
  const kitErr = await boot([ChronosTestingModule.forRoot()]);
  expect(real?.name).toBe('ChronosDiscoveryError');
  expect(kitErr?.constructor).toBe(real?.constructor);
  expect(kitErr?.message).toBe(real?.message);
});
