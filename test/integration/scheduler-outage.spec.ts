// The queue-integrity issue, fault 8: when an instance's declarations vanish from the schedule
// registry, the message says why (their TTL ran out during an outage, or Redis restarted without the
// data), and an instance declares again as soon as its connection is back. A leader's stop during an
// outage is bounded.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { SchedulerKeys } from '../../lib/core/redis/keys.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { recordingLogger, waitFor, within } from '../helpers/wait.js';
import { readShardLeases } from '../../lib/core/leadership/shards.js';
import { QUIT_WAIT_MS } from '../../lib/core/redis/connection.js';
import { SHUTDOWN_REDIS_GRACE_MS } from '../../lib/core/runtime/shutdown.js';
import { storedJson } from '../helpers/registry.js';

let redis: PrivateRedis | undefined;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  redis?.resume();
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  await redis?.kill();
  redis = undefined;
});

const keys = new SchedulerKeys('chronos');
const lostLine = (logger: ReturnType<typeof recordingLogger>) =>
  logger.lines.find((l) => /lost this instance's declarations/.test(l.message));

/** 1 when instance i-1's declaration names `schedule` (its digest's names set holds it). */
async function declares(check: Redis, schedule: string): Promise<number> {
  const digest = await check.get(keys.declaration('i-1'));
  return digest === null ? 0 : check.sismember(keys.names(digest), schedule);
}

async function startScheduler(r: PrivateRedis, heartbeatInterval: number) {
  const logger = recordingLogger();
  const scheduler = new Scheduler({ connection: r.url, instanceId: 'i-1', eligible: false, heartbeatInterval, logger });
  scheduler.register({ name: 'nightly', spec: '0 3 * * *', type: 'report' });
  closers.push(() => scheduler.stop());
  await scheduler.start();
  const check = new Redis(r.url, { maxRetriesPerRequest: null });
  closers.push(() => check.quit());
  return { logger, check };
}

test('fault 8: declarations that expired while Redis was stalled longer than their TTL: the message says so, not "restarted"', async () => {
  const r = (redis = await PrivateRedis.start());
  const { logger, check } = await startScheduler(r, 200); // declarations live 3 × 200 ms
  expect(await check.exists(keys.declaration('i-1'))).toBe(1);
  r.pause();
  await new Promise((resolve) => setTimeout(resolve, 2000)); // the outage: 2 s, over the 600 ms TTL
  r.resume();
  const line = await waitFor(() => lostLine(logger), 'the lost-declarations warning');
  expect(line.message).toMatch(/TTL/);
  expect(line.message).not.toMatch(/restarted/);
  await waitFor(async () => (await declares(check, 'nightly')) === 1, 'the declarations to be published again');
});

test('fault 8: after a Redis restart without persistence an instance declares again as soon as it reconnects', async () => {
  const r = (redis = await PrivateRedis.start());
  // a heartbeat a minute apart: only the reconnect can publish the declarations again within the wait below
  const { logger, check } = await startScheduler(r, 60_000);
  await r.restart(); // empty
  const declared = async () => (await declares(check, 'nightly')) === 1 && (await storedJson(check, 'chronos', 'nightly')) !== null;
  await waitFor(declared, 'the declarations to be published again', 15_000);
  expect(lostLine(logger)?.message).toMatch(/restarted/);
}, 30_000);

test('fault 8: a Redis restart that kept its data, after an outage longer than the TTL: the message says the TTL ran out, not "without this data"', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chronos-outage-'));
  closers.push(async () => rmSync(dir, { recursive: true, force: true }));
  const r = (redis = await PrivateRedis.start(['--dir', dir]));
  const { logger, check } = await startScheduler(r, 200); // declarations live 3 × 200 ms
  // the declaration's expiry (absolute, ms) as the last heartbeat before the stop set it; a beat in flight adds one more
  const expiresAt = Number(await check.call('PEXPIRETIME', keys.declaration('i-1'))) + 200;
  await r.stopSaving(); // SHUTDOWN SAVE: the snapshot holds the registry and the declaration
  // Redis and this test share the machine's clock: the declaration is expired when the snapshot loads
  await waitFor(() => Date.now() > expiresAt, "the declaration's expiry to pass while Redis is down");
  r.startFrom(dir);
  await r.answering();
  expect(await storedJson(check, 'chronos', 'nightly')).not.toBeNull(); // the data was kept
  const line = await waitFor(() => lostLine(logger), 'the lost-declarations warning', 15_000);
  expect(line.message).toMatch(/TTL/);
  expect(line.message).not.toMatch(/without this data/);
  await waitFor(async () => (await declares(check, 'nightly')) === 1, 'the declarations to be published again');
}, 30_000);

test("a leader's stop while Redis does not answer ends within the Redis grace + a close, whatever its leaderTtl; its leases then expire by their TTL", async () => {
  const r = (redis = await PrivateRedis.start());
  const logger = recordingLogger();
  // a long lease: before the bound, the release waited for it (within leaderTtl), then each connection's QUIT in turn
  const scheduler = new Scheduler({ connection: r.url, instanceId: 'i-1', leaderTtl: 20_000, logger });
  closers.push(() => scheduler.stop());
  await scheduler.start();
  await waitFor(() => scheduler.shards.length === 16, 'the scheduler to lead every shard');
  r.pause(); // a hung Redis: nothing answers, the sockets stay open
  const t0 = performance.now();
  const tookMs = await within(
    scheduler.stop().then(() => Math.round(performance.now() - t0)),
    30_000,
    'the stop without Redis',
  );
  expect(tookMs).toBeGreaterThanOrEqual(SHUTDOWN_REDIS_GRACE_MS - 100);
  expect(tookMs).toBeLessThanOrEqual(SHUTDOWN_REDIS_GRACE_MS + QUIT_WAIT_MS + 1000); // + 1 s for a loaded machine
  expect(logger.lines.some((l) => l.level === 'warn' && /^Shutdown: Redis did not answer within 5000 ms/.test(l.message))).toBe(true);
  r.resume();
  const check = new Redis(r.url);
  closers.push(() => check.quit());
  expect(((await check.call('CLIENT', 'LIST')) as string).trim().split('\n')).toHaveLength(1); // ours only: none of the scheduler's is left
  // released (the release Redis had buffered runs after SIGCONT) or left to expire by their TTL: nothing else
  const [sec, micro] = await check.time();
  const redisNow = Number(sec) * 1000 + Math.floor(Number(micro) / 1000);
  for (const lease of await readShardLeases(check, keys)) {
    expect(lease.instance).toBe('i-1');
    expect(lease.expiresAt).toBeLessThanOrEqual(redisNow + 20_000);
  }
}, 40_000);
