// OpenTelemetry: an enqueue's PRODUCER span in this process and the task's CONSUMER spans in a worker
// process share one trace (child + link, through the traceparent in the task's meta); a retry is a new
// span on the same link, with the error recorded and the status set; a fire span's task joins the
// fire's trace; tracing turns off per enqueue and process-wide. Spans: the SDK's in-memory exporter.
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Redis } from 'ioredis';
import { QueueClient, configureTracing, Inspector, QueueKeys, startFireSpan } from '../../lib/core/internal.js';
import { decodeStored } from '../../lib/core/queue/codec.js';
import { killAllChildren, startChild, stopChild, type Child } from '../helpers/children.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

interface SpanRecord {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  links: { traceId: string; spanId: string }[];
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  events: string[];
}

const exporter = new InMemorySpanExporter();
beforeAll(() => trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })));
afterAll(() => trace.disable());
afterEach(() => killAllChildren());

let req = 0;
async function workerSpans(worker: Child): Promise<SpanRecord[]> {
  const id = ++req;
  worker.proc.send({ cmd: 'spans', req: id });
  return (await worker.message((m) => m.event === 'spans' && m.req === id)).spans as SpanRecord[];
}

test('producer and consumer spans share a trace across two processes; retries, a fire, off per enqueue and per process', async () => {
  const namespace = newNamespace('trace');
  const worker = await startChild('traced-worker', 'tw-1', { REDIS_URL: redisUrl(), NS: namespace });
  const client = new QueueClient({ connection: redisUrl(), namespace });
  const redis = new Redis(redisUrl());
  const inspector = new Inspector({ connection: redis, namespace });
  try {
    const ok = await client.enqueue('traced.ok', { n: 1 });
    const flaky = await client.enqueue('traced.flaky', {});
    const untraced = await client.enqueue('traced.ok', { n: 2 }, { trace: false });
    // a fire as the scheduler will trace it: the fire span's traceparent in the trigger task's meta
    const triggerAt = Math.floor(Date.now() / 1000) * 1000;
    const fireId = `nightly:${triggerAt / 1000}`;
    const fire = startFireSpan('nightly', 'default', triggerAt, fireId)!;
    const meta = { r: 0, m: 0, t: 0, e: Date.now(), s: 'nightly', tr: triggerAt, tp: fire.traceparent };
    const stream = new QueueKeys(namespace, 'default').stream;
    await redis.xadd(stream, '*', 'id', fireId, 'type', 'traced.ok', 'payload', 'null', 'meta', JSON.stringify(meta));
    fire.end();
    configureTracing({ enabled: false });
    const off = await client.enqueue('traced.ok', { n: 3 });
    configureTracing({ enabled: true });

    const consumers = await waitFor(async () => {
      const c = (await workerSpans(worker)).filter((s) => s.kind === SpanKind.CONSUMER);
      return c.length >= 6 ? c : undefined;
    }, 'six consumer spans in the worker process');
    const producers = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.PRODUCER);
    const producerOf = (id: string) => producers.filter((s) => s.attributes['messaging.message.id'] === id);
    const consumersOf = (id: string) => consumers.filter((s) => s.attributes['messaging.message.id'] === id);
    expect(producers).toHaveLength(3); // ok, flaky, the fire; none for `trace: false` nor while off

    const [p] = producerOf(ok.id);
    expect(p.name).toBe('send default');
    expect(p.attributes).toMatchObject({
      'messaging.system': 'chronos',
      'messaging.destination.name': 'default',
      'chronos.task.type': 'traced.ok',
    });
    const [c] = consumersOf(ok.id);
    expect(c).toMatchObject({
      name: 'process default',
      traceId: p.spanContext().traceId,
      parentSpanId: p.spanContext().spanId,
      links: [{ traceId: p.spanContext().traceId, spanId: p.spanContext().spanId }],
      status: { code: SpanStatusCode.UNSET },
    });
    expect(c.attributes).toMatchObject({
      'messaging.system': 'chronos',
      'messaging.destination.name': 'default',
      'messaging.consumer.group.name': 'chronos',
      'messaging.operation.type': 'process',
      'chronos.task.type': 'traced.ok',
      'chronos.task.attempt': 1,
    });

    // a retry: a new span, same parent and link; the failed attempt has the error and status ERROR
    const [pf] = producerOf(flaky.id);
    const attempt = (s: SpanRecord) => Number(s.attributes['chronos.task.attempt']);
    const attempts = consumersOf(flaky.id).sort((a, b) => attempt(a) - attempt(b));
    expect(attempts.map((s) => [s.attributes['chronos.task.attempt'], s.parentSpanId, s.links[0]?.spanId, s.status.code])).toEqual([
      [1, pf.spanContext().spanId, pf.spanContext().spanId, SpanStatusCode.ERROR],
      [2, pf.spanContext().spanId, pf.spanContext().spanId, SpanStatusCode.UNSET],
    ]);
    expect(attempts[0]).toMatchObject({ status: { message: 'flaky first attempt' }, events: ['exception'] });
    expect(new Set(attempts.map((s) => s.traceId))).toEqual(new Set([pf.spanContext().traceId]));

    // the fire: its task's span is the fire span's child
    const [pfire] = producerOf(fireId);
    expect(pfire.name).toBe('fire nightly');
    expect(pfire.attributes).toMatchObject({ 'chronos.schedule': 'nightly', 'chronos.trigger_at': triggerAt });
    expect(consumersOf(fireId)[0]).toMatchObject({ parentSpanId: pfire.spanContext().spanId, traceId: pfire.spanContext().traceId });
    expect(consumersOf(fireId)[0].attributes).toMatchObject({ 'chronos.schedule': 'nightly', 'chronos.trigger_at': triggerAt });

    // no producer span: no traceparent written, and the attempt starts a trace of its own
    for (const id of [untraced.id, off.id]) {
      const [s] = consumersOf(id);
      expect({ parent: s.parentSpanId, links: s.links }).toEqual({ parent: undefined, links: [] });
      expect(producers.map((x) => x.spanContext().traceId)).not.toContain(s.traceId);
    }
    await stopChild(worker);
    // (the tasks are done and deleted; the meta of a traced task carried `tp`, an untraced one none)
    const probe = await client.enqueue('traced.ok', {}, { delay: 60_000 });
    const noTp = await client.enqueue('traced.ok', {}, { delay: 60_000, trace: false });
    const stored = await redis.hmget(new QueueKeys(namespace, 'default').tasks, probe.id, noTp.id);
    const tps = stored.map((raw, i) => decodeStored(raw!, [probe.id, noTp.id][i]).meta.tp);
    expect(tps).toEqual([expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/), undefined]);
    expect((await inspector.queue('default')).latencyMs).toBe(0);
  } finally {
    await client.close();
    redis.disconnect();
    await deleteNamespace(namespace);
  }
});
