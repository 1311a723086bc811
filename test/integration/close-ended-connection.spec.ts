// A connection Chronos owns that ioredis ended by itself is opened again (reopen.ts: the Sentinel
// failover case of trial 45); one its owner closes before that reopen stays closed (review48).
import { REOPEN_FIRST_MS } from '../../lib/core/redis/reopen.js';
import { closeClient, openConnection } from '../../lib/core/redis/connection.js';
import { PrivateRedis } from '../helpers/redis-server.js';

let redis: PrivateRedis | undefined;
afterEach(async () => {
  await redis?.kill();
  redis = undefined;
});

/** An owned client that ioredis ends by itself when its socket drops (no retry strategy), ended so. */
async function endedByItself(r: PrivateRedis) {
  const { client } = openConnection({ host: '127.0.0.1', port: r.port, retryStrategy: () => null });
  await client.ping();
  const ended = new Promise((resolve) => client.once('end', resolve));
  (client as unknown as { stream: { destroy(): void } }).stream.destroy();
  await ended;
  return client;
}

test('ended by itself, it is opened again', async () => {
  const client = await endedByItself((redis = await PrivateRedis.start()));
  await new Promise((resolve) => client.once('ready', resolve));
  expect(await client.ping()).toBe('PONG');
  await closeClient(client);
});

test('closed by its owner before the reopen, it stays closed', async () => {
  const client = await endedByItself((redis = await PrivateRedis.start()));
  await closeClient(client);
  let reconnected = false;
  client.on('connect', () => (reconnected = true));
  // eslint-disable-next-line local/no-fixed-sleep -- a window in which nothing may happen: twenty of the reopen's first wait (REOPEN_FIRST_MS)
  await new Promise((resolve) => setTimeout(resolve, REOPEN_FIRST_MS * 20));
  expect(reconnected).toBe(false);
  expect(client.status).toBe('end');
});
