// Closing while Redis is down: a command queued while the connection waits to reconnect is settled
// by the close (ioredis 5 leaves it pending for good: redis/ioredis#2169), and the client ends.
import { QueueClient } from '../../lib/core/queue/client.js';
import { PrivateRedis } from '../helpers/redis-server.js';

let redis: PrivateRedis | undefined;
afterEach(async () => {
  await redis?.kill();
  redis = undefined;
});

test('an enqueue waiting for Redis to come back is rejected when the client is closed, and the client ends', async () => {
  const r = (redis = await PrivateRedis.start());
  const client = new QueueClient({ connection: r.url });
  await client.enqueue('report', { n: 1 });
  const reconnecting = new Promise((resolve) => client.redis.once('reconnecting', resolve));
  await r.kill(); // Redis is gone: the client waits between reconnect attempts, queuing commands
  await reconnecting;
  const pending = client.enqueue('report', { n: 2 });
  const outcome = pending.then(
    () => 'resolved',
    (e: Error) => e.message,
  );
  await client.close();
  expect(await outcome).toMatch(/Connection is closed/);
  expect(client.redis.status).toBe('end');
});
