// Two queues' tasks with the same stream entry id (an entry id is unique only within its stream:
// fires to two queues in one millisecond both get `<ms>-0`): a worker consuming both keeps them
// apart — both start on time, both have their claims renewed, a cancel reaches the right one.
import { Inspector } from '../../lib/core/admin/inspector.js';
import type { ChronosEvent } from '../../lib/core/runtime/events.js';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { entryFields } from '../../lib/core/redis/protocol.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => {
  rig = new QueueRig();
});
afterEach(() => rig.close());

const QUEUES = ['a', 'b'];

/** Writes one entry per queue, all with the explicit entry id `entryId`, in one MULTI; task `<queue>-<tag>` each. */
async function addEverywhere(entryId: string, tag: string, type: string, meta: object): Promise<void> {
  const m = rig.client.redis.multi();
  for (const q of QUEUES)
    m.xadd(new QueueKeys(rig.namespace, q).stream, entryId, ...entryFields(`${q}-${tag}`, type, 'null', JSON.stringify(meta)));
  await m.exec();
}

test('trigger tasks of two queues held under one entry id both start at their instant, once each', async () => {
  const s = rig.server({ queues: QUEUES, concurrency: 8 });
  const started: { id: string; at: number }[] = [];
  s.handle('tick', (t) => void started.push({ id: t.id, at: Date.now() }));
  const requeued: ChronosEvent[] = [];
  rig.events.subscribe((e) => e.type === 'task.requeued' && requeued.push(e));
  await s.start();
  const now = Date.now();
  // the leader enqueues a trigger up to a second before its instant: the worker holds it until then
  const triggerAt = now + 700;
  const meta = { m: 0, e: now, s: 'nightly', tr: triggerAt };
  await addEverywhere(`${now}-0`, 'trig', 'tick', meta);
  // and the next entry of each stream, also shared: one more trigger of another instant
  await addEverywhere(`${now}-1`, 'trig2', 'tick', { ...meta, tr: triggerAt + 100 });
  // well within the visibility timeout (30 s): a task lost from the slot table waits for the sweep
  await waitFor(() => started.length === 4, { what: 'the four trigger tasks to start', timeoutMs: 5_000 });
  expect(started.map((x) => x.id).sort()).toEqual(['a-trig', 'a-trig2', 'b-trig', 'b-trig2']);
  for (const x of started) expect(x.at).toBeGreaterThanOrEqual(x.id.endsWith('2') ? triggerAt + 100 : triggerAt);
  await waitFor(async () => (await rig.client.redis.xlen(new QueueKeys(rig.namespace, 'a').stream)) === 0, 'the acks');
  expect(requeued).toEqual([]);
});

test('running tasks of two queues under one entry id: both have their claims renewed; a cancel aborts the right one', async () => {
  const s = rig.server({ queues: QUEUES, concurrency: 8, visibilityTimeout: 1_200 }); // claims renewed every 400 ms
  const running = new Map<string, AbortSignal>();
  const finish = deferred();
  s.handle('long', (t) => {
    running.set(t.id, t.signal);
    return new Promise<void>((resolve) => {
      t.signal.addEventListener('abort', () => resolve());
      void finish.promise.then(resolve);
    });
  });
  const requeued: ChronosEvent[] = [];
  rig.events.subscribe((e) => e.type === 'task.requeued' && requeued.push(e));
  await s.start();
  const now = Date.now();
  await addEverywhere(`${now}-0`, 'long', 'long', { m: 0, e: now });
  await waitFor(() => running.size === 2, 'both tasks to start');

  // a renewal resets an entry's idle time (XCLAIM … JUSTID, same delivery count): watch both entries' idle drop
  const r = rig.client.redis;
  const idle = async (q: string) => {
    const rows = (await r.xpending(new QueueKeys(rig.namespace, q).stream, CONSUMER_GROUP, '-', '+', 10)) as [
      string,
      string,
      number,
      number,
    ][];
    return rows.find((x) => x[0] === `${now}-0`)?.[2];
  };
  const last = new Map<string, number>();
  const renewed = new Set<string>();
  await waitFor(
    async () => {
      for (const q of QUEUES) {
        const i = await idle(q);
        if (i === undefined) continue;
        if (i < (last.get(q) ?? -1)) renewed.add(q);
        last.set(q, i);
      }
      return renewed.size === QUEUES.length;
    },
    { what: 'both entries to have their claims renewed', timeoutMs: 5_000, intervalMs: 50 },
  );
  expect(requeued).toEqual([]);

  const inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace });
  try {
    await inspector.cancelTask('a-long', { queue: 'a' });
  } finally {
    await inspector.close();
  }
  await waitFor(() => running.get('a-long')!.aborted, 'the cancelled task to be aborted');
  expect(running.get('b-long')!.aborted).toBe(false);
  expect(s.activeCount).toBe(1);
  finish.resolve();
  await waitFor(() => s.activeCount === 0, 'the other task to end');
});
