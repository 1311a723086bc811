/** The start-up check of a Redis server: reachable, version >= 6.2, the database asked for, its eviction policy. */
import type { Redis } from 'ioredis';
import { ChronosError, RedisEvictionPolicyError, RedisUnreachableError, RedisVersionError } from '../runtime/errors.js';
import type { ChronosLogger } from '../runtime/logger.js';
import { describe, lastError } from './failures.js';
import type { RedisClient } from './types.js';

/** What {@link checkServer} checks besides reachability and the version. */
export interface CheckServerOptions {
  /** How long to wait for Redis to answer, ms. @defaultValue 10000 */
  timeoutMs?: number;
  /** Where the eviction warning goes (once per process and address). */
  logger?: Pick<ChronosLogger, 'warn'>;
  /** Refuse (throw) instead of warning when the maxmemory-policy is not `noeviction`. */
  requireNoEviction?: boolean;
}

const warnedEviction = new Set<string>();

/**
 * Checks that the server answers within `timeoutMs` (ms), is Redis >= 6.2 (XAUTOCLAIM, GETDEL), and
 * will not evict keys: a `maxmemory-policy` other than `noeviction` is a warning naming the policy
 * and what it can cost, or an error with `requireNoEviction` (BullMQ warns the same way).
 * @returns the Redis version.
 * @throws RedisUnreachableError naming the address and the last connection error.
 * @throws RedisVersionError naming the version and the address (never a password).
 * @throws RedisEvictionPolicyError naming the policy, with `requireNoEviction`.
 * @throws ChronosError (code `CONFIG`) when the database of the options (`/db` of the URL) cannot be selected.
 */
export async function checkServer(client: RedisClient, options: CheckServerOptions = {}): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const started = performance.now();
  let info: string;
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  try {
    info = await Promise.race([
      client.info(),
      new Promise<never>(
        (_, reject) =>
          (timer = setTimeout(() => {
            timedOut = true;
            reject(new Error('no answer'));
          }, timeoutMs)),
      ),
    ]);
  } catch (err) {
    // the client may stop retrying before the bound (a one-shot CLI connects twice at most): say how long it took
    const waitedMs = timedOut ? timeoutMs : Math.min(timeoutMs - 1, Math.round(performance.now() - started));
    throw new RedisUnreachableError(describe(client), lastError(client) ?? (err as Error).message, timeoutMs, {
      cause: err,
      waitedMs,
    });
  } finally {
    clearTimeout(timer);
  }
  const version = /redis_version:([0-9.]+)/.exec(info)?.[1] ?? '0';
  const [major, minor] = version.split('.').map(Number);
  if (major < 6 || (major === 6 && minor < 2)) throw new RedisVersionError(version, describe(client));
  await checkDatabase(client);
  const policy = /maxmemory_policy:(\S+)/.exec(info)?.[1];
  if (policy !== undefined && policy !== 'noeviction') {
    const where = describe(client);
    if (options.requireNoEviction) throw new RedisEvictionPolicyError(policy, where);
    if (!warnedEviction.has(where)) {
      warnedEviction.add(where);
      const maxmemory = /maxmemory_human:(\S+)/.exec(info)?.[1] ?? '?';
      options.logger?.warn(
        `Redis at ${where} has maxmemory-policy ${policy} (maxmemory=${maxmemory}): when it is full it evicts keys, and Chronos keys ` +
          'are not a cache. An evicted lease lets two instances lead, an evicted dedup key lets a trigger fire twice, an evicted ' +
          'stream, pending entry or marker loses tasks or frees their ids. Set maxmemory-policy noeviction (or requireNoEviction: ' +
          'true to refuse to start)',
      );
    }
  }
  return version;
}

/**
 * Checks that the connection is on the database its options name: ioredis reports a failed `SELECT`
 * (`ERR DB index is out of range`) as an error event only and goes on with database 0, so a typo in
 * the URL's `/db` would put every key in database 0. One `CLIENT INFO` (Redis >= 6.2), only when a
 * database other than 0 is asked for (a cluster has database 0 only). Before the first write of
 * the parts that have no start-up check too: {@link databaseChecked}.
 * @throws ChronosError (code `CONFIG`) naming the database asked for, the address and the server's error.
 */
export async function checkDatabase(client: RedisClient): Promise<void> {
  if ((client as { isCluster?: boolean }).isCluster) return;
  const db = (client as Partial<Redis>).options?.db ?? 0;
  if (db === 0) return;
  const selected = Number(/\bdb=(\d+)/.exec(String(await (client as Redis).client('INFO')))?.[1] ?? 0);
  if (selected !== db) {
    const why = lastError(client) ?? 'the server did not select it';
    throw new ChronosError(
      'CONFIG',
      `Redis at ${describe(client)}: database ${db} cannot be used (${why}); the connection stayed on database ${selected}. Check the /db of the connection URL (REDIS_URL / --redis-url) against the server's "databases" setting.`,
    );
  }
}

/** The outcome of {@link checkDatabase} per client: kept once it passed or found a wrong database. */
const databaseChecks = new WeakMap<object, Promise<void>>();

/**
 * Resolves once the client is known to be on the database its options name ({@link checkDatabase},
 * one `CLIENT INFO` per client, shared by every part that uses it; nothing for database 0). Awaited
 * before the first write of the parts that have no start-up check — a `QueueClient`'s enqueues, the
 * Inspector's acts, a scheduler's runtime schedule API before or without its start — which before
 * wrote to database 0 when Redis refused the URL's `/db` (ioredis reports it as an `error` event
 * only). A wrong database is the answer of every later call; a check that failed otherwise (Redis
 * unreachable) is tried again by the next one.
 * @throws ChronosError (code `CONFIG`) naming the database, the address and the server's error.
 */
export function databaseChecked(client: RedisClient): Promise<void> {
  if (typeof client !== 'object' || client === null) return Promise.resolve(); // a stand-in of a unit test
  let check = databaseChecks.get(client);
  if (check === undefined) {
    check = checkDatabase(client).catch((err: unknown) => {
      if (!(err instanceof ChronosError && err.code === 'CONFIG')) databaseChecks.delete(client);
      throw err;
    });
    databaseChecks.set(client, check);
  }
  return check;
}
