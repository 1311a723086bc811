import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import {
  ChronosStateError,
  ChronosError,
  RedisEvictionPolicyError,
  RedisUnavailableError,
  RedisUnreachableError,
  RedisVersionError,
} from '../runtime/errors.js';
import { foreignReply } from '../runtime/foreign-reply.js';
import type { ChronosLogger } from '../runtime/logger.js';
import { defineScripts } from './scripts.js';
import type { RedisClient } from './types.js';

export type { RedisClient } from './types.js';

/**
 * How Chronos reaches Redis: a URL (`redis://[:password@]host:port[/db]`, `rediss://…`), ioredis
 * options, an existing ioredis `Redis` or `Cluster` instance, or `{ cluster: nodes, options }`.
 * A client passed in is shared: Chronos never closes it (asynq's ownership rule); clients Chronos
 * creates (from a URL or options), and every blocking/subscriber duplicate, are owned and closed.
 * @publicApi
 */
export type RedisConnection =
  | string
  | RedisOptions
  | RedisClient
  | {
      /** The cluster's startup nodes, as ioredis `Cluster` takes them (e.g. `[{ host, port }]` or URLs). */
      cluster: ConstructorParameters<typeof Cluster>[0];
      /** ioredis `ClusterOptions` (e.g. `redisOptions` with the password). */
      options?: ClusterOptions;
    };

/** How often a cluster client Chronos creates reads the slot table again, ms (see {@link CLUSTER_RETRY_OPTIONS}). */
export const CLUSTER_SLOTS_REFRESH_MS = 2000;

/**
 * The retry options Chronos gives a Redis Cluster client it creates (`{ cluster, options }`; the
 * given `options` override them; an existing `Cluster` instance keeps its own). A command whose slot
 * has no reachable master (a closed connection: the master died and its replica is not promoted
 * yet) or that gets `CLUSTERDOWN`/`TRYAGAIN` is retried every 200 ms, refreshing the slot table each
 * time, up to 50 tries (`maxRedirections`; a MOVED or ASK counts one too): a command waits through
 * a failover of up to {@link CLUSTER_FAILOVER_BOUND_MS} (10 s, about what ioredis's Sentinel defaults
 * give: 20 reconnects backing off to 1 s) and then rejects ("Too many Cluster redirections"; an
 * enqueue then rejects with `RedisUnavailableError`). ioredis's own defaults (100 ms × 16) gave up
 * after about 1.6 s, inside the 3–4 s a promotion takes with `cluster-node-timeout` 2000.
 * While no node at all is reachable, commands wait in the offline queue (`enableOfflineQueue`) and
 * the client reconnects with `clusterRetryStrategy` (100 ms growing to 2 s, forever).
 *
 * The slot table is also read again every `CLUSTER_SLOTS_REFRESH_MS` (2 s, `slotsRefreshInterval`;
 * ioredis's default is never): a master that stalls (SIGSTOP, a hung host, a partition that drops
 * packets) closes no connection and answers nothing, so no error ever told the client to look again,
 * and after its replica was promoted every command for its slots still went to it and hung until it
 * resumed (measured: a 15 s stall of the scheduler's master left the fleet without a leader for all
 * 15 s, though the replica was promoted after 4 s). Commands already sent to the stalled node still
 * wait for it (bound them with `commandTimeout` on a client that enqueues, see the README).
 */
export const CLUSTER_RETRY_OPTIONS: Readonly<ClusterOptions> = Object.freeze({
  retryDelayOnFailover: 200,
  retryDelayOnClusterDown: 200,
  retryDelayOnTryAgain: 200,
  maxRedirections: 50,
  enableOfflineQueue: true,
  clusterRetryStrategy: (times: number) => Math.min(100 + times * 2, 2000),
  slotsRefreshInterval: CLUSTER_SLOTS_REFRESH_MS,
});

