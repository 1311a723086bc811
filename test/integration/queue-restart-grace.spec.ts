// A fault the chaos run found (issue 25, seed 2 at 10,000 runtime schedules): two tasks that finished
// as Redis was restarted ran again on another worker 3.5 s after Redis answered, though Redis was down
// 2.4 s, less than the 5 s visibility timeout. An entry's idle time is Redis's: it ran on through the
// outage, while nobody could renew a claim or write an ack, and the holder's late ack (behind its
// reconnect and its backoff) came after another server's idle sweep had reclaimed the entry. Liveness
// already judged no server in the reconnect grace; the idle sweep now waits it out too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

let redis: PrivateRedis | undefined;
let dir: string | undefined;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  await redis?.kill();
  redis = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('after a Redis restart, an entry idle past the visibility timeout stays with its holder through the reconnect grace: its late ack wins', async () => {
  dir = mkdtempSync(join(tmpdir(), 'chronos-grace-'));
  const r = (redis = await PrivateRedis.start(['--dir', dir]));
  const client = new QueueClient({ connection: r.url });
  closers.push(() => client.close());
  const first = await client.enqueue('report', { n: 1 });
  const second = await client.enqueue('report', { n: 2 });
  const keys = new QueueKeys('chronos', 'default');
  const raw = new Redis(r.port, '127.0.0.1', { lazyConnect: false });
  closers.push(() => raw.quit());
  // another server ("holder", on the other side of the outage) holds both entries, idle past any visibility timeout
  await raw.xgroup('CREATE', keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM').catch(() => {});
  const read = (await raw.xreadgroup('GROUP', CONSUMER_GROUP, 'holder', 'COUNT', 2, 'STREAMS', keys.stream, '>')) as [
    string,
    [string, string[]][],
  ][];
  const [firstEntry, secondEntry] = read[0][1].map(([id]) => id);
  await raw.xclaim(keys.stream, CONSUMER_GROUP, 'holder', 0, firstEntry, secondEntry, 'IDLE', 60_000, 'JUSTID');
  await r.restartKeepingData(dir);

  const runs: string[] = [];
  const server = new ChronosServer({ connection: r.url, visibilityTimeout: 5000, recoverInterval: 200, logger: recordingLogger() });
  closers.push(() => server.shutdown());
  server.handle<{ n: number }>('report', (task) => {
    runs.push(task.payload.n === 1 ? first.id : second.id);
  });
  await server.start();
  const uptimeMs = async () => Number(/uptime_in_seconds:(\d+)/.exec(await raw.info('server'))![1]) * 1000;
  // the holder's ack of the first task lands 2 s after Redis came back (its reconnect, then its backoff)
  await waitFor(async () => (await uptimeMs()) >= 2000, 'Redis up for 2 s', 10_000);
  expect(await raw.xack(keys.stream, CONSUMER_GROUP, firstEntry)).toBe(1); // still pending: nobody reclaimed it
  // the second task's holder never comes back: its entry is reclaimed once the grace is over, and runs here
  await waitFor(() => runs.includes(second.id), 'the unacked task to be reclaimed and run', 20_000);
  expect(runs).toEqual([second.id]);
}, 60_000);
