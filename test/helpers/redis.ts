import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** The Redis the test run uses (scripts/with-redis.mjs sets REDIS_URL). */
export function redisUrl(): string {
  return process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
}

/** A namespace no other test uses: every key of a test lives under it. */
export function newNamespace(tag = 't'): string {
  return `chronos-test-${tag}-${randomBytes(4).toString('hex')}`;
}

/** A fresh client on the test Redis; the caller quits it. */
export function connect(url = redisUrl()): Redis {
  return new Redis(url, { lazyConnect: false });
}

/** Deletes every key of a namespace (SCAN + UNLINK; never FLUSHDB, tests run in parallel). */
export async function deleteNamespace(namespace: string, url = redisUrl()): Promise<void> {
  const r = connect(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${namespace}:*`, 'COUNT', 1000);
      if (keys.length) await r.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}
