// An enqueue on a QueueClient after its close() (in a Nest app: after app.close()) is a usage error:
// a ChronosStateError naming the method and saying the client was closed. Before, it went to the
// closed connection and came back as a RedisUnavailableError blaming Redis ("Redis did not serve it
// within the client's retry bound (Connection is closed.)"), which sends the reader to look at Redis.
import { Redis } from 'ioredis';
import { ChronosStateError, QueueClient } from '../../lib/core/index.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

const namespace = newNamespace('closed');
afterAll(() => deleteNamespace(namespace));

test('enqueue and enqueueBulk after close() reject with a ChronosStateError saying the client was closed', async () => {
  const client = new QueueClient({ connection: redisUrl(), namespace });
  await client.enqueue('report.build', { day: 1 }); // works while open
  await client.close();
  await expect(client.enqueue('report.build', { day: 2 })).rejects.toThrow(ChronosStateError);
  await expect(client.enqueue('report.build', { day: 2 })).rejects.toThrow(/^enqueue: this client was closed \(close\(\)/);
  await expect(client.enqueueBulk([{ type: 'report.build', payload: { day: 3 } }])).rejects.toThrow(
    /^enqueueBulk: this client was closed \(close\(\)/,
  );
});

test('a connection passed in is not closed by close(), so enqueues through it still work', async () => {
  const redis = new Redis(redisUrl());
  try {
    const client = new QueueClient({ connection: redis, namespace });
    await client.close();
    expect((await client.enqueue('report.build', { day: 4 })).deduplicated).toBe(false);
  } finally {
    redis.disconnect();
  }
});
