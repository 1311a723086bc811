// enqueueBulk writes what one enqueue at a time writes: the same entry fields and meta, in input
// order across runs of ready tasks (sent as enqueue-bulk.lua calls of up to 100), tasks with options
// (enqueue.lua) and several queues; a task's own options still apply; bad input still names the task.
import { InvalidOptionsError, InvalidPayloadError } from '../../lib/core/runtime/errors.js';
import { withMetaDefaults, type TaskMeta } from '../../lib/core/queue/codec.js';
import { GlobalKeys, QueueKeys } from '../../lib/core/redis/keys.js';
import { ENTRY_FIELDS } from '../../lib/core/redis/protocol.js';
import { engineTime } from '../../lib/core/runtime/time.js';
import { QueueRig } from '../helpers/queue.js';

let rig: QueueRig;
beforeEach(() => {
  rig = new QueueRig();
});
afterEach(async () => {
  await rig.close();
});

type Entry = [string, string[]];

async function entries(queue: string): Promise<Entry[]> {
  return (await rig.client.redis.xrange(new QueueKeys(rig.namespace, queue).stream, '-', '+')) as Entry[];
}

test('a bulk of 250 tasks across chunks, options and queues: input order, the single-enqueue layout, every result', async () => {
  const tasks = Array.from({ length: 250 }, (_, n) => ({ type: 'bulk.t', payload: { n, s: 'é' } as unknown }));
  const withOptions = [
    { at: 120, task: { type: 'bulk.t', payload: { n: 120 }, options: { dedupKey: 'k-120' } } },
    { at: 130, task: { type: 'bulk.t', payload: { n: 130 }, options: { queue: 'other' } } },
    { at: 131, task: { type: 'bulk.t', payload: { n: 131 }, options: { maxRetry: 3, timeout: 500 } } },
  ];
  const input: { type: string; payload?: unknown; options?: object }[] = [...tasks];
  for (const o of withOptions) input[o.at] = o.task;
  // meta.e is the engine's time (Redis time, estimated never ahead: runtime/time.ts), not the wall clock
  // (which may run ahead of it: CI saw Date.now() 301 ms past it), so the bounds are read from the engine's time
  const before = engineTime.now();
  const results = await rig.client.enqueueBulk(input);
  const after = engineTime.now();
  expect(results).toHaveLength(250);
  expect(results.every((r) => !r.deduplicated && r.state === 'pending')).toBe(true);
  expect(results[130].queue).toBe('other');

  const single = await rig.client.enqueue('bulk.t', { n: -1 }); // the reference layout
  const main = await entries('default');
  expect(main).toHaveLength(250); // 249 of the bulk and the single one
  const [ref] = main.slice(-1);
  expect(ref[1].filter((_, i) => i % 2 === 0)).toEqual([...ENTRY_FIELDS]);
  expect(ref[1][1]).toBe(single.id);

  const bulk = main.slice(0, -1);
  const ns = bulk.map(([, f]) => (JSON.parse(f[5]) as { n: number }).n);
  expect(ns).toEqual(Array.from({ length: 250 }, (_, n) => n).filter((n) => n !== 130)); // input order
  for (const [, f] of bulk) {
    expect(f.filter((_, i) => i % 2 === 0)).toEqual([...ENTRY_FIELDS]);
    const stored = JSON.parse(f[7]) as Record<string, number>;
    const n = (JSON.parse(f[5]) as { n: number }).n;
    // the single enqueue's layout; a task with a dedup key carries it (META.dedupKey: an operator's delete releases it)
    const layout = Object.keys(JSON.parse(ref[1][7]) as object);
    expect(Object.keys(stored)).toEqual(n === 120 ? [...layout, 'dk'] : layout);
    if (n === 120) expect((stored as Record<string, unknown>).dk).toBe('k-120');
    const meta = withMetaDefaults(stored as unknown as TaskMeta) as unknown as Record<string, number>;
    expect(meta.e).toBeGreaterThanOrEqual(before);
    expect(meta.e).toBeLessThanOrEqual(after);
    expect([meta.r, meta.m, meta.t]).toEqual(n === 131 ? [0, 3, 500] : [0, 25, 1_800_000]);
  }
  expect(bulk.map(([, f]) => f[1])).toEqual(results.filter((r) => r.queue === 'default').map((r) => r.id));
  const other = await entries('other');
  expect(other.map(([, f]) => f[1])).toEqual([results[130].id]);
  // the dedup key is held as with a single enqueue: a second bulk with it is deduplicated
  const [again] = await rig.client.enqueueBulk([{ type: 'bulk.t', options: { dedupKey: 'k-120' } }]);
  expect(again).toMatchObject({ id: results[120].id, deduplicated: true });
});

