// The fire spans of a batch whose triggers target several queues: fire.lua runs once per queue, all
// in flight at once, and each call ends its own spans with its own outcomes. The spans lived on the
// fire path's one observer (FireObserver.begin kept them until end): the second queue's begin replaced
// the first's spans, so the first call ended the second's spans with its outcomes and the first's
// were never ended (never exported).
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Redis } from 'ioredis';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

const exporter = new InMemorySpanExporter();
beforeAll(() => trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })));
afterAll(() => trace.disable());

test('each fire of schedules on two queues, fired in one batch, ends its own span once, with its outcome', async () => {
  const ns = newNamespace('fspan');
  const redis = new Redis(redisUrl());
  const s = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, logger: recordingLogger() });
  const tasks = async (q: string) => (await redis.xrange(new QueueKeys(ns, q).stream, '-', '+')).map(([, f]) => f[f.indexOf('id') + 1]);
  try {
    await s.start();
    await s.addSchedules([
      { name: 'one', spec: '@every 1s', queue: 'q1' },
      { name: 'two', spec: '@every 1s', queue: 'q2' },
    ]);
    await waitFor(async () => (await tasks('q1')).length >= 3 && (await tasks('q2')).length >= 3, 'three fires of each');
    await s.stop();
    const fired = [...(await tasks('q1')), ...(await tasks('q2'))].sort();
    const spans = exporter.getFinishedSpans().filter((sp) => sp.name.startsWith('fire '));
    const ended = spans.map((sp) => `${String(sp.attributes['chronos.schedule'])}:${Number(sp.attributes['chronos.trigger_at']) / 1000}`);
    // every task has its span, ended once; no span of a trigger that enqueued nothing says it did
    expect(ended.filter((id) => fired.includes(id)).sort()).toEqual(fired);
    for (const sp of spans) {
      const id = `${String(sp.attributes['chronos.schedule'])}:${Number(sp.attributes['chronos.trigger_at']) / 1000}`;
      expect([id, sp.attributes['chronos.fire.outcome']]).toEqual([
        id,
        fired.includes(id) ? 'enqueued' : expect.not.stringMatching(/^enqueued$/),
      ]);
    }
  } finally {
    await s.stop();
    redis.disconnect();
    await deleteNamespace(ns);
  }
});
