// Issue 24, charts: a queue's counts per minute, hour and day (one fixed-size key, written inside the
// scripts that already run per batch), the depth and latency sampler, and the Inspector's history.
import { Redis } from 'ioredis';
import { decodeCounts, decodeDays } from '../../lib/core/admin/history.js';
import { QueueClient } from '../../lib/core/queue/client.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { utcDay } from '../../lib/core/queue/codec.js';
import { sampleQueueScript } from '../../lib/core/redis/commands/stats.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { STATS } from '../../lib/core/redis/protocol.js';
import { expandIncludes } from '../../lib/core/redis/scripts.js';
import { NonRetryableError } from '../../lib/core/runtime/errors.js';
import { engineTime } from '../../lib/core/runtime/time.js';
import { cliRunner } from '../helpers/cli.js';
import { QueueRig } from '../helpers/queue.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

/** Runs stats.lua's countStats on `key` as a script would, at an instant of our choosing. */
const COUNT = expandIncludes(
  '-- @include stats\ncountStats(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])\nreturn redis.call("PTTL", KEYS[1])',
  'test',
);
const MIN = 60_000;
const HOUR = 3_600_000;

test('countStats: minute, hour and day buckets; a new minute zeroes the buckets passed; an hour later the ring holds only the last 60 minutes', async () => {
  const key = new QueueKeys(rig.namespace, 'h').counts;
  const count = (field: number, n: number, at: number) => rig.client.redis.eval(COUNT, 1, key, field, n, at, 86_400_000) as Promise<number>;
  const t0 = Math.floor(engineTime.now() / HOUR) * HOUR + 10 * MIN; // 10 minutes into an hour
  expect(await count(STATS.processed, 5, t0)).toBeGreaterThan(86_000_000); // the first write of a day sets the lifetime
  await count(STATS.processed, 2, t0 + 30_000); // same minute
  await count(STATS.failed, 1, t0 + MIN);
  await count(STATS.lost, 4, t0 + 2 * MIN);
  const buf = await rig.client.redis.getBuffer(key);
  expect(buf!.length).toBeLessThanOrEqual((STATS.dayBase + STATS.days * STATS.fields) * 4);
  const minutes = decodeCounts(buf, t0 + 2 * MIN, 'hour');
  expect(minutes).toHaveLength(60);
  expect(minutes.slice(-3).map((p) => [p.at - t0, p.processed, p.failed, p.lost])).toEqual([
    [0, 7, 0, 0],
    [MIN, 0, 1, 0],
    [2 * MIN, 0, 0, 4],
  ]);
  expect(minutes.slice(0, -3).every((p) => p.processed + p.failed + p.lost === 0 && p.depth === undefined)).toBe(true);
  const hours = decodeCounts(buf, t0 + 2 * MIN, 'day');
  expect(hours.at(-1)).toEqual({ at: t0 - 10 * MIN, processed: 7, failed: 1, lost: 4 });

  // 61 minutes later: the minute of t0 + MIN (same slot as t0 + 61 min) holds only the new count
  await count(STATS.processed, 1, t0 + 61 * MIN);
  const later = decodeCounts(await rig.client.redis.getBuffer(key), t0 + 61 * MIN, 'hour');
  expect(later.map((p) => p.processed + p.failed + p.lost)).toEqual([
    ...Array(59)
      .fill(0)
      .map((_, i) => (i === 0 ? 4 : 0)),
    1,
  ]);
  expect(later[0].at).toBe(t0 + 2 * MIN);
  const laterHours = decodeCounts(await rig.client.redis.getBuffer(key), t0 + 61 * MIN, 'day');
  expect(laterHours.slice(-2).map((p) => p.processed)).toEqual([7, 1]);
  // read a day later, nothing of the ring is current: all zeros
  expect(decodeCounts(await rig.client.redis.getBuffer(key), t0 + 25 * HOUR, 'day').every((p) => p.processed === 0)).toBe(true);
});

