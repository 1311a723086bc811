// Issue 15 (memory): the stored form of a task got smaller (22-character ids, meta without the fields
// at their default, a scheduled task without its id). Tasks the previous version wrote — already in
// Redis during a rolling deploy — must still decode and run: they are written here raw, as that
// version's code wrote them (XADD; HSET + ZADD of the JSON array [id, type, payload, meta]).
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import type { Task } from '../../lib/core/queue/task.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred } from '../helpers/wait.js';

let rig: QueueRig;
let keys: QueueKeys;
beforeEach(() => {
  rig = new QueueRig();
  keys = new QueueKeys(rig.namespace, 'default');
});
afterEach(async () => {
  await rig.close();
});

interface Seen {
  id: string;
  payload: unknown;
  retried: number;
  maxRetry: number;
  timeoutMs: number;
  enqueuedAt: number;
}

/** A server whose `kind` handler records every task; resolves once `n` ran. */
async function recordingServer(n: number): Promise<{ seen: Map<string, Seen>; all: Promise<void> }> {
  const seen = new Map<string, Seen>();
  const all = deferred();
  const server = rig.server({ forwardInterval: 100 });
  server.handle('kind', (t: Task<unknown>) => {
    seen.set(t.id, {
      id: t.id,
      payload: t.payload,
      retried: t.retried,
      maxRetry: t.maxRetry,
      timeoutMs: t.timeoutMs,
      enqueuedAt: t.enqueuedAt,
    });
    if (seen.size === n) all.resolve();
  });
  await server.start();
  return { seen, all: all.promise };
}

test('tasks in the previous stored form (UUID ids, meta with r and t at 0, a scheduled or retry task with its id) run with the new code', async () => {
  const r = rig.client.redis;
  const e = Date.now() - 5_000;
  const oldMeta = (retried: number) => JSON.stringify({ r: retried, m: 25, t: 0, e });
  const ready = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  const scheduled = '16fd2706-8baf-433b-82eb-8c7fada847da';
  const retry = '886313e1-3b8a-5372-9b90-0c9aee199e5d';
  await r.xadd(keys.stream, '*', 'id', ready, 'type', 'kind', 'payload', '{"n":1}', 'meta', oldMeta(0));
  await r.hset(keys.tasks, scheduled, JSON.stringify([scheduled, 'kind', '{"n":2}', oldMeta(0)]));
  await r.zadd(keys.scheduled, Date.now() - 1_000, scheduled);
  await r.hset(keys.tasks, retry, JSON.stringify([retry, 'kind', '{"n":3}', oldMeta(1)]));
  await r.zadd(keys.retry, Date.now() - 1_000, retry);

  const { seen, all } = await recordingServer(3);
  await all;
  expect(seen.get(ready)).toEqual({ id: ready, payload: { n: 1 }, retried: 0, maxRetry: 25, timeoutMs: 0, enqueuedAt: e });
  expect(seen.get(scheduled)).toEqual({ id: scheduled, payload: { n: 2 }, retried: 0, maxRetry: 25, timeoutMs: 0, enqueuedAt: e });
  expect(seen.get(retry)).toEqual({ id: retry, payload: { n: 3 }, retried: 1, maxRetry: 25, timeoutMs: 0, enqueuedAt: e });
});

test('the new form: a 22-character id, meta without r and t at 0, a scheduled task stored as meta, payload and type on three lines; it is listed, run now and forwarded', async () => {
  const r = rig.client.redis;
  const plain = await rig.client.enqueue('kind', { n: 1 }, { timeout: 0 });
  expect(plain.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
  const [entry] = await r.xrange(keys.stream, '-', '+');
  expect(entry[1]).toEqual([
    'id',
    plain.id,
    'type',
    'kind',
    'payload',
    '{"n":1}',
    'meta',
    expect.stringMatching(/^\{"m":25,"e":\d{13}\}$/),
  ]);

  const later = await rig.client.enqueue('kind', { n: 2 }, { delay: 3_600_000 });
  const soon = await rig.client.enqueue('kind', { n: 3 }, { delay: 1 });
  const stored = (await r.hget(keys.tasks, later.id))!.split('\n');
  expect(stored).toEqual([expect.stringMatching(/^\{"m":25,"t":1800000,"e":\d{13}\}$/), '{"n":2}', 'kind']);

  const inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace });
  try {
    const info = await inspector.task('default', later.id);
    expect(info).toMatchObject({ id: later.id, state: 'scheduled', payload: { n: 2 }, retried: 0, timeoutMs: 1_800_000 });
    const { seen, all } = await recordingServer(3);
    await inspector.runTask('default', later.id); // run-tasks.lua
    await all; // `soon` comes through forward.lua
    expect(seen.get(plain.id)).toMatchObject({ payload: { n: 1 }, retried: 0, timeoutMs: 0 });
    expect(seen.get(later.id)).toMatchObject({ payload: { n: 2 }, retried: 0, timeoutMs: 1_800_000 });
    expect(seen.get(soon.id)).toMatchObject({ payload: { n: 3 }, retried: 0, timeoutMs: 1_800_000 });
  } finally {
    await inspector.close();
  }
});

test('generated task ids are unique, and none starts with "-" (a command line would read it as an option)', async () => {
  const tasks = Array.from({ length: 2_000 }, (_, n) => ({ type: 'kind', payload: { n } }));
  const ids = (await rig.client.enqueueBulk(tasks)).map((x) => x.id);
  expect(new Set(ids).size).toBe(ids.length);
  for (const id of ids) expect(id).toMatch(/^[A-Za-f][A-Za-z0-9_-]{21}$/);
});
