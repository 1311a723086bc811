// Prometheus metrics: a real /metrics endpoint of a sample-like app (prom-client's default registry,
// served as @willsoto/nestjs-prometheus's controller serves it; and an app's own registry), scraped and
// parsed, checked against the work done; the Redis cost of a scrape from INFO commandstats.
// (@willsoto/nestjs-prometheus itself is CommonJS requiring ESM-only Nest 12, which jest cannot load
// on Node 20: the sample, a real process, serves /metrics through it — test/nest/sample-smoke.spec.ts.)
import { Controller, Get, Inject, Injectable, Res } from '@nestjs/common';
import { Redis } from 'ioredis';
import { register, Registry } from 'prom-client';
import { QueueClient, Scheduler } from '../../lib/core/index.js';
import { ChronosClient, ChronosMetrics, InspectorService, Interval, TaskHandler, type Task } from '../../lib/index.js';
import { resolveOptions } from '../../lib/nest/options/resolve-options.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { matching, scrape, sumOf } from '../helpers/prometheus.js';
import { newNamespace } from '../helpers/redis.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';

let app: ChronosTestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

@Injectable()
class Work {
  @TaskHandler('work.do')
  async do(task: Task<{ failOnce?: boolean }>) {
    if (task.payload.failOnce && task.retried === 0) throw new Error('first attempt fails');
  }
  @Interval('1s')
  beat() {}
}

/** The documented way without @willsoto/nestjs-prometheus: the app's registry on its own route. */
const APP_REGISTRY = Symbol('app-registry');
@Controller('metrics')
class MetricsController {
  constructor(@Inject(APP_REGISTRY) private readonly registry: Registry) {}
  @Get()
  async metrics(@Res({ passthrough: true }) res: { setHeader(k: string, v: string): void }) {
    res.setHeader('Content-Type', this.registry.contentType);
    return this.registry.metrics();
  }
}

test('GET /metrics (prom-client default registry): 50 tasks, 3 failing once → succeeded 50, retried 3', async () => {
  app = await createChronosTestApp({
    providers: [Work, { provide: APP_REGISTRY, useValue: register }],
    controllers: [MetricsController],
    options: { instanceId: 'metrics-1', metrics: true, backoff: () => 20 },
    http: true,
  });
  const client = app.get(ChronosClient);
  const inspector = app.get(InspectorService);
  let succeeded = 0;
  const sub = inspector.events$.subscribe((e) => e.type === 'task.succeeded' && e.taskType === 'work.do' && succeeded++);
  await client.enqueueBulk(Array.from({ length: 50 }, (_, i) => ({ type: 'work.do', payload: { failOnce: i % 17 === 0 } })));
  await waitFor(() => succeeded === 50, '50 tasks to succeed', 20_000);
  sub.unsubscribe();
  await waitFor(async () => (await inspector.schedules()).some((s) => s.lastFiredAt !== undefined), 'a fire of Work.beat');

  const s = await scrape(`${app.url}/metrics`);
  const processed = (outcome: string) => sumOf(s, 'chronos_tasks_processed_total', { queue: 'default', type: 'work.do', outcome });
  expect([processed('succeeded'), processed('retried'), processed('failed'), processed('dead')]).toEqual([50, 3, 3, 0]);
  // declared outcomes are exported from 0
  expect(
    matching(s, 'chronos_tasks_processed_total', { type: 'work.do' })
      .map((x) => x.labels.outcome)
      .sort(),
  ).toEqual(['cancelled', 'dead', 'failed', 'lost', 'retried', 'succeeded', 'superseded']);
  expect(sumOf(s, 'chronos_task_duration_seconds_count', { queue: 'default', type: 'work.do' })).toBe(53);
  expect(sumOf(s, 'chronos_task_wait_seconds_count', { queue: 'default' })).toBeGreaterThanOrEqual(53);
  expect(sumOf(s, 'chronos_triggers_total', { schedule: 'Work.beat', outcome: 'enqueued' })).toBeGreaterThanOrEqual(1);
  expect(sumOf(s, 'chronos_leader', { instance: 'metrics-1' })).toBe(1);
  expect(sumOf(s, 'chronos_leader_changes_total')).toBe(1);
  // fleet gauges: the queue drained, the schedule fired and has a next trigger
  expect(sumOf(s, 'chronos_queue_tasks', { queue: 'default', state: 'dead' })).toBe(0);
  expect(sumOf(s, 'chronos_queue_tasks', { queue: 'default', state: 'retry' })).toBe(0);
  expect(sumOf(s, 'chronos_queue_paused', { queue: 'default' })).toBe(0);
  const last = sumOf(s, 'chronos_schedule_last_fired_timestamp_seconds', { schedule: 'Work.beat' });
  const next = sumOf(s, 'chronos_schedule_next_timestamp_seconds', { schedule: 'Work.beat' });
  expect({ whole: Number.isInteger(last), period: next - last }).toEqual({ whole: true, period: 1 }); // the next due is one period on
  expect(sumOf(s, 'chronos_schedules_orphaned')).toBe(0);
  // never a task id as a label
  expect(s.every((x) => !Object.keys(x.labels).some((k) => /id$/i.test(k)))).toBe(true);

  await app.close();
  expect(register.getSingleMetric('chronos_tasks_processed_total')).toBeUndefined(); // removed at shutdown
});

/** Redis calls since the last reading (script-inner calls included), without the INFO readings themselves. */
async function commandCounter(redis: Redis): Promise<() => Promise<Record<string, number>>> {
  const read = async () => {
    const calls: Record<string, number> = {};
    for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[m[1]] = Number(m[2]);
    return calls;
  };
  let before = await read();
  return async () => {
    const now = await read();
    const delta: Record<string, number> = {};
    for (const [k, v] of Object.entries(now)) if (k !== 'info' && v - (before[k] ?? 0) > 0) delta[k] = v - (before[k] ?? 0);
    before = await read();
    return delta;
  };
}

