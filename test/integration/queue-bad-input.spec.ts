// dist-cases B09 and the queue issue's "bad input, nothing lost": garbage stream entries, unknown
// task types and poison tasks end in the dead-letter set with a clear error; workers keep going.
import { decodeDays } from '../../lib/core/admin/history.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { engineTime } from '../../lib/core/runtime/time.js';
import { QueueRig } from '../helpers/queue.js';
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

async function deadRecord(id: string): Promise<{ type: string; payload: string; meta: Record<string, unknown> }> {
  const raw = await rig.client.redis.hget(keys.deadTasks, id);
  if (!raw) throw new Error(`${id} is not dead`);
  const [, type, payload, meta] = JSON.parse(raw) as string[];
  return { type, payload, meta: JSON.parse(meta) };
}

test('B09: invalid JSON, a missing payload and an unknown type end dead with specific errors; 5 valid tasks complete; workers stay up', async () => {
  const r = rig.client.redis;
  const servers = [rig.server(), rig.server()];
  const done = new Set<string>();
  const allDone = deferred();
  for (const s of servers) {
    s.handle('valid', (t) => {
      done.add(t.id);
      if (done.size === 5) allDone.resolve();
    });
    await s.start();
  }
  const a = (await r.xadd(keys.stream, '*', 'id', 'bad-a', 'type', 'valid', 'payload', '{not json', 'meta', '{"r":0,"m":25,"t":0,"e":0}'))!;
  const b = (await r.xadd(keys.stream, '*', 'id', 'bad-b', 'type', 'valid', 'meta', '{"r":0,"m":25,"t":0,"e":0}'))!;
  await r.xadd(keys.stream, '*', 'id', 'bad-c', 'type', 'nobody.handles', 'payload', '{}', 'meta', '{"r":0,"m":25,"t":0,"e":0}');
  for (let i = 0; i < 5; i++) await rig.client.enqueue('valid', { i });
  await allDone.promise;

  await waitFor(async () => (await r.zcard(keys.dead)) === 2, '(a) and (b) to be dead');
  const da = await deadRecord('bad-a');
  expect(da.meta.le).toMatch(/invalid JSON payload/);
  expect(da.meta.le).toContain(a);
  expect(da.meta.rs).toBe('decode');
  expect(da.payload).toBe('{not json'); // the bad input is kept, not dropped
  const db = await deadRecord('bad-b');
  expect(db.meta.le).toMatch(/missing payload/);
  expect(db.meta.le).toContain(b);

  // (c): a type no server here handles bounces a few times (another server might have it), then dies
  await waitFor(async () => (await r.zcard(keys.dead)) === 3, '(c) to be dead', 15_000);
  const dc = await deadRecord('bad-c');
  expect(dc.meta.le).toMatch(/no handler for task type "nobody.handles"/);
  expect(dc.meta.rs).toBe('no-handler');

  // nothing in the PEL, nothing left in the stream or the retry set; decode errors were not retried
  expect(((await r.call('XPENDING', keys.stream, 'chronos')) as [number])[0]).toBe(0);
  expect(await r.xlen(keys.stream)).toBe(0);
  expect(await r.zcard(keys.retry)).toBe(0);
  expect(servers).toHaveLength(2);
  expect(servers.every((s) => s.isRunning)).toBe(true);
  // one ERROR line per bad entry, not one per poll
  const errors = rig.logger.lines.filter((l) => l.level === 'error');
  expect(errors.filter((l) => l.message.includes(a))).toHaveLength(1);
  expect(errors.filter((l) => l.message.includes(b))).toHaveLength(1);
  expect(errors.filter((l) => l.message.includes('nobody.handles'))).toHaveLength(1);
}, 30_000);

test('a task dead-lettered for "no handler" counts as failed in the server\'s counters, as in the queue\'s daily counts', async () => {
  const server = rig.server({ forwardInterval: 50 });
  server.handle('known', () => {});
  const dead = deferred();
  const outcomes: string[] = [];
  rig.events.subscribe((e) => {
    if (e.type === 'task.failed' || e.type === 'task.retried' || e.type === 'task.dead') outcomes.push(e.type);
    if (e.type === 'task.dead' && e.reason === 'no-handler') dead.resolve();
  });
  await server.start();
  await rig.client.enqueue('nobody.handles', {}, { maxRetry: 1 }); // one bounce (1 s), then dead
  await dead.promise;
  const [[, failedToday]] = decodeDays(await rig.client.redis.getBuffer(keys.counts), engineTime.now(), 1);
  expect(failedToday).toBe(2);
  // the events (and the metrics fed by them) as for a handler's failures: a failed attempt, then retried or dead
  expect(outcomes).toEqual(['task.failed', 'task.retried', 'task.failed', 'task.dead']);
  await server.shutdown();
  const stopped = rig.logger.lines.find((l) => l.message.startsWith('Worker stopped'))!.message;
  expect(stopped).toMatch(/processed=0 failed=2\)/); // was failed=0
});

