// Discovery of @Cron, @Interval (both forms) and @TaskHandler on providers and controllers, typed
// payload classes, the boot errors (every problem, each naming Class#method), warnings, `disabled`
// and the scheduler/worker roles — on real Redis, one Nest app per test.
import { Controller, Injectable, Module, Scope } from '@nestjs/common';
import {
  ChronosClient,
  ChronosConfigError,
  ChronosDiscoveryError,
  ChronosModule,
  Cron,
  CronExpression,
  DuplicateScheduleError,
  InspectorService,
  Interval,
  InvalidOptionsError,
  InvalidScheduleError,
  SchedulerService,
  TaskHandler,
  WorkerService,
  type CronOptions,
  type Task,
} from '../../lib/index.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { newNamespace } from '../helpers/redis.js';
import { deferred, waitFor } from '../helpers/wait.js';

let apps: ChronosTestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.map((a) => a.close()));
  apps = [];
});
async function boot(...args: Parameters<typeof createChronosTestApp>): Promise<ChronosTestApp> {
  const app = await createChronosTestApp(...args);
  apps.push(app);
  return app;
}

test('@Cron, @Interval (both forms) and @TaskHandler are discovered on providers and controllers', async () => {
  const ticked = deferred<Task>();
  const pinged = deferred<Task>();
  @Injectable()
  class Jobs {
    @Cron('0 3 * * *', { timeZone: 'Europe/Budapest' })
    nightly() {}

    @Cron(CronExpression.EVERY_5_MINUTES, {
      name: 'reports.rollup',
      waitForCompletion: true,
      queue: 'reports',
      maxRetry: 2,
      timeout: 60_000,
    })
    rollup() {}

    @Interval('1s')
    tick(task: Task) {
      ticked.resolve(task);
    }

    @Interval('legacy', 60_000) // the @nestjs/schedule form
    legacy() {}
  }
  @Controller()
  class PingController {
    @TaskHandler('ping')
    ping(task: Task<{ n: number }>) {
      pinged.resolve(task);
    }
  }
  const app = await boot({ providers: [Jobs], controllers: [PingController] });

  const declared = app.get(SchedulerService).declaredSchedules;
  expect(declared.map((s) => [s.name, s.expression, s.timeZone, s.type, s.queue, s.overlap])).toEqual([
    ['Jobs.nightly', '0 3 * * *', 'Europe/Budapest', 'Jobs.nightly', 'default', 'allow'],
    ['reports.rollup', '*/5 * * * *', 'UTC', 'reports.rollup', 'reports', 'skip'],
    ['Jobs.tick', '@every 1s', 'UTC', 'Jobs.tick', 'default', 'allow'],
    ['legacy', '@every 60s', 'UTC', 'legacy', 'default', 'allow'],
  ]);
  expect(declared.find((s) => s.name === 'reports.rollup')).toMatchObject({ maxRetry: 2, timeoutMs: 60_000 });
  expect(app.get(WorkerService).handledTypes.sort()).toEqual(['Jobs.nightly', 'Jobs.tick', 'legacy', 'ping', 'reports.rollup']);
  // a queue named by a decorator is served without configuring `queues`
  expect(app.get(WorkerService).queues).toEqual({ default: 1, reports: 1 });

  // the Inspector sees them in Redis, with next triggers in their zone (03:00 Budapest = 01:00 or 02:00 UTC)
  const schedules = await app.get(InspectorService).schedules(2);
  const nightly = schedules.find((s) => s.name === 'Jobs.nightly')!;
  expect(nightly.timeZone).toBe('Europe/Budapest');
  for (const t of nightly.next) {
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Budapest', hour: '2-digit', minute: '2-digit' }).format(t)).toBe('03:00');
  }

  // the interval fires, epoch-aligned, and the method receives the task
  const t = await ticked.promise;
  expect(t.schedule).toBe('Jobs.tick');
  expect(t.triggerAt! % 1000).toBe(0);
  expect(t.id).toBe(`Jobs.tick:${t.triggerAt! / 1000}`);

  // the controller's handler runs tasks enqueued by code
  const { id } = await app.get(ChronosClient).enqueue('ping', { n: 1 });
  const p = await pinged.promise;
  expect([p.id, p.type, p.payload, p.retried]).toEqual([id, 'ping', { n: 1 }, 0]);
});

