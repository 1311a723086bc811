// A task's meta is JSON that Redis's scripts decode (retry of a dead task, reclaim of a crashed
// worker's task, the group of an entry): a lone UTF-16 surrogate in it (JSON.stringify writes it as a
// \udXXX escape, which cjson refuses) made the whole meta unreadable there, and the task came back
// without its retry budget, timeout and group (trial 24).
import { InvalidOptionsError, NonRetryableError } from '../../lib/core/runtime/errors.js';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { recoverScript } from '../../lib/core/redis/commands/recovery.js';
import { errorText } from '../../lib/core/worker/error-text.js';
import { hasLoneSurrogate } from '../../lib/core/runtime/unicode.js';
import { inspect } from 'node:util';
import type { Task } from '../../lib/core/queue/task.js';
import { QueueRig } from '../helpers/queue.js';
import { connect } from '../helpers/redis.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(async () => rig.close());

/** What a handler saw of a task: the fields its meta carries. */
const fieldsOf = (t: Task) => ({ retried: t.retried, maxRetry: t.maxRetry, timeoutMs: t.timeoutMs, group: t.group });

test('an error text cut at 4,000 characters inside a surrogate pair: the dead task retried keeps its budget, timeout and group', async () => {
  // 'Error: ' + 3992 characters puts the 10th emoji's pair across the cut (code units 3999 and 4000)
  const message = 'a'.repeat(3992) + '\u{1F600}'.repeat(10);
  const text = errorText(Object.assign(new Error(message), { stack: `Error: ${message}` }));
  expect(hasLoneSurrogate(text)).toBe(false);
  expect(text.endsWith('a…')).toBe(true);
  expect(hasLoneSurrogate(errorText(new Error('lone \ud800 and \udc00')))).toBe(false);

  const runs: ReturnType<typeof fieldsOf>[] = [];
  let fail = true;
  const server = rig.server({ queues: ['q'] });
  server.handle('job', (t) => {
    runs.push(fieldsOf(t));
    if (fail) throw Object.assign(new NonRetryableError(message), { stack: `NonRetryableError: ${message}` });
  });
  await server.start();
  const { id } = await rig.client.enqueue('job', {}, { queue: 'q', maxRetry: 3, timeout: 60_000, group: 'tenant-1' });
  await waitFor(async () => (await rig.inspector.queue('q')).dead === 1, 'the task dead');
  fail = false;
  await rig.inspector.retryDead('q', id);
  await waitFor(() => runs.length === 2, 'the retried task ran');
  expect(runs[1]).toEqual({ retried: 0, maxRetry: 3, timeoutMs: 60_000, group: 'tenant-1' });
});