test('a bad payload in a bulk names its task and its value; nothing is written', async () => {
  const input = [
    { type: 'bulk.t', payload: { ok: 1 } },
    { type: 'bulk.t', payload: { deep: { big: 10n } } },
  ];
  const err = await rig.client.enqueueBulk(input).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidPayloadError);
  expect((err as Error).message).toMatch(/task #1/);
  expect((err as Error).message).toMatch(/BigInt \(10n\) at deep\.big/);
  expect(await entries('default')).toHaveLength(0);
});

test('a bulk task with a key beside type, payload and options is refused, naming it; nothing is written', async () => {
  // an enqueue option written beside the task (BullMQ's addBulk takes { name, data, opts }) was ignored: the task ran at once
  const bad = [
    { type: 'bulk.t', payload: { ok: 1 } },
    { type: 'bulk.t', payload: {}, delay: 60_000 },
  ];
  const err = await rig.client.enqueueBulk(bad as never).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidOptionsError);
  expect((err as Error).message).toMatch(/enqueueBulk task #1/);
  expect((err as Error).message).toMatch(/unknown option "delay"/);
  const opts = await rig.client.enqueueBulk([{ type: 'bulk.t', opts: { attempts: 3 } }] as never).catch((e: unknown) => e);
  expect((opts as Error).message).toMatch(/task #0[\s\S]*unknown option "opts"/);
  const notObject = await rig.client.enqueueBulk([null] as never).catch((e: unknown) => e);
  expect(notObject).toBeInstanceOf(InvalidOptionsError);
  expect((notObject as Error).message).toMatch(/task #0[\s\S]*got null/);
  const notArray = await rig.client.enqueueBulk({ type: 'bulk.t' } as never).catch((e: unknown) => e);
  expect(notArray).toBeInstanceOf(InvalidOptionsError);
  expect((notArray as Error).message).toMatch(/expected an array/);
  expect(await entries('default')).toHaveLength(0);
});

test("a bulk's delayed task is indexed no later than its stored due time, however long the rest of the bulk takes to send", async () => {
  // the delayed task first, then enough ready tasks that building their calls takes many ms: the queue's due time
  // for the index used to be read from the clock after every call was sent, so it came after the task's own due time
  // (enqueue.lua: Redis time when it ran + delay) by however long the rest took (CI: 1 ms late in queue-wake.spec)
  const input = [
    { type: 'bulk.d', payload: {}, options: { queue: 'later', delay: 60_000 } },
    ...Array.from({ length: 20_000 }, (_, n) => ({ type: 'bulk.t', payload: { n, pad: 'x'.repeat(50) } })),
  ];
  const [delayed] = await rig.client.enqueueBulk(input);
  const keys = new QueueKeys(rig.namespace, 'later');
  const stored = Number(await rig.client.redis.zscore(keys.scheduled, delayed.id));
  const indexed = Number(await rig.client.redis.zscore(new GlobalKeys(rig.namespace).due, 'later'));
  expect(stored).toBeGreaterThan(0);
  expect(indexed).toBeGreaterThan(0);
  expect(indexed).toBeLessThanOrEqual(stored);
});