const total = (d: Record<string, number>) => Object.values(d).reduce((a, b) => a + b, 0);

test('a scrape costs Redis a fixed number of commands whatever the queue sizes, and none within the fleet cache window', async () => {
  const redis = await PrivateRedis.start();
  const admin = new Redis(redis.url);
  const namespace = newNamespace('scrape'); // unique even here: the helper deletes it on the shared Redis too
  const seed = new QueueClient({ connection: redis.url, namespace });
  const scheduler = new Scheduler({ connection: redis.url, namespace });
  try {
    await seed.enqueueBulk(Array.from({ length: 10 }, () => ({ type: 'x', options: { queue: 'a' } })));
    await seed.enqueueBulk(Array.from({ length: 10 }, (_, i) => ({ type: 'x', options: { queue: 'b', delay: i % 2 ? 60_000 : 0 } })));
    await scheduler.addSchedule({ name: 'hourly', spec: '0 * * * *', type: 'x', queue: 'a' });
    await scheduler.addSchedule({ name: 'daily', spec: '0 3 * * *', type: 'x', queue: 'a' });
    // a replica that only serves metrics (no worker or scheduler loops talking to Redis meanwhile)
    const registry = new Registry();
    app = await createChronosTestApp({
      controllers: [MetricsController],
      providers: [{ provide: APP_REGISTRY, useValue: registry }],
      options: { connection: redis.url, namespace, worker: false, scheduler: false, metrics: { registry, fleetCacheMs: 3000 } },
      http: true,
    });
    expect(app.get(ChronosMetrics)).toBeInstanceOf(ChronosMetrics);
    const url = `${app.url}/metrics`;
    const counted = await commandCounter(admin);
    const first = await scrape(url);
    const small = await counted();
    expect(sumOf(first, 'chronos_queue_tasks', { queue: 'a', state: 'pending' })).toBe(10);
    expect(sumOf(first, 'chronos_queue_tasks', { queue: 'b', state: 'scheduled' })).toBe(5);
    expect(sumOf(first, 'chronos_queue_latency_seconds', { queue: 'a' })).toBeGreaterThanOrEqual(0);
    // within the cache window: no Redis command at all
    await scrape(url);
    expect(total(await counted())).toBe(0);

    await seed.enqueueBulk(Array.from({ length: 5000 }, (_, i) => ({ type: 'x', options: { queue: 'b', delay: i % 2 ? 60_000 : 0 } })));
    await new Promise((r) => setTimeout(r, 3100)); // past the cache window (nothing else to await: the cache is time-based); 3 s so a slow first scrape on a loaded machine is still inside it
    await counted();
    const second = await scrape(url);
    const big = await counted();
    expect(sumOf(second, 'chronos_queue_tasks', { queue: 'b', state: 'pending' })).toBe(2505);
    // 2 queues, 0 live scheduler instances, schedules on 1 queue, the shard leases: 2 + 22 × 2 + 19 + 0 + 1 + 2 = 68
    // (22 per queue: the 18 counts and the 4 reads of its limits and groups; neither queue is limited or grouped;
    // 19: the 16 shards' registries, the pause notes, the instances and TIME)
    expect(total(small)).toBe(68);
    expect(big).toEqual(small);
    expect(small).toEqual({
      smembers: 2,
      xlen: 2,
      xpending: 2,
      zcard: 10,
      zrevrange: 2,
      mget: 6,
      'memory|usage': 12,
      'xinfo|groups': 2,
      time: 4, // … and the shard leases' pipeline
      xrange: 2,
      hscan: 17, // the 16 shards' registries and the pause notes (one call each while under 1,000 fields)
      hmget: 1, // lastFired of the queue schedules target
      zrange: 1,
      get: 2, // the counts of each queue (7 days)
      hgetall: 3, // the shard leases (silent schedules: overdue with or without a leader of its shard; pipelined, no MULTI); the limits of each queue
    });
  } finally {
    await app?.close();
    app = undefined;
    await seed.close();
    await scheduler.stop();
    admin.disconnect();
    await redis.kill();
  }
});

test('the metrics option is validated with the other options', () => {
  expect(resolveOptions({}).metrics).toEqual({ enabled: false, fleet: true, fleetCacheMs: 1000, fleetTimeoutMs: 5000 });
  const registry = new Registry();
  const custom = resolveOptions({ metrics: { registry, fleet: false, fleetCacheMs: 0, fleetTimeoutMs: 800 } }).metrics;
  expect(custom).toEqual({ enabled: true, registry, fleet: false, fleetCacheMs: 0, fleetTimeoutMs: 800 });
  let err: unknown;
  try {
    resolveOptions({ metrics: { registry: {} as never, fleet: 'no' as never, fleetCacheMs: -1, fleetTimeoutMs: 0, port: 9100 } as never });
  } catch (e) {
    err = e;
  }
  expect((err as { issues: string[] }).issues).toEqual([
    'metrics: unknown option "port"',
    'metrics.registry: expected a prom-client Registry (with registerMetric and removeSingleMetric)',
    'metrics.fleet: expected true or false, got "no"',
    'metrics.fleetCacheMs: expected an integer >= 0 (ms), got -1',
    "metrics.fleetTimeoutMs: expected an integer from 1 to 2147483647 (ms; Node's longest timer, about 24.8 days), got 0",
  ]);
  expect(() => resolveOptions({ metrics: 'yes' as never })).toThrow(
    /metrics: expected true, false or \{ registry\?, fleet\?, fleetCacheMs\?, fleetTimeoutMs\? \}/,
  );
});
