// The leader's fire path, observed: each fire is a PRODUCER span whose traceparent the trigger task
// carries (the handler's CONSUMER span is its child), the schedule's history records the fires with
// their outcome, and the metrics' trigger outcomes come from the scheduler's own events (a
// duplicate: a trigger some other leader had already fired). Real Scheduler, worker and Redis.
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ChronosServer, EventBus, Inspector, QueueKeys, Scheduler, triggerKey, type ChronosEvent } from '../../lib/core/internal.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

const exporter = new InMemorySpanExporter();
beforeAll(() => trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })));
afterAll(() => trace.disable());

test('a fire is a span the task joins; the history records it; a trigger fired before counts as a duplicate', async () => {
  const ns = newNamespace('fire-obs');
  const events = new EventBus();
  const seen: ChronosEvent[] = [];
  events.subscribe((e) => void seen.push(e));
  const logger = recordingLogger();
  const scheduler = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, heartbeatInterval: 200, logger, events });
  const server = new ChronosServer({ connection: redisUrl(), namespace: ns, logger, events });
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns });
  const ran: string[] = [];
  server.handle('tick', (t) => void ran.push(t.id));
  scheduler.register({ name: 'obs', spec: '@every 1s', type: 'tick', catchUp: 'none' });
  try {
    // a trigger already fired (its dedup key exists) before this leader gets to it
    const now = Date.now();
    const taken = Math.ceil((now + 3000) / 1000) * 1000;
    const keys = new QueueKeys(ns, 'default');
    await server.redis.set(keys.dedup(triggerKey('obs', taken)), '1', 'PX', 60_000);
    await server.start();
    await scheduler.start();
    await waitFor(() => ran.length >= 2 && seen.some((e) => e.type === 'schedule.skipped' && e.reason === 'duplicate'), {
      what: 'two fires run and the pre-fired trigger reported as a duplicate',
      timeoutMs: 15_000,
    });
    const dup = seen.find((e) => e.type === 'schedule.skipped' && e.reason === 'duplicate');
    expect(dup).toMatchObject({ schedule: 'obs', triggerAt: taken, count: 1 });
    const spans = exporter.getFinishedSpans();
    const fires = spans.filter((s) => s.name === 'fire obs');
    expect(fires.length).toBeGreaterThanOrEqual(2);
    const ranId = ran[0];
    const fireOf = fires.find((s) => s.attributes['messaging.message.id'] === ranId);
    expect(fireOf?.attributes).toMatchObject({ 'chronos.schedule': 'obs', 'chronos.fire.outcome': 'enqueued' });
    const consumer = await waitFor(
      () => exporter.getFinishedSpans().find((s) => s.attributes['messaging.message.id'] === ranId && s.name !== 'fire obs'),
      'the consumer span of the first fired task',
    );
    expect(consumer.spanContext().traceId).toBe(fireOf!.spanContext().traceId);
    const history = await waitFor(async () => {
      const h = await inspector.scheduleHistory('obs', 50);
      return h.some((r) => r.outcome === 'duplicate') && h.some((r) => r.outcome === 'enqueued') ? h : undefined;
    }, 'the fire history to hold an enqueued and a duplicate fire');
    expect(history.find((r) => r.outcome === 'duplicate')).toMatchObject({ triggerAt: taken, by: scheduler.instanceId });
    expect(history.find((r) => r.taskId === ranId)).toMatchObject({ outcome: 'enqueued' });
  } finally {
    await scheduler.stop();
    await server.shutdown();
    await inspector.close();
    await deleteNamespace(ns);
  }
});

test('issue 24: triggers skipped while a schedule was paused are recorded as skipped-paused (docs/operating.md), not skipped-catch-up', async () => {
  const ns = newNamespace('fire-obs-pause');
  const events = new EventBus();
  const seen: ChronosEvent[] = [];
  events.subscribe((e) => void seen.push(e));
  const logger = recordingLogger();
  const scheduler = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, heartbeatInterval: 200, logger, events });
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns });
  scheduler.register({ name: 'paused-obs', spec: '@every 1s', type: 'tick', catchUp: 'all' });
  try {
    await scheduler.start();
    await waitFor(async () => (await inspector.scheduleHistory('paused-obs', 5)).some((r) => r.outcome === 'enqueued'), 'a first fire');
    await inspector.pauseSchedule('paused-obs', { note: 'test' });
    const pausedAt = (await inspector.schedule('paused-obs')).pause!.at;
    // two triggers come due while it is paused (the wait is for time itself: nothing fires meanwhile)
    await waitFor(() => Date.now() > pausedAt + 2500, { what: 'two triggers to pass', timeoutMs: 15_000 });
    await inspector.resumeSchedule('paused-obs');
    const skip = await waitFor(
      () => seen.find((e) => e.type === 'schedule.skipped' && e.reason === 'pause'),
      'the pause skip to be reported',
    );
    const history = await waitFor(async () => {
      const h = await inspector.scheduleHistory('paused-obs', 50);
      return h.find((r) => r.triggerAt === (skip as { triggerAt: number }).triggerAt && r.outcome !== 'enqueued');
    }, 'the skipped trigger in the history');
    expect(history.outcome).toBe('skipped-paused');
    expect((await inspector.scheduleHistory('paused-obs', 50)).map((r) => r.outcome)).not.toContain('skipped-catch-up');
  } finally {
    await scheduler.stop();
    await inspector.close();
    await deleteNamespace(ns);
  }
});