/**
 * How often a connection Chronos opens asks a Redis that is still loading its data (AOF or RDB, after
 * a restart) whether it is done, ms (ioredis `maxLoadingRetryTime`, given to the clients it creates
 * and to its duplicates of a client you pass; that client itself keeps its own). ioredis's ready check waits Redis's estimate of the time left between two asks, up to 10 s
 * by default, and that estimate is wildly high in the load's first whole second (elapsed whole
 * seconds × bytes left ÷ bytes loaded): a connection that came back then stayed offline (its
 * commands queued: acks, claim renewals, the liveness subscription) for up to 10 s after Redis
 * answered, longer than the 5 s the other servers wait for it (`DEFAULTS.livenessReconnectGraceMs`),
 * so they took it for dead and ran its tasks again (`queue-restart-load.spec.ts`). Each ask is one
 * `INFO`, while Redis loads only.
 */
export const LOADING_POLL_MS = 250;

/**
 * How long a connection Chronos disconnects waits for the server to close its side before the socket
 * is destroyed, ms (ioredis `disconnectTimeout`, 2,000 by default; given to the clients Chronos creates
 * and to every duplicate; a client you pass keeps its own). Chronos disconnects a connection when it
 * gives up on it: a QUIT unanswered within `QUIT_WAIT_MS`, a blocking read that hangs. The commands
 * still waiting on it reject ("Connection is closed.") only once the socket is gone: with a Redis that
 * answers nothing (SIGSTOPped, partitioned) that was 2 s later, which held a shutdown (a console request
 * waiting on the client's connection held the HTTP server's close) and a hung read's replacement.
 */
export const DISCONNECT_WAIT_MS = 0;

/**
 * The options Chronos gives a Sentinel client it creates (`{ sentinels, name }`; the given options
 * override them; a client you pass keeps its own, and so do its duplicates). `failoverDetector`:
 * the client subscribes to `+switch-master` on the sentinels and reconnects to the new primary at
 * once. Without it (ioredis's default) a client stayed on the old primary until that connection
 * broke, and after a `SENTINEL FAILOVER` the old primary keeps answering as a primary until the
 * sentinels turn it into a replica (about 10 s later): every write meanwhile (enqueues, acks, fires,
 * leases) went there and was dropped when it resynced from the new primary (measured: 15 accepted
 * enqueues lost, 15 tasks and 32 triggers run twice; `sentinel.spec.ts`).
 */
export const SENTINEL_OPTIONS: Readonly<RedisOptions> = Object.freeze({ failoverDetector: true });

/** How long a command on a Redis Cluster waits through a failover before it rejects, ms (see {@link CLUSTER_RETRY_OPTIONS}). */
export const CLUSTER_FAILOVER_BOUND_MS = 10_000;

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
 * `err` as a {@link RedisUnavailableError} for an enqueue to `queue` when it says Redis did not
 * serve the command in time (see UNAVAILABLE), with `err` as its cause; any other error as it is.
 */
export function unavailableFor(queue: string, err: unknown): unknown {
  if (!isRedisUnavailable(err)) return err;
  return new RedisUnavailableError(queue, err.message, { cause: err });
}

/** An open client plus whether Chronos owns (and so closes) it. */
export interface ConnectionHandle {
  readonly client: RedisClient;
  readonly owned: boolean;
}

/** True for an ioredis `Redis` or `Cluster` instance (duck-typed, so another copy of ioredis works). */
export function isRedisClient(value: unknown): value is RedisClient {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as RedisClient).defineCommand === 'function' &&
    typeof (value as RedisClient).duplicate === 'function'
  );
}

const LAZY = Symbol('chronos.lazyConnection');

/**
 * @internal `input` marked to be opened without connecting (ioredis `lazyConnect`): the client
 * Chronos owns connects at its first command. The Nest module opens its connections so, as Nest
 * builds the providers: an app whose boot fails before Chronos starts (a user provider throwing
 * in its constructor or its `onModuleInit`; Nest runs no hook then) holds no socket, and its
 * process can exit. A client the app passed in is returned as it is (Chronos does not own it).
 */
export function lazyConnection(input: RedisConnection | undefined): RedisConnection | undefined {
  if (isRedisClient(input)) return input;
  return { [LAZY]: { input } } as unknown as RedisConnection;
}

