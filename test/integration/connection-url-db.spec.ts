// The database of a Redis URL (its path, or a `db` query parameter) is checked where the URL is:
// ioredis parseInt()s it, so `redis://host:6379/abc` (a typo, a template left unfilled) gave database
// NaN, whose SELECT failed unhandled at the first command and ended the process with a bare
// "ReplyError: ERR value is not an integer or out of range", and `/1x` selected database 1 (trial3).
// A database out of the server's range is the start-up check's (server-check.ts checkDatabase). And a URL
// string with white space before it is read as the check reads it (trimmed), not taken for a host.
import { Test } from '@nestjs/testing';
import { ChronosModule } from '../../lib/index.js';
import { QueueClient } from '../../lib/core/queue/client.js';
import { ChronosError } from '../../lib/core/runtime/errors.js';
import { redisUrlProblem } from '../../lib/core/redis/url-check.js';
import { redisUrl } from '../helpers/redis.js';

test.each([
  ['redis://127.0.0.1:6379/abc', '"abc"'],
  ['redis://ops:s3cret@127.0.0.1:6379/1x', '"1x"'],
  ['redis://127.0.0.1:6379/-1', '"-1"'],
  ['redis://127.0.0.1:6379?db=two', '"two"'],
])('the core refuses %s when it is given, naming the database and hiding the password', (url, db) => {
  const open = () => new QueueClient({ connection: url });
  expect(open).toThrow(ChronosError);
  expect(open).toThrow(`its database ${db} is not a number`);
  expect(() => new QueueClient({ connection: { url } })).toThrow(`its database ${db} is not a number`);
  expect(redisUrlProblem(url)).not.toContain('s3cret');
});

test.each(['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379/', 'redis://127.0.0.1:6379/3', 'rediss://h:6380/15?db=2', 'redis://h?db=4'])(
  '%s is a database ioredis reads as written',
  (url) => expect(redisUrlProblem(url)).toBeUndefined(),
);

test('ChronosModule refuses such a URL at compile, before it connects', async () => {
  const compile = Test.createTestingModule({ imports: [ChronosModule.forRoot({ connection: 'redis://127.0.0.1:6379/abc' })] }).compile();
  await expect(compile).rejects.toThrow(/connection/);
});

test('white space around a URL string (a REDIS_URL with a stray space or line break) is read as the URL check reads it', async () => {
  // " redis://…" was taken by ioredis for a host: a bare "TypeError: Invalid URL" at the constructor
  for (const connection of [` ${redisUrl()}`, `\n${redisUrl()}\n`, { url: ` ${redisUrl()} ` }]) {
    const client = new QueueClient({ connection, namespace: 'trial3-url-space' });
    try {
      expect(await client.redis.ping()).toBe('PONG');
    } finally {
      await client.close();
    }
  }
});