test('countStats: a write dated before the last (another process a little behind) counts in its bucket and keeps the newer stamp', async () => {
  const key = new QueueKeys(rig.namespace, 'skew').counts;
  const count = (n: number, at: number) => rig.client.redis.eval(COUNT, 1, key, STATS.processed, n, at, 86_400_000);
  const t0 = Math.floor(engineTime.now() / HOUR) * HOUR + 30 * MIN;
  await count(1, t0 + MIN);
  await count(2, t0); // a minute behind
  await count(4, t0 - 90 * MIN); // more than the ring behind: counted in the newest minute instead
  const buf = await rig.client.redis.getBuffer(key);
  expect(buf!.readUInt32BE(STATS.stampMinute * 4)).toBe(Math.floor((t0 + MIN) / MIN));
  const m = decodeCounts(buf, t0 + MIN, 'hour');
  expect(m.slice(-2).map((p) => p.processed)).toEqual([2, 5]);
  expect(m.reduce((s, p) => s + p.processed, 0)).toBe(7);
});

test('processed and failed land in the current minute and hour; depth and latency are sampled once a minute; the day keys of before are added', async () => {
  const k = new QueueKeys(rig.namespace, 'mail');
  await rig.client.redis.set(k.processed(utcDay(engineTime.now())), '5'); // written by a version before the counts key
  for (let i = 0; i < 5; i++) await rig.client.enqueue('mail.send', { i }, { queue: 'mail' });
  await waitFor(async () => (await rig.inspector.queue('mail')).latencyMs >= 20, 'the oldest pending task to age');
  const sampled = await sampleQueueScript(rig.client.redis, k, 86_400_000);
  expect(sampled).toMatchObject({ sampled: true, depth: 5 });
  expect((sampled as { latencyMs: number }).latencyMs).toBeGreaterThanOrEqual(20);
  expect(await sampleQueueScript(rig.client.redis, k, 86_400_000)).toEqual({ sampled: false }); // the minute is sampled

  const s = rig.server({ queues: ['mail'], backoff: () => 60_000 });
  const done = deferred();
  let n = 0;
  s.handle('mail.send', (t) => {
    const i = (t.payload as { i: number }).i;
    if (i === 0) throw new NonRetryableError('mailbox full');
    if (i === 1) throw new Error('try later');
    if (++n === 3) done.resolve();
  });
  await s.start();
  await done.promise;
  const h = await waitFor(async () => {
    const x = await rig.inspector.queueHistory('mail', 'hour');
    const last = x.points.at(-1)!;
    // the minute may turn between two of the acts: add the last two points
    const two = x.points
      .slice(-2)
      .reduce((a, p) => ({ processed: a.processed + p.processed, failed: a.failed + p.failed }), { processed: 0, failed: 0 });
    return two.processed === 3 && two.failed === 2 && last ? x : undefined;
  }, 'the minute counts');
  expect(h).toMatchObject({ queue: 'mail', window: 'hour', stepMs: 60_000 });
  expect(h.points).toHaveLength(60);
  const withSample = h.points.filter((p) => p.depth !== undefined);
  expect(withSample.map((p) => p.depth)).toEqual([5]);
  const day = await rig.inspector.queueHistory('mail', 'day');
  expect(day.points).toHaveLength(24);
  expect(day.points.slice(-2).reduce((a, p) => a + p.processed, 0)).toBe(3);
  expect(day.points.some((p) => p.depth === 5)).toBe(true);
  const q = await rig.inspector.queue('mail');
  expect(q.processedToday).toBe(3 + 5);
  expect(q.failedToday).toBe(2);
  const fleet = await rig.inspector.history('hour');
  expect(fleet.queues.map((x) => x.queue)).toEqual(['mail']);
  expect(fleet.total.reduce((a, p) => a + p.processed, 0)).toBe(3);
  await expect(rig.inspector.history('week' as 'hour')).rejects.toThrow(/window: expected one of hour, day, got "week"/);
  await s.shutdown();

  // the CLI: chronos stats --history (the total, a table per point and a sparkline per queue), --queue, --window day, --json
  const { chronos, json } = cliRunner(() => rig.namespace);
  const text = await chronos('stats', '--history');
  expect(text.code).toBe(0);
  expect(text.out).toMatch(/^All queues · per minute, last 60 minutes/);
  expect(text.out).toMatch(/│ mail +│ 3 +│ 2 +│ [▁-█]{60} │ [▁-█]{60} │/);
  const one = await json<{ queue: string; points: { processed: number; depth?: number }[] }>(
    'stats',
    '--history',
    '--queue',
    'mail',
    '--window',
    'day',
  );
  expect(one.points).toHaveLength(24);
  expect(one.points.reduce((a, p) => a + p.processed, 0)).toBe(3);
  expect((await chronos('stats', '--history', '--window', 'week')).err).toBe('error: --window: expected hour or day, got "week"\n');
  expect((await chronos('stats', '--history', '--queue', 'nope')).err).toMatch(/Queue "nope" not found/);
});