/** Opens (or adopts) the client described by `input` and defines the Chronos scripts on it. */
export function openConnection(given: RedisConnection | undefined): ConnectionHandle {
  let client: RedisClient;
  let owned = true;
  const marked = (given as { [LAZY]?: { input: RedisConnection | undefined } } | undefined)?.[LAZY];
  const input = marked ? marked.input : given;
  const loading = {
    maxLoadingRetryTime: LOADING_POLL_MS,
    disconnectTimeout: DISCONNECT_WAIT_MS,
    ...(marked ? { lazyConnect: true } : {}),
  };
  if (input === undefined) client = new Redis(loading);
  else if (typeof input === 'string') client = new Redis(input, loading);
  else if (isRedisClient(input)) {
    client = input;
    owned = false;
  } else if ('cluster' in input) {
    const redisOptions = { ...loading, ...input.options?.redisOptions };
    const lazy = marked ? { lazyConnect: true } : {};
    client = new Cluster(input.cluster, { ...CLUSTER_RETRY_OPTIONS, ...lazy, ...input.options, redisOptions });
  } else {
    const given = input as RedisOptions;
    client = new Redis({ ...loading, ...(given.sentinels ? SENTINEL_OPTIONS : {}), ...given });
  }
  rejectKeyPrefix(client);
  defineScripts(client);
  if (owned) watchErrors(client);
  return { client, owned };
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
function watchErrors(client: RedisClient): void {
  client.on('error', (err: Error) => {
    const seen = lastErrors.get(client);
    if (seen !== undefined && foreignReply(seen) !== undefined && foreignReply(err.message) === undefined) return;
    lastErrors.set(client, err.message);
  });
}

/** The last connection error of a client Chronos opened (`connect ECONNREFUSED 127.0.0.1:6390`), or undefined. */
export function lastConnectionError(client: RedisClient): string | undefined {
  return lastErrors.get(client);
}

/**
 * A dedicated connection for blocking reads or pub/sub, owned by Chronos. Commands wait for a
 * reconnect instead of failing (`maxRetriesPerRequest: null`), as loops want; while Redis loads its
 * data it asks every {@link LOADING_POLL_MS} at most, whatever `client` does. With
 * `shardedSubscribers` a cluster client gets one subscriber connection per master, for SSUBSCRIBE
 * (ioredis resubscribes after a failover or a slot move); ignored for one Redis.
 */
export function duplicateConnection(client: RedisClient, { shardedSubscribers = false } = {}): RedisClient {
  const poll = (given: number | undefined) => Math.min(given ?? LOADING_POLL_MS, LOADING_POLL_MS);
  let dup: RedisClient;
  if (client instanceof Cluster || (client as { isCluster?: boolean }).isCluster) {
    const given = (client as Cluster).options.redisOptions;
    const redisOptions = { ...given, maxLoadingRetryTime: poll(given?.maxLoadingRetryTime), disconnectTimeout: DISCONNECT_WAIT_MS };
    dup = (client as Cluster).duplicate([], shardedSubscribers ? { shardedSubscribers, redisOptions } : { redisOptions });
  } else {
    dup = (client as Redis).duplicate({
      maxRetriesPerRequest: null,
      maxLoadingRetryTime: poll((client as Redis).options.maxLoadingRetryTime),
      disconnectTimeout: DISCONNECT_WAIT_MS,
    });
  }
  defineScripts(dup);
  watchErrors(dup);
  return dup;
}

function rejectKeyPrefix(client: RedisClient): void {
  const prefix = (client.options as { keyPrefix?: string }).keyPrefix;
  if (prefix) {
    throw new ChronosError(
      'CONFIG',
      `The Redis client has keyPrefix "${prefix}": ioredis applies it to declared keys only, so Chronos keys inside scripts would not match. Remove keyPrefix and use the Chronos \`namespace\` option instead.`,
    );
  }
}

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
    throw new RedisUnreachableError(describe(client), lastErrors.get(client) ?? (err as Error).message, timeoutMs, {
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
 * database other than 0 is asked for (a cluster has database 0 only).
 * @throws ChronosError (code `CONFIG`) naming the database asked for, the address and the server's error.
 */
async function checkDatabase(client: RedisClient): Promise<void> {
  if ((client as { isCluster?: boolean }).isCluster) return;
  const db = (client as Redis).options.db ?? 0;
  if (db === 0) return;
  const selected = Number(/\bdb=(\d+)/.exec(String(await (client as Redis).client('INFO')))?.[1] ?? 0);
  if (selected !== db) {
    const why = lastErrors.get(client) ?? 'the server did not select it';
    throw new ChronosError(
      'CONFIG',
      `Redis at ${describe(client)}: database ${db} cannot be used (${why}); the connection stayed on database ${selected}. Check the /db of the connection URL (REDIS_URL / --redis-url) against the server's "databases" setting.`,
    );
  }
}

/**
 * `err`'s message, and when it only says that the client gave up on a command (ioredis's `Reached
 * the max retries per request limit`, a closed connection: see UNAVAILABLE), which Redis it was
 * and the client's last connection error (`connect ECONNREFUSED …`), which the loops' failure logs
 * would not show otherwise.
 */
export function explainFailure(client: RedisClient, err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  if (!isRedisUnavailable(err)) return message;
  const last = lastErrors.get(client);
  return `${message} (Redis at ${describe(client)}${last !== undefined && last !== message ? `; last connection error: ${last}` : ''})`;
}

/** `host:port/db` of a client, for messages (never the password). */
export function describe(client: RedisClient): string {
  if ((client as { isCluster?: boolean }).isCluster) return 'cluster';
  const o = (client as Redis).options;
  return `${o.host ?? '127.0.0.1'}:${o.port ?? 6379}/${o.db ?? 0}`;
}

/** How long a close waits for Redis to answer its QUIT before it disconnects, ms. */
export const QUIT_WAIT_MS = 1000;

/** Clients closed by the part of Chronos that opened them (see {@link closedByOwner}). */
const ownerClosed = new WeakSet<object>();

/**
 * Closes an owned client (QUIT, falling back to disconnect) and remembers it as closed by its owner
 * (every part sharing it then refuses its calls by name: {@link refuseAfterOwnerClose}); a shared
 * one is left alone.
 */
export async function closeConnection(handle: ConnectionHandle): Promise<void> {
  if (!handle.owned) return;
  ownerClosed.add(handle.client);
  await closeClient(handle.client);
}

/**
 * True once the part of Chronos that opened `client` closed it (`closeConnection`): a QueueClient's
 * or an Inspector's `close()`, in a Nest app `app.close()`. A client the user passed in is never
 * closed by Chronos, so this stays false for it.
 */
export function closedByOwner(client: RedisClient): boolean {
  return ownerClosed.has(client);
}

/**
 * Makes every method of `proto` that `pick` accepts (own and inherited ones; never `constructor`)
 * reject with a `ChronosStateError` naming the method when `closed(this)` holds, instead of reaching a connection its owner closed (ioredis's bare
 * "Connection is closed."). The methods wrapped must return promises. `what` names the object in
 * the message (e.g. `this Inspector`).
 */
export function refuseAfterOwnerClose<T extends object>(
  proto: T,
  closed: (self: T) => boolean,
  what: string,
  pick: (name: string) => boolean = () => true,
): void {
  const seen = new Set<string>(['constructor']);
  for (let p: object | null = proto; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const name of Object.getOwnPropertyNames(p)) {
      const d = Object.getOwnPropertyDescriptor(p, name);
      if (seen.has(name) || !d || typeof d.value !== 'function' || !pick(name)) continue;
      seen.add(name);
      const method = d.value as (...args: unknown[]) => unknown;
      Object.defineProperty(proto, name, {
        ...d,
        value: function (this: T, ...args: unknown[]): unknown {
          if (closed(this))
            return Promise.reject(
              new ChronosStateError(
                `${name}: ${what}'s connection was closed by its owner (close(); in a Nest app, at app.close()): it is gone. Call before the close, or on an instance that is open.`,
              ),
            );
          return method.apply(this, args);
        },
      });
    }
  }
}

/** Closes a client Chronos owns: QUIT, then disconnect (`QUIT_WAIT_MS` after it when Redis does not answer). */
export async function closeClient(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'wait') {
    // opened lazily and never used: a QUIT would connect first
    client.disconnect();
    return;
  }
  try {
    await Promise.race([client.quit(), new Promise((r) => setTimeout(r, QUIT_WAIT_MS).unref())]);
  } catch {
    /* already closed or unreachable: disconnect below */
  }
  client.disconnect();
}