test('a poison task (delivered more than maxDeliveries times without finishing) is dead with that reason', async () => {
  const r = rig.client.redis;
  // a "ghost" consumer takes every delivery and never finishes it, like a worker that crashes on it;
  // the server only recovers (its queue is paused, so it never fetches)
  const server = rig.server({ visibilityTimeout: 200, recoverInterval: 50, maxDeliveries: 2 });
  await server.pause('default');
  await server.start();
  const { id } = await rig.client.enqueue('crashy', {});
  const ghost = rig.client.redis.duplicate();
  let deliveries = 0;
  try {
    while ((await r.zcard(keys.dead)) === 0) {
      const got = (await ghost.call('XREADGROUP', 'GROUP', 'chronos', 'ghost', 'COUNT', 1, 'BLOCK', 100, 'STREAMS', keys.stream, '>')) as
        unknown[] | null;
      if (got) deliveries++;
    }
  } finally {
    ghost.disconnect();
  }
  expect(deliveries).toBe(3); // first delivery + 2 redeliveries, then the 3rd reclaim finds it poison
  const d = await deadRecord(id);
  expect(d.meta.rs).toBe('poison');
  expect(d.meta.le).toMatch(/poison: delivered 3 times without finishing/);
  expect(await r.xlen(keys.stream)).toBe(0);
}, 20_000);

const redisMs = ([s, us]: (string | number)[]) => Number(s) * 1000 + Math.floor(Number(us) / 1000);

test('the dead-letter set is capped by count, oldest first', async () => {
  const server = rig.server({ deadMaxCount: 3 });
  server.handle('doomed', () => {
    throw new Error('no');
  });
  await server.start();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const dead = deferred();
    const off = rig.events.subscribe((e) => e.type === 'task.dead' && dead.resolve());
    ids.push((await rig.client.enqueue('doomed', { i }, { maxRetry: 0 })).id);
    await dead.promise;
    off();
    // the set is ordered by failed-at (Redis ms): tasks dead within one ms tie, so the next one
    // dies only once Redis time has passed this one's failed-at
    const failedAt = Number(await rig.client.redis.zscore(keys.dead, ids[i]));
    await waitFor(async () => redisMs(await rig.client.redis.time()) > failedAt, { what: 'Redis time to pass the last failed-at' });
  }
  const r = rig.client.redis;
  expect(await r.zrange(keys.dead, 0, -1)).toEqual(ids.slice(2));
  expect((await r.hkeys(keys.deadTasks)).sort()).toEqual(ids.slice(2).sort());
});

test('a handler that throws a value that is not an Error: its content is kept, not "[object Object]" (trial 8)', async () => {
  const server = rig.server();
  server.handle('throws.object', () => {
    throw { code: 'E1', detail: { n: 2 } };
  });
  const dead = deferred<string>();
  rig.events.subscribe((e) => e.type === 'task.dead' && dead.resolve(e.error));
  await server.start();
  const { id } = await rig.client.enqueue('throws.object', {}, { maxRetry: 0 });
  expect(await dead.promise).toBe("{ code: 'E1', detail: { n: 2 } }");
  expect((await deadRecord(id)).meta).toMatchObject({ le: "{ code: 'E1', detail: { n: 2 } }" });
  await server.shutdown();
});

test('a backoff whose due instant is past the range of a Date falls back to the default, named in the log, as a bad delay does', async () => {
  // trial 21: a backoff of 1e20 ms was stored as is, and the retry's due time came back from Redis
  // overflowed (task.retried's retryAt negative); an enqueue refuses such a delay
  const retried = deferred<{ retryAt: number }>();
  rig.events.subscribe((e) => e.type === 'task.retried' && retried.resolve(e));
  const server = rig.server();
  server.handle(
    'far',
    () => {
      throw new Error('nope');
    },
    { backoff: () => 1e20 },
  );
  await server.start();
  const before = engineTime.now();
  await rig.client.enqueue('far', {}, { maxRetry: 1 });
  const { retryAt } = await retried.promise;
  expect(retryAt).toBeGreaterThan(before);
  expect(retryAt).toBeLessThan(before + 24 * 3600_000); // the default backoff's first delay (15-44 s)
  expect(rig.logger.lines.map((l) => l.message)).toContainEqual(
    expect.stringMatching(/Backoff function failed.*backoff returned 100000000000000000000 ms/),
  );
});

test('a backoff that returns a promise (as BullMQ allows) falls back to the default, named in the log; a rejected one does not crash the worker (trial 33)', async () => {
  // before: the promise was refused as a delay ('backoff returned {}'), and a rejected one was never
  // handled: an unhandled rejection, which ends a Node process (the worker and every task it ran; here
  // jest reports it as this test's failure)
  const retried = new Set<string>();
  rig.events.subscribe((e) => void (e.type === 'task.retried' && retried.add(e.taskType)));
  const server = rig.server();
  const fail = () => {
    throw new Error('nope');
  };
  const asyncBackoff = (async () => 1000) as unknown as () => number;
  const rejecting = (async () => {
    throw new Error('backoff service down');
  }) as unknown as () => number;
  server.handle('async-backoff', fail, { backoff: asyncBackoff });
  server.handle('rejecting-backoff', fail, { backoff: rejecting });
  await server.start();
  await rig.client.enqueue('async-backoff', {}, { maxRetry: 1 });
  await rig.client.enqueue('rejecting-backoff', {}, { maxRetry: 1 });
  await waitFor(() => retried.size === 2, 'both retries scheduled');
  const warned = rig.logger.lines.filter((l) => l.level === 'warn' && /Backoff function failed/.test(l.message)).map((l) => l.message);
  expect(warned.sort()).toEqual([
    expect.stringMatching(/type=async-backoff .*backoff returned a promise: it must return the delay in ms itself/),
    expect.stringMatching(/type=rejecting-backoff .*backoff returned a promise: it must return the delay in ms itself/),
  ]);
});
