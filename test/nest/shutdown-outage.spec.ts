// A whole Nest app's close while its Redis does not answer (SIGSTOP: the sockets stay open, nothing
// is answered): the worker's drain, the scheduler's resignation of its shard leases, a console request
// in flight and the connections' quit must not hold app.close() past the shutdown's bound.
import { Injectable } from '@nestjs/common';
import { get } from 'node:http';
import { Redis } from 'ioredis';
import { ChronosClient, Interval, SchedulerService, TaskHandler, type Task } from '../../lib/index.js';
import { SHUTDOWN_REDIS_GRACE_MS } from '../../lib/core/runtime/shutdown.js';
import { QUIT_WAIT_MS } from '../../lib/core/redis/connection.js';
import { readShardLeases } from '../../lib/core/leadership/shards.js';
import { SchedulerKeys } from '../../lib/core/redis/keys.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { newNamespace } from '../helpers/redis.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { deferred, waitFor, within } from '../helpers/wait.js';

let app: ChronosTestApp | undefined;
let redis: PrivateRedis | undefined;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  redis?.resume();
  await app?.close().catch(() => {});
  app = undefined;
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  await redis?.kill();
  redis = undefined;
});

const running = deferred();

@Injectable()
class Work {
  /** Runs until the shutdown aborts it. */
  @TaskHandler('report')
  async report(task: Task) {
    running.resolve();
    await new Promise((resolve) => task.signal.addEventListener('abort', resolve));
  }
  @Interval('1s')
  beat() {}
}

const SHUTDOWN_TIMEOUT_MS = 1000;
const LEADER_TTL_MS = 5000;
/**
 * What app.close() may take while Redis does not answer: the roles stop together (the worker's drain
 * bound, shutdownTimeout + the Redis grace, is the longer), then their connections close all at once
 * (QUIT_WAIT_MS), then the client's connection (QUIT_WAIT_MS); plus 1 s for a loaded machine.
 */
const BOUND_MS = SHUTDOWN_TIMEOUT_MS + SHUTDOWN_REDIS_GRACE_MS + 2 * QUIT_WAIT_MS + 1000;

test('app.close() while Redis does not answer ends within shutdownTimeout + the Redis grace + the closes; no connection is left; the shard leases are free', async () => {
  const r = (redis = await PrivateRedis.start());
  const namespace = newNamespace('outage');
  app = await createChronosTestApp({
    providers: [Work],
    options: { connection: r.url, namespace, shutdownTimeout: SHUTDOWN_TIMEOUT_MS, leaderTtl: LEADER_TTL_MS, console: true },
    http: true,
  });
  const scheduler = app.get(SchedulerService);
  await waitFor(() => scheduler.shards.length === 16, 'the app to lead every shard');
  await app.get(ChronosClient).enqueue('report', {});
  await running.promise;
  const overview = `${app.url}/chronos/api/overview`;
  expect((await fetch(overview)).status).toBe(200);
  r.pause(); // a hung Redis: nothing answers, the sockets stay open
  // a console request in flight, waiting for Redis: the HTTP server's close waits for it. On a connection of its
  // own that ends with the answer (Connection: close): an idle keep-alive connection holds Node's server.close()
  // for its keepAliveTimeout (5 s), whatever Chronos does (Nest's forceCloseConnections is for that)
  const answered = new Promise<number | string>((resolve) => {
    get(overview, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', (err) => resolve(err.message));
  });
  const t0 = performance.now();
  const closed = app.close().then(() => Math.round(performance.now() - t0));
  // before the fix the close waited for Redis (the console request in flight), or took 18 s without one (the roles
  // one after the other, the scheduler's release waiting its lease TTL, each QUIT in turn)
  const tookMs = await within(closed, BOUND_MS + 5000, 'app.close() while Redis does not answer');
  expect(tookMs).toBeLessThanOrEqual(BOUND_MS);
  expect(await answered).toBe(503); // its Redis connection was closed under it: Redis unavailable (270eb1b)
  const warned = app.logger.messages('warn');
  expect(warned.some((m) => /^Shutdown: Redis did not answer within 6000 ms/.test(m))).toBe(true); // the worker
  expect(warned.some((m) => /^Shutdown: Redis did not answer within 5000 ms .*expire by their TTL/.test(m))).toBe(true); // the scheduler
  r.resume();
  const check = new Redis(r.url);
  closers.push(() => check.quit());
  // no connection of the app is left open (it would keep the process alive)
  expect(((await check.call('CLIENT', 'LIST')) as string).trim().split('\n')).toHaveLength(1); // ours only
  // the shard leases were not released (Redis did not answer): they expire by their TTL, and another instance takes them
  const [sec, micro] = await check.time();
  const redisNow = Number(sec) * 1000 + Math.floor(Number(micro) / 1000);
  const leases = await readShardLeases(check, new SchedulerKeys(namespace));
  expect(leases.every((l) => l.expiresAt <= redisNow + LEADER_TTL_MS)).toBe(true);
  const other = await createChronosTestApp({ options: { connection: r.url, namespace, leaderTtl: LEADER_TTL_MS, worker: false } });
  closers.push(() => other.close());
  const next = other.get(SchedulerService);
  await waitFor(() => next.shards.length === 16, { what: 'another instance to lead every shard', timeoutMs: LEADER_TTL_MS + 5000 });
}, 60_000);
