// A worker's loops log the Redis they lost and why: with Redis gone, ioredis rejects commands with
// "Reached the max retries per request limit (which is 20)…", which names neither the address nor
// the cause. Before, that was the whole log line (trial19: a killed redis-server); now the line names
// `Redis at host:port/db` and the client's last connection error (connect ECONNREFUSED …).
// And the process exits by itself once its owner stopped the server (or the scheduler) of a Redis
// that is gone: before, the stop gave up waiting on Redis as it should, but the loops stopped after
// the one whose stop still waited (the fetch loop, on a blocking read that a reconnecting ioredis
// client never settles) went on arming their timers, and the process never ended.
import { killAllChildren, startChild } from '../helpers/children.js';
import { newNamespace } from '../helpers/redis.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { within } from '../helpers/wait.js';

afterEach(() => killAllChildren());

test('a loop failing because Redis is gone logs its address and last connection error; after the shutdown the process exits', async () => {
  const redis = await PrivateRedis.start();
  const child = await startChild('redis-gone', 'server', { REDIS_URL: redis.url, NS: newNamespace('down-logs'), ROLE: 'server' });
  await redis.kill();
  child.proc.send({ stop: true });
  const { line } = await child.message((m) => m.event === 'failing');
  expect(line).toContain(`Redis at 127.0.0.1:${redis.port}/0`);
  expect(line).toMatch(/last connection error: .*ECONNREFUSED/);
  await child.message((m) => m.event === 'stopped');
  const exit = await within(child.exited, 20_000, 'the process to exit by itself after shutdown()');
  expect(exit.code).toBe(0);
}, 60_000);

test('a scheduler whose Redis is gone: after stop() the process exits', async () => {
  const redis = await PrivateRedis.start();
  const child = await startChild('redis-gone', 'scheduler', { REDIS_URL: redis.url, NS: newNamespace('down-logs'), ROLE: 'scheduler' });
  await redis.kill();
  child.proc.send({ stop: true });
  await child.message((m) => m.event === 'stopped');
  const exit = await within(child.exited, 20_000, 'the process to exit by itself after stop()');
  expect(exit.code).toBe(0);
}, 60_000);
