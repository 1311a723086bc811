// A worker's loops log the Redis they lost and why: with Redis gone, ioredis rejects commands with
// "Reached the max retries per request limit (which is 20)…", which names neither the address nor
// the cause. Before, that was the whole log line (trial19: a killed redis-server); now the line names
// `Redis at host:port/db` and the client's last connection error (connect ECONNREFUSED …).
import { ChronosServer } from '../../lib/core/index.js';
import type { ChronosLogger } from '../../lib/core/index.js';
import { newNamespace } from '../helpers/redis.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { deferred } from '../helpers/wait.js';

test('a loop failing because Redis is gone logs its address and last connection error', async () => {
  const redis = await PrivateRedis.start();
  const firstFailure = deferred<string>();
  const logger: ChronosLogger = {
    log: () => {},
    warn: () => {},
    error: (m) => {
      if (/failed; retrying with backoff/.test(m)) firstFailure.resolve(m);
    },
  };
  const server = new ChronosServer({ connection: redis.url, namespace: newNamespace('down-logs'), logger, shutdownTimeout: 100 });
  server.handle('x', () => {});
  await server.start();
  try {
    await redis.kill();
    const line = await firstFailure.promise;
    expect(line).toContain(`Redis at 127.0.0.1:${redis.port}/0`);
    expect(line).toMatch(/last connection error: .*ECONNREFUSED/);
  } finally {
    await server.shutdown().catch(() => {});
  }
}, 60_000);