test('payload classes: the type comes from the class, the handler gets an instance, enqueue is typed', async () => {
  class SendEmail {
    static readonly type = 'email.send';
    constructor(
      readonly to: string,
      readonly subject: string,
    ) {}
    get domain(): string {
      return this.to.split('@')[1];
    }
  }
  class Ping {
    constructor(readonly n: number) {}
  }
  class ChargeCard {
    static readonly type = 'billing.charge';
    static readonly queue = 'billing';
    constructor(readonly cents: number) {}
  }
  const emails: Task<SendEmail>[] = [];
  const pings: Task<Ping>[] = [];
  const charged = deferred<Task<ChargeCard>>();
  @Injectable()
  class Handlers {
    @TaskHandler(SendEmail)
    send(task: Task<SendEmail>) {
      emails.push(task);
    }
    @TaskHandler(Ping)
    ping(task: Task<Ping>) {
      pings.push(task);
    }
    @TaskHandler(ChargeCard)
    charge(task: Task<ChargeCard>) {
      charged.resolve(task);
    }
  }
  const app = await boot({ providers: [Handlers] });
  const client = app.get(ChronosClient);
  expect(app.get(WorkerService).handledTypes.sort()).toEqual(['Ping', 'billing.charge', 'email.send']);

  const a = await client.enqueue(new SendEmail('ada@example.com', 'Hello'));
  const b = await client.enqueue(SendEmail, { to: 'bob@example.org', subject: 'Hi' } as SendEmail);
  const c = await client.enqueue(new Ping(3));
  const d = await client.enqueue(new ChargeCard(1299)); // static queue
  expect(d.queue).toBe('billing');
  await waitFor(() => emails.length === 2 && pings.length === 1, 'the payload-class tasks');
  const byId = new Map(emails.map((t) => [t.id, t]));
  expect(byId.get(a.id)!.payload).toBeInstanceOf(SendEmail);
  expect(byId.get(a.id)!.payload.domain).toBe('example.com');
  expect(byId.get(a.id)!.type).toBe('email.send');
  expect(byId.get(b.id)!.payload.domain).toBe('example.org');
  expect(pings[0].id).toBe(c.id);
  expect(pings[0].payload).toBeInstanceOf(Ping);
  expect(pings[0].payload.n).toBe(3);
  const charge = await charged.promise;
  expect([charge.queue, charge.payload.cents]).toEqual(['billing', 1299]);

  // a plain object has no type: refused before anything is written
  await expect(client.enqueue({ to: 'x' })).rejects.toThrow(InvalidOptionsError);
  await expect(client.enqueue({ to: 'x' })).rejects.toThrow(/plain object \(pass the type first/);
});

test('boot fails with one ChronosDiscoveryError listing every problem, each naming Class#method', async () => {
  @Injectable()
  class First {
    @Cron('0 * * * *', { name: 'dup' })
    one() {}
  }
  @Injectable()
  class Second {
    @Interval('1m', { name: 'dup' })
    two() {}
  }
  @Injectable()
  class Broken {
    @Cron('61 * * * *')
    badMinute() {}
    @Cron('0 3 * * *', { timeZone: 'Nowhere/City' })
    badZone() {}
    @Interval(500)
    tooFast() {}
    @Cron('* * * * *', { utcOffset: 2 } as CronOptions)
    offset() {}
    // a bad spec and a bad option: both reported (the option's problem hid the spec's)
    @Cron('*/61 * * * *', { utcOffset: 2 } as CronOptions)
    both() {}
    @Cron('0 1 * * *')
    @Interval('1h')
    twice() {}
    @TaskHandler('')
    noType() {}
    @Cron('0 * * * *', { overlap: 'buffer' as never })
    badOverlap() {}
    @Cron('0 * * * *', { overlap: 'buffer-one', waitForCompletion: true })
    contradicts() {}
    // BullMQ's repeat options: in the options, and as the first argument
    @Interval('1m', { limit: 5 } as CronOptions)
    limited() {}
    @Interval({ every: 60_000, limit: 5 } as never)
    repeatObject() {}
    @Cron({ pattern: '0 3 * * *' } as never)
    pattern() {}
    // BullMQ's `repeat: { every }` as the period (trial: '"[object Object]": every must be a number of ms or a duration string, got object')
    @Interval({ every: '10s' } as never)
    objectEvery() {}
    // @nestjs/bullmq's processor and job options on a handler (trial: "not supported", and nothing more)
    @TaskHandler('bull.job', { concurrency: 5, attempts: 3, limiter: { max: 1, duration: 1000 }, color: 'red' } as never)
    bullOptions() {}
  }
  @Injectable({ scope: Scope.REQUEST })
  class PerRequest {
    @TaskHandler('per.request')
    handle() {}
  }
  const err = (await boot({ providers: [First, Second, Broken, PerRequest] }).catch((e: unknown) => e)) as ChronosDiscoveryError;
  expect(err).toBeInstanceOf(ChronosDiscoveryError);
  const by = (source: string) => err.issues.filter((i) => i.source === source).map((i) => i.message);
  expect(by('Broken#badMinute')).toEqual([
    expect.stringMatching(/^Broken#badMinute: Invalid schedule "Broken.badMinute": "61 \* \* \* \*": .*minute/),
  ]);
  expect(by('Broken#badZone')).toEqual([expect.stringMatching(/^Broken#badZone: .*Nowhere\/City/)]);
  expect(by('Broken#tooFast')).toEqual([expect.stringMatching(/^Broken#tooFast: Invalid schedule "Broken.tooFast"/)]);
  expect(by('Broken#offset')).toEqual([
    'Broken#offset: @Cron option "utcOffset" is not supported: use `timeZone` (an IANA zone): a fixed offset cannot follow DST',
  ]);
  expect(by('Broken#both')).toEqual([
    'Broken#both: @Cron option "utcOffset" is not supported: use `timeZone` (an IANA zone): a fixed offset cannot follow DST',
    expect.stringMatching(/^Broken#both: Invalid schedule "Broken.both": "\*\/61 \* \* \* \*": minute field "\*\/61": step 61 is larger/),
  ]);
  expect(by('Broken#limited')).toEqual(['Broken#limited: @Interval option "limit" is not supported: use `maxRuns`']);
  expect(by('Broken#repeatObject')).toEqual([
    expect.stringMatching(
      /^Broken#repeatObject: Invalid schedule "Broken.repeatObject": "limit": spec: unknown key "limit" \(use `maxRuns`\)/,
    ),
  ]);
  expect(by('Broken#bullOptions')).toEqual([
    'Broken#bullOptions: @TaskHandler option "concurrency" is not supported: handlers at once per replica are the module\'s `concurrency`; a queue\'s fleet-wide limit is `queues: { q: { concurrency } }`',
    'Broken#bullOptions: @TaskHandler option "attempts" is not supported: retries are the enqueue option `maxRetry` (= attempts - 1) or the module\'s `maxRetry`',
    'Broken#bullOptions: @TaskHandler option "limiter" is not supported: a queue\'s rate limit is `queues: { q: { rate: { max, duration } } }` (fleet-wide)',
    'Broken#bullOptions: @TaskHandler option "color" is not supported',
  ]);
  expect(by('Broken#objectEvery')).toEqual([
    `Broken#objectEvery: @Interval expects the period (ms, or a duration such as '10s'), got {"every":"10s"}: give the period itself, @Interval("10s")`,
  ]);
  expect(by('Broken#pattern')).toEqual([expect.stringMatching(/"pattern": spec: unknown key "pattern" \(use the cron expression itself/)]);
  expect(by('Broken#badOverlap')).toEqual([
    `Broken#badOverlap: Invalid schedule "Broken.badOverlap": "buffer": overlap: expected 'allow', 'skip', 'buffer-one' or 'cancel-previous'`,
  ]);
  expect(by('Broken#contradicts')).toEqual([expect.stringMatching(/waitForCompletion: true contradicts overlap: 'buffer-one'/)]);
  expect(by('Broken#twice')).toEqual(['Broken#twice: a method can carry one @Cron or @Interval, found several']);
  expect(by('Broken#noType')).toEqual([expect.stringMatching(/^Broken#noType: @TaskHandler type must be a non-empty string/)]);
  expect(by('PerRequest#handle')).toEqual([
    expect.stringMatching(/^PerRequest#handle: @TaskHandler on a request-scoped or transient provider/),
  ]);
  const dup = err.issues.find((i) => i.message.includes('"dup"'))!;
  expect(dup.message).toBe(
    'schedule name "dup" is used by First#one and Second#two; schedule names must be unique (set `name` on one of them)',
  );
  expect(dup.cause).toBeInstanceOf(DuplicateScheduleError);
  expect(err.issues.find((i) => i.source === 'Broken#badMinute')!.cause).toBeInstanceOf(InvalidScheduleError);
  expect(err.issues).toHaveLength(20);
  expect(err.message).toMatch(/^Chronos found 20 problems in decorated methods:\n {2}- /);
});

test('ChronosModule imported twice (a second forRoot in a feature module): boot fails with a ChronosConfigError naming both namespaces', async () => {
  // before, both imports booted: two workers and two schedulers, each over every decorated method,
  // so every schedule fired once per import (in each namespace) and every handler ran per import
  @Injectable()
  class Ticker {
    @Interval('1s')
    tick() {}
  }
  const first = newNamespace('twice-a');
  const second = newNamespace('twice-b');
  const err = await boot({
    options: { namespace: first },
    providers: [Ticker],
    imports: [ChronosModule.forRoot({ namespace: second })],
  }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ChronosConfigError);
  expect((err as ChronosConfigError).issues).toEqual([
    expect.stringMatching(new RegExp(`^ChronosModule is imported 2 times in this app \\(namespaces "${first}", "${second}"\\): import`)),
  ]);
});

test('one class in the providers of two modules: boot fails naming the class and both modules', async () => {
  // before: 'schedule name "Nightly.run" is used by Nightly#run and Nightly#run; … (set `name` on one
  // of them)' — advice that cannot help, since both are the same method of two instances
  @Injectable()
  class Nightly {
    @Cron('0 3 * * *')
    run() {}
    @TaskHandler('nightly.extra')
    extra() {}
  }
  @Module({ providers: [Nightly] })
  class ReportsFeature {}
  @Module({ providers: [Nightly] })
  class BillingFeature {}
  const err = (await boot({ imports: [ReportsFeature, BillingFeature] }).catch((e: unknown) => e)) as ChronosDiscoveryError;
  expect(err).toBeInstanceOf(ChronosDiscoveryError);
  expect(err.issues.map((i) => [i.source, i.message])).toEqual([
    [
      'Nightly',
      'Nightly is in the providers of 2 modules (ReportsFeature, BillingFeature), so the app has 2 instances of it and Chronos would run its @Cron, @Interval and @TaskHandler methods once per instance: provide it in one module and export it from there to the others',
    ],
  ]);
});

test('a dispatch target without a handler is a warning; a disabled schedule is not declared but still handled', async () => {
  const ran = deferred<Task>();
  @Injectable()
  class Jobs {
    @Cron('0 * * * *', { dispatch: 'nobody.listens' })
    announce() {}

    @Interval('1s', { disabled: true })
    paused(task: Task) {
      ran.resolve(task);
    }
  }
  const app = await boot({ providers: [Jobs] });
  expect(app.logger.messages('warn')).toContain(
    'Jobs#announce: the schedule dispatches task type "nobody.listens" but no @TaskHandler in this app handles it (fine when another service does)',
  );
  expect(app.get(SchedulerService).declaredSchedules.map((s) => s.name)).toEqual(['Jobs.announce']);
  expect((await app.get(InspectorService).schedules()).map((s) => [s.name, s.type])).toEqual([['Jobs.announce', 'nobody.listens']]);
  // the disabled schedule's method still handles its type (e.g. tasks another instance enqueued)
  await app.get(ChronosClient).enqueue('Jobs.paused', null);
  expect((await ran.promise).type).toBe('Jobs.paused');
});

test('roles: a scheduler-only and a worker-only instance share the work', async () => {
  const namespace = newNamespace('roles');
  const ran: { by: string; task: Task }[] = [];
  @Injectable()
  class Beat {
    constructor(private readonly worker: WorkerService) {}
    @Interval('1s')
    beat(task: Task) {
      ran.push({ by: this.worker.serverId!, task });
    }
  }
  const schedulerOnly = await boot({ providers: [Beat], options: { namespace, instanceId: 'scheduler-only', worker: false } });
  const workerOnly = await boot({ providers: [Beat], options: { namespace, instanceId: 'worker-only', scheduler: false } });
  expect(schedulerOnly.get(WorkerService).isRunning).toBe(false);
  expect(workerOnly.get(SchedulerService).isRunning).toBe(false);
  expect(workerOnly.logger.messages()).toContain('Scheduler role disabled on this instance (schedules=1 are not declared here)');
  await waitFor(() => schedulerOnly.get(SchedulerService).isLeader, 'the scheduler-only instance to lead');
  await waitFor(() => ran.length >= 2, 'two beats');
  expect(new Set(ran.map((r) => r.by))).toEqual(new Set(['worker-only']));
  const schedules = await workerOnly.get(InspectorService).schedules();
  expect(schedules.map((s) => [s.name, s.declaredBy.map((d) => d.instance)])).toEqual([['Beat.beat', ['scheduler-only']]]);
  // enqueue-only (worker: false): the task waits in Redis for a worker
  await schedulerOnly.get(ChronosClient).enqueue('Beat.beat', null, { queue: 'elsewhere' });
  expect((await schedulerOnly.get(InspectorService).queue('elsewhere')).pending).toBe(1);
});

// Compile-time checks (tsc type-checks test/ in `npm run build`): handlers and enqueues are typed by the payload class.
class Typed {
  static readonly type = 'typed';
  constructor(readonly to: string) {}
}
class Other {
  constructor(readonly n: number) {}
}
export class TypingChecks {
  @TaskHandler(Typed)
  ok(task: Task<Typed>) {
    return task.payload.to;
  }
  // @ts-expect-error the method takes a Task<Other>, the decorator delivers Task<Typed>
  @TaskHandler(Typed)
  wrong(task: Task<Other>) {
    return task.payload.n;
  }
  async enqueue(client: ChronosClient) {
    await client.enqueue(new Typed('a@b.c'));
    await client.enqueue(Typed, { to: 'a@b.c' });
    // @ts-expect-error the payload does not have the class's shape
    await client.enqueue(Typed, { n: 1 });
  }
}