test("the depth sampled counts the tasks waiting in a grouped queue's groups, as its pending does (trial 15: 0 under pending 6)", async () => {
  const k = new QueueKeys(rig.namespace, 'imports');
  for (let i = 0; i < 6; i++) await rig.client.enqueue('import', { i }, { queue: 'imports', group: `tenant-${i % 2}` });
  await rig.client.enqueueBulk([{ type: 'import', payload: { i: 6 }, options: { queue: 'imports', group: 'tenant-2' } }]); // the bulk path too
  await rig.client.enqueue('import', { i: 7 }, { queue: 'imports' }); // ungrouped: in the stream
  expect((await rig.inspector.queue('imports')).pending).toBe(8);
  expect(await sampleQueueScript(rig.client.redis, k, 86_400_000)).toMatchObject({ sampled: true, depth: 8 });
  const last = (await rig.inspector.queueHistory('imports', 'hour')).points.filter((p) => p.depth !== undefined);
  expect(last.map((p) => p.depth)).toEqual([8]);
});

test('the counts cost no command of their own per task: one BITFIELD per ack script, in place of the day counter (INFO commandstats, private redis-server)', async () => {
  const r = await PrivateRedis.start();
  const admin = new Redis(r.url);
  const client = new QueueClient({ connection: r.url, namespace: 'cmds' });
  const server = new ChronosServer({ connection: r.url, namespace: 'cmds', concurrency: 1, logger: rig.logger });
  try {
    const n = 200;
    await client.enqueueBulk(Array.from({ length: n }, (_, i) => ({ type: 'noop', payload: { i } })));
    let done = 0;
    const all = deferred();
    server.handle('noop', () => void (++done === n && all.resolve()));
    const calls = async () => {
      const text = (await admin.info('commandstats')) as string;
      return Object.fromEntries([...text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1], Number(m[2])]));
    };
    await admin.config('RESETSTAT');
    await server.start();
    await all.promise;
    await waitFor(
      async () => decodeDays(await admin.getBuffer(new QueueKeys('cmds', 'default').counts), engineTime.now(), 1)[0][0] === n,
      'the acks',
    );
    const c = await calls();
    expect(c.incrby ?? 0).toBe(0); // the day counter of before
    expect(c.xack).toBeGreaterThan(0);
    // one BITFIELD per ack script (XACK once per plain batch), and a few more only when a minute, hour or day turns
    expect(c.bitfield).toBeGreaterThanOrEqual(c.xack);
    expect(c.bitfield).toBeLessThanOrEqual(c.xack + 6);
  } finally {
    await server.shutdown();
    await client.close();
    admin.disconnect();
    await r.kill();
  }
});
