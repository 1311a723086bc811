// The queue-integrity issue, faults 4, 6 and 7 (core): against private redis-servers that are
// SIGSTOPped or configured to evict. A task that ends during a short outage runs once; a Redis that
// may evict is reported at start (or refused); a start that fails closes what it opened.
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { ChronosServer, SHUTDOWN_REDIS_GRACE_MS, type ServerOptions } from '../../lib/core/worker/server.js';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { decodeDays } from '../../lib/core/admin/history.js';
import { engineTime } from '../../lib/core/runtime/time.js';
import { DEFAULTS } from '../../lib/core/runtime/defaults.js';
import { Scheduler, type SchedulerOptions } from '../../lib/core/scheduler/scheduler.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

let redis: PrivateRedis | undefined;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  redis?.resume();
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  await redis?.kill();
  redis = undefined;
});

test('fault 4: a task that ends while Redis is SIGSTOPped for 5 s is acked once Redis answers again: it runs once', async () => {
  const r = (redis = await PrivateRedis.start());
  const logger = recordingLogger();
  // past the reconnect grace of a Redis just started (no idle sweep in it): the sweep's commands during the
  // stall are what drops the socket, so the ack fails and is retried (the path under test)
  const up = new QueueClient({ connection: r.url }).redis;
  closers.push(() => up.quit());
  await waitFor(
    async () => Number(/uptime_in_seconds:(\d+)/.exec(await up.info('server'))![1]) * 1000 >= DEFAULTS.livenessReconnectGraceMs,
    'Redis past its reconnect grace',
    20_000,
  );
  // fail fast instead of waiting (README: maxRetriesPerRequest), and drop a socket that gets no answer for 2 s
  // (more than the 1 s blocking reads take): during the stall commands fail instead of waiting in the socket
  const connection = { host: '127.0.0.1', port: r.port, maxRetriesPerRequest: 1, socketTimeout: 2000 };
  const server = new ChronosServer({ connection, visibilityTimeout: 8000, recoverInterval: 200, logger });
  closers.push(() => server.shutdown());
  let runs = 0;
  server.handle('report', async () => {
    if (++runs > 1) return;
    r.pause();
    setTimeout(() => r.resume(), 5000);
    await new Promise((resolve) => setTimeout(resolve, 3000)); // the task's work ends 3 s into the outage
  });
  await server.start();
  const client = new QueueClient({ connection: r.url });
  closers.push(() => client.close());
  await client.enqueue('report', {});
  const keys = new QueueKeys('chronos', 'default');
  const check = new QueueClient({ connection: r.url }).redis;
  closers.push(() => check.quit());
  await waitFor(
    async () => decodeDays(await check.getBuffer(keys.counts), engineTime.now(), 1)[0][0] === 1 && (await check.xlen(keys.stream)) === 0,
    'the task to be acked',
    30_000,
  );
  expect(runs).toBe(1);
  expect(logger.lines.some((l) => /Could not ack/.test(l.message))).toBe(true); // the outage was seen
}, 60_000);

test('fault 6: maxmemory-policy allkeys-lru: a warning at start naming the policy; requireNoEviction refuses and closes', async () => {
  const r = (redis = await PrivateRedis.start(['--maxmemory-policy', 'allkeys-lru']));
  const logger = recordingLogger();
  const server = new ChronosServer({ connection: r.url, logger });
  closers.push(() => server.shutdown());
  await server.start();
  const warning = logger.lines.find((l) => l.level === 'warn' && /maxmemory-policy/.test(l.message));
  expect(warning?.message).toMatch(/allkeys-lru/);
  expect(warning?.message).toMatch(/noeviction/);

  const check = new Redis(r.url);
  closers.push(() => check.quit());
  const connections = async () => ((await check.call('CLIENT', 'LIST')) as string).trim().split('\n').length;
  const before = await connections(); // ours and the running server's
  const strict = new ChronosServer({ connection: r.url, logger, requireNoEviction: true } as ServerOptions);
  const scheduler = new Scheduler({ connection: r.url, logger, requireNoEviction: true } as SchedulerOptions);
  await expect(strict.start()).rejects.toThrow(/maxmemory-policy is allkeys-lru/);
  await expect(scheduler.start()).rejects.toThrow(/maxmemory-policy is allkeys-lru/);
  // fault 7: a failed start closes what it opened
  await waitFor(async () => (await connections()) === before, 'the connections of the failed starts to close');
});

