// connection: { url, ...options } (node-redis's form): ioredis has no url option, so such a
// connection went to 127.0.0.1:6379 in silence; now the URL is where Chronos connects.
import { QueueClient } from '../../lib/core/queue/client.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { ChronosError } from '../../lib/core/runtime/errors.js';
import { PrivateRedis } from '../helpers/redis-server.js';

let redis: PrivateRedis | undefined;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close().catch(() => {});
  await redis?.kill();
  redis = undefined;
});

test('an enqueue through { url, ...options } lands in the Redis the URL names', async () => {
  const r = (redis = await PrivateRedis.start());
  const client = new QueueClient({ connection: { url: `${r.url}/3`, connectionName: 'url-form' }, namespace: 'url-form' });
  closers.push(() => client.close());
  const { id } = await client.enqueue('report', { n: 1 });
  const check = new QueueClient({ connection: `${r.url}/3`, namespace: 'url-form' }).redis;
  closers.push(() => check.quit());
  const entries = await check.xrange(new QueueKeys('url-form', 'default').stream, '-', '+');
  expect(entries.map(([, fields]) => fields[1])).toEqual([id]);
  expect(await client.redis.client('GETNAME')).toBe('url-form'); // the options beside the URL are kept
});

test.each([
  // a plain string with a scheme: http:// was taken by ioredis as a host to retry for ever (an enqueue never
  // settled), a redis URL it could not parse threw a bare TypeError printing nothing of the value
  ['http://127.0.0.1:6379', 'connection: expected a redis:// or rediss:// URL, got "http://127.0.0.1:6379"'],
  [
    'redis://ops:s3cret@127.0.0.1:63a79',
    'connection: "redis://***@127.0.0.1:63a79" is not a URL (expected redis://[user:password@]host[:port][/db])',
  ],
  [{ url: 'https://ops:s3cret@127.0.0.1:6379' }, 'connection: url: expected a redis:// or rediss:// URL, got "https://***@127.0.0.1:6379"'],
  [{ url: 'http://127.0.0.1:6379' }, 'connection: url: expected a redis:// or rediss:// URL, got "http://127.0.0.1:6379"'],
  [{ url: 6379 }, 'connection: url: expected a redis:// or rediss:// URL, got number'],
  [{ url: 'redis://127.0.0.1:6379', port: 6380 }, 'connection: url and port both name the address: give the address in one of them'],
])('refuses %j, naming what is wrong', (connection, message) => {
  const open = () => new QueueClient({ connection: connection as never });
  expect(open).toThrow(ChronosError);
  expect(open).toThrow(message);
});
