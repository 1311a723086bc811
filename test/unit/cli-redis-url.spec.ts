// The CLI's `--redis-url` (lib/cli/context.ts redisOptions): a bad URL is a usage error naming what is wrong,
// with the URL's credentials hidden (lib/core/redis/url-check.ts redactUrl, which every door shares).
import { redisOptions, UsageError } from '../../lib/cli/context.js';
import { redactUrl, redisUrlProblem } from '../../lib/core/redis/url-check.js';

function problem(url: string): string {
  try {
    redisOptions(url, false);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`${url} was accepted`);
}

test('a port past 65535 is named as out of range, not as "not a URL"', () => {
  expect(problem('redis://127.0.0.1:99999')).toBe('--redis-url: port 99999 is out of range (expected 0-65535)');
  expect(problem('redis://user:pw@[::1]:70000/2')).toBe('--redis-url: port 70000 is out of range (expected 0-65535)');
});

test('garbage is "not a URL"; a foreign scheme or a bad database says which', () => {
  expect(problem('redis://a b:6379')).toBe('--redis-url: "redis://a b:6379" is not a URL (expected redis://host:port[/db])');
  expect(problem('127.0.0.1:6379')).toBe('--redis-url: "127.0.0.1:6379" is not a URL (expected redis://host:port[/db])');
  expect(problem('http://x')).toBe('--redis-url: expected redis:// or rediss://, got http:');
  expect(problem('redis://127.0.0.1:6379/x')).toBe(
    '--redis-url: "redis://127.0.0.1:6379/x": its database "x" is not a number (expected redis://[user:password@]host[:port][/db], db an integer >= 0)',
  );
});

test('a bad URL with a password is named with its credentials hidden (the error printed the password)', () => {
  const message = problem('redis://ops:s3cret@127.0.0.1:63a79/0');
  expect(message).toBe('--redis-url: "redis://***@127.0.0.1:63a79/0" is not a URL (expected redis://host:port[/db])');
  expect(message).not.toContain('s3cret');
});

test('a good URL gives host, port, db and credentials', () => {
  expect(redisOptions('redis://u:p%40ss@[::1]:6380/3', false)).toMatchObject({
    host: '::1',
    port: 6380,
    db: 3,
    username: 'u',
    password: 'p@ss',
  });
});

test('credentials and db given as query parameters connect as the library connects (ioredis parseURL): the CLI ignored them', () => {
  expect(redisOptions('redis://host:6379?password=s3cret&username=ops&db=2', false)).toMatchObject({
    host: 'host',
    db: 2,
    username: 'ops',
    password: 's3cret',
  });
  expect(redisOptions('redis://host/0?password=a%26b+c', false).password).toBe('a&b c'); // decoded as URLSearchParams decodes
  // the user info and the path come first, as in ioredis
  expect(redisOptions('redis://u:pw@host/3?password=other&db=5', false)).toMatchObject({ username: 'u', password: 'pw', db: 3 });
  expect(redisOptions('redis://host?sentinelPassword=sp', false)).toMatchObject({ sentinelPassword: 'sp' });
  expect(problem('redis://host?db=x')).toBe(
    '--redis-url: "redis://host?db=x": its database "x" is not a number (expected redis://[user:password@]host[:port][/db], db an integer >= 0)',
  );
});

test('a password given as a query parameter is hidden too (ioredis reads it; the error printed it)', () => {
  const message = problem('redis://127.0.0.1:63a79/0?password=s3cret');
  expect(message).toBe('--redis-url: "redis://127.0.0.1:63a79/0?password=***" is not a URL (expected redis://host:port[/db])');
  expect(message).not.toContain('s3cret');
});

test('redactUrl hides every credential parameter ioredis reads, and nothing else', () => {
  expect(redactUrl('redis://host:6379/0?password=secret')).toBe('redis://host:6379/0?password=***');
  // a `@` in a hidden value is not taken for the end of a user name (the host stays named)
  expect(redactUrl('redis://host:6379/0?password=p@ss')).toBe('redis://host:6379/0?password=***');
  expect(redactUrl('redis://u:pw@host/0?family=6&username=ops&sentinelPassword=p%40ss&sentinelUsername=s')).toBe(
    'redis://***@host/0?family=6&username=***&sentinelPassword=***&sentinelUsername=***',
  );
  // the name as ioredis decodes it; any case; a `#` in the value hidden with it
  expect(redactUrl('redis://host/0?pass%77ord=secret&PASSWORD=ab#cd')).toBe('redis://host/0?pass%77ord=***&PASSWORD=***');
  expect(redactUrl('redis://host/0?db=1&connectionName=api')).toBe('redis://host/0?db=1&connectionName=api');
  // the core's and the Nest module's check name the URL the same way
  expect(redisUrlProblem('http://host/0?password=secret')).toBe('expected a redis:// or rediss:// URL, got "http://host/0?password=***"');
});

test('a "@" in a query value that is no credential leaves the host shown (it was hidden with the user name: redis://***@b)', () => {
  expect(redactUrl('redis://host:6379/0?connectionName=a@b')).toBe('redis://host:6379/0?connectionName=a@b');
  expect(redactUrl('redis://u:pw@host:6379/0?connectionName=a@b')).toBe('redis://***@host:6379/0?connectionName=a@b');
  expect(redactUrl('redis://host?connectionName=a@b')).toBe('redis://host?connectionName=a@b');
  // the last "@" of the authority ends the user info, as new URL reads it ("p@ss" is the password)
  expect(redactUrl('redis://u:p@ss@host/0')).toBe('redis://***@host/0');
  // a URL new URL refuses (a bare "?" in its password) has no known authority: hidden up to its last "@"
  expect(redactUrl('redis://:p?ss@host:6379')).toBe('redis://***@host:6379');
});

test('a "%" in a user name or password that begins no percent-escape is named, the credentials hidden (trial: every door threw a bare "URIError: URI malformed" from decodeURIComponent)', async () => {
  const { QueueClient } = await import('../../lib/core/queue/client.js');
  const cases: [url: string, where: string][] = [
    ['redis://ops:100%@127.0.0.1:6379/0', 'password'],
    ['redis://op%zz:pw@127.0.0.1:6379', 'user name'],
  ];
  for (const [url, where] of cases) {
    const said = `${JSON.stringify(redactUrl(url))}: its ${where} holds a "%" that begins no percent-escape (write a "%" in it as %25)`;
    expect(redisUrlProblem(url)).toBe(said);
    expect(problem(url)).toBe(`--redis-url: ${said}`);
    expect(() => new QueueClient({ connection: url, namespace: 'url-check' })).toThrow(`connection: ${said}`);
    expect(said).not.toContain('100%');
  }
  expect(redisUrlProblem('redis://ops:100%25@127.0.0.1:6379')).toBeUndefined();
  expect(redisOptions('redis://ops:100%25@127.0.0.1:6379', false).password).toBe('100%');
});