test('a meta with a lone surrogate escape (stored by an earlier version): retry-dead and recover keep its other fields', async () => {
  const keys = new QueueKeys(rig.namespace, 'q');
  const redis = connect();
  try {
    // as an earlier version wrote them: the lone high surrogate of a cut error text, escaped by JSON.stringify
    const meta = JSON.stringify({ m: 3, t: 60_000, e: 1, le: 'cut \ud83d…', fa: 2, rs: 'retries' });
    expect(meta).toContain('\\ud83d');
    await redis.hset(keys.deadTasks, 'old-1', JSON.stringify(['old-1', 'job', '{}', meta]));
    await redis.zadd(keys.dead, 2, 'old-1');
    expect(await rig.inspector.retryDead('q', 'old-1')).toMatchObject({ count: 1 });
    const [[, fields]] = (await redis.xrange(keys.stream, '-', '+')) as [string, string[]][];
    expect(JSON.parse(fields[fields.indexOf('meta') + 1])).toEqual({ m: 3, t: 60_000, e: 1, le: 'cut \ufffd…', fa: 2, r: 0 });

    // a crashed worker's entry with such a meta, reclaimed: back in the stream with its crash counted, its fields kept
    await redis.del(keys.stream);
    await redis.xgroup('CREATE', keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM');
    const retriedMeta = JSON.stringify({ r: 1, m: 3, t: 60_000, e: 1, u: 1, le: 'cut \ud83d…' });
    await redis.xadd(keys.stream, '*', 'id', 'old-2', 'type', 'job', 'payload', '{}', 'meta', retriedMeta);
    await redis.xreadgroup('GROUP', CONSUMER_GROUP, 'gone', 'COUNT', 10, 'STREAMS', keys.stream, '>');
    const out = await recoverScript(redis, keys, {
      consumer: 'recoverer',
      minIdleMs: 0,
      count: 10,
      maxDeliveries: 5,
      counterTtlMs: 60_000,
      cursor: '0-0',
    });
    expect(out.requeued.map((r) => [r.taskId, JSON.parse(r.meta)])).toEqual([
      ['old-2', { r: 1, m: 3, t: 60_000, e: 1, u: 1, le: 'cut \ufffd…', c: 1 }],
    ]);
  } finally {
    redis.disconnect();
  }
});

test('an enqueue with a lone surrogate in its type, task id, dedup key or group is refused, naming each; nothing is written', async () => {
  // Redis keeps text as UTF-8: each came back as U+FFFD (an explicit id returned changed, a type no
  // handler matched: the task went dead "no handler"), or made the meta unreadable to the scripts
  const lone = 'x\ud800';
  const refused = async (type: string, options: object, what: RegExp) => {
    const err = await rig.client.enqueue(type, {}, { queue: 'q', ...options }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidOptionsError);
    expect((err as Error).message).toMatch(what);
  };
  await refused(lone, {}, /type: expected a non-empty string of at most 200 characters without lone surrogates, got "x\\ud800"/);
  await refused('t', { taskId: lone }, /taskId: expected .* without lone surrogates, got "x\\ud800"/);
  await refused('t', { dedupKey: lone }, /dedupKey: expected .* without lone surrogates, got "x\\ud800"/);
  await refused('t', { dedup: { key: '\udc00' } }, /dedup\.key: expected .* without lone surrogates, got "\\udc00"/);
  await refused('t', { group: lone }, /group: expected .* or lone surrogates, got "x\\ud800"/);
  await expect(rig.inspector.setQueueLimits('q', { groups: { [lone]: { concurrency: 1 } } })).rejects.toThrow(/lone surrogates/);
  // a well-formed pair is fine everywhere
  const ok = await rig.client.enqueue('t\u{1F600}', {}, { queue: 'q', taskId: 'id\u{1F600}', group: 'g\u{1F600}' });
  expect(ok.id).toBe('id\u{1F600}');
  expect(await rig.inspector.queue('q')).toMatchObject({ pending: 1 }); // that one task only: the refused ones wrote nothing
});

test("a handler's error: its causes are kept in the dead record; a huge message is cut in the events and logs as in the record (trial 33)", async () => {
  const keys = new QueueKeys(rig.namespace, 'default');
  const errors = new Map<string, string>();
  rig.events.subscribe((e) => (e.type === 'task.failed' || e.type === 'task.dead') && errors.set(`${e.type}:${e.taskId}`, e.error));
  const server = rig.server();
  const root = Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' });
  const looped = new Error('looped');
  looped.cause = looped;
  const oddStack = Object.assign(new Error('odd stack'), { stack: 42 });
  const huge = 'x'.repeat(2_000_000);
  server.handle('charge', () => {
    throw new Error('charge failed', { cause: new Error('payment gateway unreachable', { cause: root }) });
  });
  server.handle('looped', () => Promise.reject(looped));
  server.handle('odd', () => Promise.reject(oddStack));
  server.handle('huge', () => Promise.reject(new Error(huge)));
  await server.start();
  const ids: Record<string, string> = {};
  for (const type of ['charge', 'looped', 'odd', 'huge']) ids[type] = (await rig.client.enqueue(type, {}, { maxRetry: 0 })).id;
  await waitFor(async () => (await rig.inspector.queue('default')).dead === 4, 'the tasks dead');
  const lastError = async (type: string) => {
    const [, , , meta] = JSON.parse((await rig.client.redis.hget(keys.deadTasks, ids[type]))!) as string[];
    return (JSON.parse(meta) as { le: unknown }).le;
  };
  // before: the record kept the stack of the outer error only ('Error: charge failed\n    at …')
  const charge = (await lastError('charge')) as string;
  expect(charge).toMatch(/^Error: charge failed\n/);
  expect(charge).toMatch(/\nCaused by: Error: payment gateway unreachable\n/);
  expect(charge).toMatch(/\nCaused by: Error: connect ECONNREFUSED 10\.0\.0\.7:5432\n/);
  expect(((await lastError('looped')) as string).match(/Caused by/g)).toBeNull(); // a cause that is the error itself is not followed
  expect(await lastError('odd')).toBe('Error: odd stack'); // before: the number 42, not text
  // before: the record was cut at 4,000 characters, but task.failed / task.dead and the log lines carried the 2 MB message
  expect(((await lastError('huge')) as string).length).toBeLessThanOrEqual(4001);
  for (const e of ['task.failed', 'task.dead']) expect(errors.get(`${e}:${ids.huge}`)!.length).toBeLessThanOrEqual(4001);
  expect(errors.get(`task.dead:${ids.charge}`)).toBe('charge failed');
  const logged = rig.logger.lines.filter((l) => l.message.includes(ids.huge));
  expect(logged.length).toBeGreaterThan(0);
  for (const l of logged) expect(l.message.length).toBeLessThan(5000);
});

test('a thrown value that cannot be inspected is recorded with a placeholder, and the worker lives on (trial 33)', async () => {
  // before: errorText/errorMessage/isNonRetryable threw on these where the failure is recorded, an
  // unhandled rejection that ends a worker's process (checked with a plain node worker: exit code 1)
  const keys = new QueueKeys(rig.namespace, 'default');
  const revocable = Proxy.revocable({}, {});
  revocable.revoke();
  const thrown: Record<string, () => unknown> = {
    'custom-inspect': () => ({
      [inspect.custom]() {
        throw new Error('inspect boom');
      },
    }),
    'stack-getter': () =>
      Object.defineProperty(new Error('stack getter'), 'stack', {
        get() {
          throw new Error('no stack');
        },
      }),
    revoked: () => revocable.proxy,
  };
  const server = rig.server();
  for (const [type, value] of Object.entries(thrown)) {
    server.handle(type, () => {
      throw value();
    });
  }
  server.handle('fine', () => undefined);
  await server.start();
  const ids: Record<string, string> = {};
  for (const type of Object.keys(thrown)) ids[type] = (await rig.client.enqueue(type, {}, { maxRetry: 0 })).id;
  await waitFor(async () => (await rig.inspector.queue('default')).dead === 3, 'the tasks dead');
  for (const type of Object.keys(thrown)) {
    const [, , , meta] = JSON.parse((await rig.client.redis.hget(keys.deadTasks, ids[type]))!) as string[];
    expect((JSON.parse(meta) as { le: string }).le).toBe('<a thrown value that cannot be shown as text: inspecting it threw>');
  }
  const fine = deferred();
  rig.events.subscribe((e) => void (e.type === 'task.succeeded' && e.taskType === 'fine' && fine.resolve()));
  await rig.client.enqueue('fine', {});
  await fine.promise; // the worker still runs tasks
});
