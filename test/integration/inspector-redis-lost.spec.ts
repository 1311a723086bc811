// The Inspector's reads on a connection Redis went away from reject with the client's own error
// (isRedisUnavailable: 'Connection is closed.'), which the CLI reports as REDIS_UNAVAILABLE naming
// Redis and the console as a 503. Before, a read of a pipeline took the missing replies for empty
// ones: instances() (behind `chronos stats` and `schedule ls`) failed with a TypeError ('undefined is
// not iterable'), queue() (`queue ls`, `queue show`, `stats`) with 'val is not a function or its return
// value is not iterable' (trial 37).
import { Inspector } from '../../lib/core/admin/inspector.js';
import { redisOptions } from '../../lib/cli/context.js';
import { QueueClient } from '../../lib/core/queue/client.js';
import { isRedisUnavailable } from '../../lib/core/redis/connection.js';
import { PrivateRedis } from '../helpers/redis-server.js';

let redis: PrivateRedis;

beforeAll(async () => {
  redis = await PrivateRedis.start();
});
afterAll(async () => {
  await redis.kill();
});

test('every read of a connection whose Redis went away rejects with the client error, never a TypeError', async () => {
  const client = new QueueClient({ connection: redis.url, namespace: 'lost' });
  const { id } = await client.enqueue('report', { n: 1 }, { queue: 'reports', delay: 60_000 });
  await client.close();
  // a one-shot CLI's connection: no reconnection after the first retry
  const inspector = new Inspector({ connection: redisOptions(redis.url, false), namespace: 'lost' });
  await inspector.check(3000);
  await redis.kill();
  const reads: [string, () => Promise<unknown>][] = [
    ['instances', () => inspector.instances()],
    ['servers', () => inspector.servers()],
    ['leader', () => inspector.leader()],
    ['queue', () => inspector.queue('reports')],
    ['requireTask', () => inspector.requireTask(id, 'reports')],
  ];
  const seen: Record<string, string> = {};
  for (const [name, read] of reads) {
    const err = await read().then(
      () => new Error('resolved'),
      (e: unknown) => e,
    );
    seen[name] = isRedisUnavailable(err) ? 'unavailable' : String(err);
  }
  expect(seen).toEqual({
    instances: 'unavailable',
    servers: 'unavailable',
    leader: 'unavailable',
    queue: 'unavailable',
    requireTask: 'unavailable',
  });
  await inspector.close().catch(() => {});
}, 60_000);