test('fault 7: a worker and a scheduler whose start fails (nothing answers) close their connections: none comes back', async () => {
  const r = (redis = await PrivateRedis.start());
  await r.kill(); // nothing listens on the port any more
  const server = new ChronosServer({ connection: { host: '127.0.0.1', port: r.port }, logger: recordingLogger() });
  const scheduler = new Scheduler({ connection: { host: '127.0.0.1', port: r.port }, logger: recordingLogger() });
  closers.push(
    () => server.shutdown(),
    () => scheduler.stop(),
  );
  const results = await Promise.allSettled([server.start(), scheduler.start()]);
  expect(results.map((x) => x.status)).toEqual(['rejected', 'rejected']);
  await r.restart(); // Redis is back on the same port: a client still open reconnects within its retry delay (<= 2 s)
  const check = new Redis(r.url);
  closers.push(() => check.quit());
  // a window in which nothing may happen: no client of the failed start reconnects
  // eslint-disable-next-line local/no-fixed-sleep -- the window itself is the point (an absence has no event)
  for (const until = Date.now() + 3000; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 200))) {
    expect(((await check.call('CLIENT', 'LIST')) as string).trim().split('\n')).toHaveLength(1); // ours only
  }
}, 40_000);

test('a shutdown while Redis does not answer ends within shutdownTimeout + the Redis grace; the task it held stays pending for recovery', async () => {
  const r = (redis = await PrivateRedis.start());
  const logger = recordingLogger();
  const server = new ChronosServer({ connection: r.url, shutdownTimeout: 1000, logger });
  closers.push(() => server.shutdown());
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  let aborted = false;
  server.handle('report', async (task) => {
    started();
    await new Promise((resolve) => task.signal.addEventListener('abort', resolve));
    aborted = true;
  });
  await server.start();
  const client = new QueueClient({ connection: r.url });
  closers.push(() => client.close());
  await client.enqueue('report', {});
  await running;
  r.pause(); // a hung Redis: nothing answers, the sockets stay open
  const t0 = Date.now();
  const stopped = server.shutdown().then(() => Date.now() - t0);
  // before the bound, the drain's commands waited for Redis: the shutdown ended only once it answered again
  const tookMs = await waitFor(() => stopped, {
    what: 'the shutdown to end without Redis',
    timeoutMs: 1000 + SHUTDOWN_REDIS_GRACE_MS + 6000,
  });
  expect(tookMs).toBeGreaterThanOrEqual(1000 + SHUTDOWN_REDIS_GRACE_MS - 100);
  expect(aborted).toBe(true);
  expect(logger.lines.some((l) => l.level === 'warn' && /^Shutdown: Redis did not answer within 6000 ms/.test(l.message))).toBe(true);
  r.resume();
  // what the server held is still pending in Redis, on its consumer: another server's recoverer takes it after the visibility timeout
  const keys = new QueueKeys('chronos', 'default');
  const check = new QueueClient({ connection: r.url }).redis;
  closers.push(() => check.quit());
  const [count] = (await check.xpending(keys.stream, CONSUMER_GROUP)) as [number, ...unknown[]];
  expect(count).toBe(1);
  const [[entryId]] = (await check.xrange(keys.stream, '-', '+')) as [string, string[]][];
  expect(((await check.xpending(keys.stream, CONSUMER_GROUP, entryId, entryId, 1)) as [string, string][])[0][1]).toBe(server.id);
});
