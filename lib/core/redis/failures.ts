/**
 * What a client's failures say: whether an error means Redis did not serve a command within the
 * client's retry bound, a client's last connection error (recorded instead of ioredis's "Unhandled
 * error event"), and messages naming the Redis (never its password).
 */
import { ChronosError, RedisUnavailableError } from '../runtime/errors.js';
import { foreignReply } from '../runtime/foreign-reply.js';
import type { Redis } from 'ioredis';
import type { RedisClient } from './types.js';

/**
 * The client's errors that mean Redis did not serve a command within its retry bound (no reply of
 * Redis itself): ioredis Cluster's `Too many Cluster redirections` (and a bare `CLUSTERDOWN` or
 * closed connection when retries are off), ioredis's `MaxRetriesPerRequestError`, and its `Command
 * timed out` on a connection given a `commandTimeout` (the CLI's; README "When Redis is unreachable").
 */
const UNAVAILABLE =
  /^(Too many Cluster redirections|CLUSTERDOWN|Connection is closed|Reached the max retries per request limit|Cluster isn't ready|Command timed out)/;

/** True when `err` is the client's saying that Redis did not serve a command within its retry bound (see UNAVAILABLE), not a reply of Redis. */
export function isRedisUnavailable(err: unknown): err is Error {
  return err instanceof Error && !(err instanceof ChronosError) && UNAVAILABLE.test(err.message);
}

/**
 * True when Redis ended a blocking read (`XREADGROUP … BLOCK`) early with `UNBLOCKED …`: its key left
 * the node (a cluster slot migrated: "the stream key no longer exists") or the node turned replica (a
 * `CLUSTER FAILOVER`, a Sentinel failover: "instance state changed"). No failure: read again at once,
 * and the client finds the key's new master.
 */
export function isUnblocked(err: unknown): boolean {
  return err instanceof Error && err.name === 'ReplyError' && err.message.startsWith('UNBLOCKED');
}

/**
 * `err` as a {@link RedisUnavailableError} for an enqueue to `queue` when it says Redis did not
 * serve the command in time (see UNAVAILABLE), with `err` as its cause; any other error as it is.
 */
export function unavailableFor(queue: string, err: unknown): unknown {
  if (!isRedisUnavailable(err)) return err;
  return new RedisUnavailableError(queue, err.message, { cause: err });
}

const lastErrors = new WeakMap<object, string>();

/**
 * Records a client's connection errors instead of letting ioredis print "Unhandled error event"
 * on every reconnect attempt: the loops that use the client log a failure once per run of
 * failures (FailureLog), and start-up reports the most telling one ({@link checkServer}): the
 * last, unless an attempt was answered in another protocol. That proves the address is not
 * Redis, and a later attempt's transport error (a server closing on bytes it cannot parse may
 * reset the connection before its answer is read) must not hide it.
 */
export function watchErrors(client: RedisClient): void {
  client.on('error', (err: Error) => {
    const seen = lastErrors.get(client);
    if (seen !== undefined && foreignReply(seen) !== undefined && foreignReply(err.message) === undefined) return;
    lastErrors.set(client, err.message);
  });
}

/** The last connection error recorded for `client` (see {@link watchErrors}), if any. */
export function lastError(client: RedisClient): string | undefined {
  return lastErrors.get(client);
}

/** The last connection error of a client Chronos opened (`connect ECONNREFUSED 127.0.0.1:6390`), or undefined. */
export const lastConnectionError: (client: RedisClient) => string | undefined = lastError;

/**
 * `err`'s message, and when it only says that the client gave up on a command (ioredis's `Reached
 * the max retries per request limit`, a closed connection: see UNAVAILABLE), which Redis it was
 * and the client's last connection error (`connect ECONNREFUSED …`), which the loops' failure logs
 * would not show otherwise.
 */
export function explainFailure(client: RedisClient, err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  if (!isRedisUnavailable(err)) return message;
  const last = lastError(client);
  return `${message} (Redis at ${describe(client)}${last !== undefined && last !== message ? `; last connection error: ${last}` : ''})`;
}

/** `host:port/db` of a client, for messages (never the password). */
export function describe(client: RedisClient): string {
  if ((client as { isCluster?: boolean }).isCluster) return 'cluster';
  const o = (client as Redis).options;
  // a Sentinel client's host and port are ioredis's defaults, not where it connects: name the primary's name and the sentinels
  if (o.sentinels?.length) {
    const via = o.sentinels.map((s) => `${s.host ?? '127.0.0.1'}:${s.port ?? 26379}`).join(',');
    return `sentinel primary "${o.name ?? 'mymaster'}" via ${via}/${o.db ?? 0}`;
  }
  return `${o.host ?? '127.0.0.1'}:${o.port ?? 6379}/${o.db ?? 0}`;
}
