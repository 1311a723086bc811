// The prebuilt ack (lib/core/redis/commands/ack-command.ts) on a private Redis whose script cache is
// flushed (SCRIPT FLUSH) or lost (a restart): the first ack on a connection is an EVAL of ack.lua, later
// ones EVALSHA; an EVALSHA answered NOSCRIPT is sent again as an EVAL, and each entry is acked (and
// counted) once. A worker whose Redis flushed its scripts between two batches acks the second batch.
import { Redis } from 'ioredis';
import { ackScript } from '../../lib/core/redis/commands/queue.js';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { scriptText } from '../../lib/core/redis/scripts.js';
import { entryFields } from '../../lib/core/redis/protocol.js';
import { STATS } from '../../lib/core/redis/protocol-storage.js';
import { QueueClient } from '../../lib/core/queue/client.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { deferred, recordingLogger, waitFor } from '../helpers/wait.js';
import { closeMonitor, openMonitor } from '../helpers/monitor.js';

let redis: PrivateRedis | undefined;
const closers: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await Promise.resolve(close()).catch(() => {});
  await redis?.kill();
  redis = undefined;
});

function connect(url: string): Redis {
  const r = new Redis(url);
  closers.push(() => r.disconnect());
  return r;
}

/** The EVAL/EVALSHA calls of ack.lua the private Redis runs from now on (MONITOR): 'eval' or 'evalsha' each. */
async function watchAcks(url: string): Promise<string[]> {
  const { lua, sha } = scriptText('ack');
  // MONITOR shows the source escaped (newlines as \n): told by its first line
  const header = lua.slice(0, lua.indexOf('\n'));
  const seen: string[] = [];
  const monitor = await openMonitor(url);
  closers.push(() => closeMonitor(monitor));
  monitor.on('monitor', (_time: string, args: string[]) => {
    const name = String(args[0]).toLowerCase();
    if ((name === 'evalsha' && args[1] === sha) || (name === 'eval' && String(args[1]).startsWith(header))) seen.push(name);
  });
  return seen;
}

/** `n` entries added to the queue's stream and read by consumer `c`: their ids, pending for `c`. */
async function pendingEntries(r: Redis, keys: QueueKeys, n: number): Promise<string[]> {
  await r.xgroup('CREATE', keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM').catch(() => {});
  for (let i = 0; i < n; i++) await r.xadd(keys.stream, '*', ...entryFields(`t${i}`, 'x', '{}', '{}'));
  const reply = (await r.xreadgroup('GROUP', CONSUMER_GROUP, 'c', 'COUNT', n, 'STREAMS', keys.stream, '>')) as [
    string,
    [string, string[]][],
  ][];
  return reply[0][1].map(([id]) => id);
}

test('the first ack on a connection is an EVAL, then EVALSHA; after SCRIPT FLUSH an EVALSHA refused is sent again as EVAL, each entry acked once', async () => {
  const r = (redis = await PrivateRedis.start());
  const admin = connect(r.url);
  const worker = connect(r.url);
  const keys = new QueueKeys('ns', 'q');
  const seen = await watchAcks(r.url);
  const ack = (ids: string[]) => ackScript(worker, keys, { plain: ids, flagged: [], counterTtlMs: 60_000 });

  expect(await ack(await pendingEntries(admin, keys, 3))).toEqual({ acked: 3, reclaimed: [], gone: [] });
  expect(await ack(await pendingEntries(admin, keys, 2))).toEqual({ acked: 2, reclaimed: [], gone: [] });
  await admin.script('FLUSH');
  expect(await ack(await pendingEntries(admin, keys, 4))).toEqual({ acked: 4, reclaimed: [], gone: [] });
  expect(await ack(await pendingEntries(admin, keys, 1))).toEqual({ acked: 1, reclaimed: [], gone: [] });
  await admin.ping(); // MONITOR has seen everything before it
  expect(seen).toEqual(['eval', 'evalsha', 'evalsha', 'eval', 'evalsha']);

  expect(await admin.xlen(keys.stream)).toBe(0);
  expect(await admin.xpending(keys.stream, CONSUMER_GROUP)).toEqual([0, null, null, null]);
  // counted once each: the processed counts of the day ring (stats.lua; a fresh Redis has no other day) add up to 10
  const slots = [];
  for (let day = 0; day < STATS.days; day++) slots.push('GET', 'u32', `#${STATS.dayBase + day * STATS.fields + STATS.processed}`);
  const counts = (await admin.call('BITFIELD', keys.counts, ...slots)) as number[];
  expect(counts.reduce((a, b) => a + b, 0)).toBe(10);
});

test('a worker whose Redis flushed its scripts between two batches acks the second batch, each task run once', async () => {
  const r = (redis = await PrivateRedis.start());
  const admin = connect(r.url);
  const logger = recordingLogger();
  const server = new ChronosServer({ connection: r.url, concurrency: 5, logger });
  closers.push(() => server.shutdown());
  const runs = new Map<number, number>();
  const hold = deferred();
  server.handle<{ n: number; held?: boolean }>('t', async (task) => {
    runs.set(task.payload.n, (runs.get(task.payload.n) ?? 0) + 1);
    if (task.payload.held) await hold.promise;
  });
  const client = new QueueClient({ connection: r.url });
  closers.push(() => client.close());
  const keys = new QueueKeys('chronos', 'default');
  await server.start();

  for (let n = 0; n < 5; n++) await client.enqueue('t', { n });
  await waitFor(async () => (await admin.xlen(keys.stream)) === 0, 'the first batch acked');
  for (let n = 5; n < 10; n++) await client.enqueue('t', { n, held: true });
  await waitFor(() => runs.size === 10, 'the second batch started');
  const seen = await watchAcks(r.url);
  await admin.script('FLUSH');
  hold.resolve();
  await waitFor(async () => (await admin.xlen(keys.stream)) === 0, 'the second batch acked');
  expect(await admin.xpending(keys.stream, CONSUMER_GROUP)).toEqual([0, null, null, null]);
  // the flushed cache had no ack.lua: an EVAL brought it back (at once on a connection that had not sent it, else after
  // an EVALSHA refused: the first test)
  expect(seen).toContain('eval');
  expect([...runs.values()]).toEqual(new Array(10).fill(1));
  expect(logger.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
});
