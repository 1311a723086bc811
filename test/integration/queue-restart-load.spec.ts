// Redis restarts whose data takes seconds to load (issue 25, the chaos run at 10,000 runtime
// schedules, seed 2: triggers held across a Redis SIGTERM ran again on other replicas). While Redis
// loads, it accepts connections and answers INFO with `loading:1` and an estimate of the time left,
// which is wildly high in the first whole second of the load. A worker whose connection came back
// during the load waited that long (ioredis's ready check, up to 10 s) before it could ack, renew or
// resubscribe: it looked dead to a server started after the restart, whose tasks it then ran again.
import { beforeEach, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { GlobalKeys, QueueKeys } from '../../lib/core/redis/keys.js';
import { killAllChildren } from '../helpers/children.js';
import { startWorker, useWorkerRig } from '../helpers/worker-rig.js';
import { countBy, readRecords } from '../helpers/records.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

const rig = useWorkerRig('load');
let ns: string;
let redis: Redis;
beforeEach(() => {
  ({ ns, redis } = rig);
});

let priv: PrivateRedis | undefined;
let dir: string | undefined;
let proxy: TcpProxy | undefined;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  await killAllChildren();
  await proxy?.close();
  await priv?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
  priv = proxy = dir = undefined;
});

/** `--key-load-delay` (µs per key, a Redis test setting) and the process-events interval: a load of ~`keys` × 0.25 ms that answers INFO throughout. */
const SLOW_LOAD = ['--key-load-delay', '150', '--loading-process-events-interval-bytes', '1024'];

/** A private Redis with `keys` filler keys (so its snapshot loads slowly) and W1 ("the holder") running 4 slow tasks, reaching it through a proxy. */
async function holderWithTasks(keys: number, w1Env: Record<string, number | string> = {}) {
  dir = mkdtempSync(join(tmpdir(), 'chronos-load-'));
  const r = (priv = await PrivateRedis.start(['--dir', dir]));
  const raw = new Redis(r.url);
  closers.push(() => raw.quit());
  for (let i = 0; i < keys; i += 1000) {
    const p = raw.pipeline();
    for (let k = i; k < Math.min(keys, i + 1000); k++) p.set(`filler:${k}`, 'x');
    await p.exec();
  }
  const p = (proxy = await TcpProxy.start({ host: '127.0.0.1', port: r.port }));
  await startWorker(rig, 'W1', { CHRONOS_URL: p.url, CONCURRENCY: 4, ...w1Env });
  await waitFor(async () => (await raw.zcard(new GlobalKeys(ns).live)) === 1, 'W1 present');
  const pclient = new QueueClient({ connection: r.url, namespace: ns });
  closers.push(() => pclient.close());
  // they run through the restart: W1 holds them until well after Redis is back
  await pclient.enqueueBulk(Array.from({ length: 4 }, (_, i) => ({ type: 'slow', payload: { ms: 15_000, i } })));
  await waitFor(async () => countBy(await readRecords(redis, rig.recordKey), 'start').size === 4, 'W1 to start all 4');
  return r;
}

/** Every task done; each started once (nobody took W1's tasks), and nothing was reclaimed. */
async function expectEachRanOnce(r: PrivateRedis): Promise<void> {
  await waitFor(async () => countBy(await readRecords(redis, rig.recordKey), 'done').size === 4, 'all 4 done', 40_000);
  const recs = await readRecords(redis, rig.recordKey);
  expect([...countBy(recs, 'start').values()]).toEqual([1, 1, 1, 1]);
  const after = new Redis(r.url);
  closers.push(() => after.quit());
  expect(await after.zcard(new QueueKeys(ns, 'default').reclaimed)).toBe(0);
}

test('a worker that reconnects while Redis loads its data is back once Redis answers: a server started after the restart takes none of its tasks', async () => {
  // W1 reconnects at once (attempts 50 ms apart), into a proxy that holds its bytes until the test lets them through
  const r = await holderWithTasks(15_000, { RETRY_MS: 50 });
  proxy!.blackhole();
  await r.stopSaving();
  // the load starts late in a wall-clock second, so that its first whole second passes while little is loaded (Redis's ETA: elapsed s × left / loaded)
  while (Date.now() % 1000 < 700) await new Promise((res) => setTimeout(res, 5)); // the phase of the wall clock is the point
  r.startFrom(dir!, SLOW_LOAD);
  const probe = new Redis(r.url, { enableReadyCheck: false, retryStrategy: () => 20 });
  closers.push(async () => probe.disconnect());
  const info = await waitFor(async () => {
    const text = await probe.info('persistence');
    return /loading:1/.test(text) ? text : undefined;
  }, 'Redis to be loading');
  const startedSec = Number(/loading_start_time:(\d+)/.exec(info)![1]);
  // W1's ready check (INFO) reaches Redis just after the load's first whole second: Redis then says ~10× the time left
  while (Date.now() < (startedSec + 1) * 1000 + 20) await new Promise((res) => setTimeout(res, 5)); // the instant is the point
  proxy!.heal();
  await r.answering();
  // W2 starts after the restart: it judges W1 once its reconnect grace is over
  await startWorker(rig, 'W2', { CHRONOS_URL: r.url, CONCURRENCY: 4 });
  await expectEachRanOnce(r);
});

test('a server started just after a Redis restart that loaded its data for seconds waits its reconnect grace: a worker back 3 s after Redis answered keeps its tasks', async () => {
  // ~6 s of load: Redis's uptime (which counts it) is past the 5 s grace as soon as it answers
  const r = await holderWithTasks(26_000);
  proxy!.blackhole(); // W1's path to Redis stays silent until 3 s after Redis answers (a reconnect backoff, a slow network)
  await r.stopSaving();
  r.startFrom(dir!, SLOW_LOAD);
  await r.answering();
  const answeredAt = Date.now();
  await startWorker(rig, 'W2', { CHRONOS_URL: r.url, CONCURRENCY: 4 });
  while (Date.now() < answeredAt + 3000) await new Promise((res) => setTimeout(res, 20)); // W1's late return is the point
  proxy!.heal();
  await expectEachRanOnce(r);
});
