/**
 * Opening the connections Chronos uses: the `connection` option's shapes, the options Chronos gives
 * the clients it creates (Cluster retries, Sentinel failover, loading polls) and their duplicates for
 * blocking reads and pub/sub. What their failures say is failures.ts, the start-up check
 * server-check.ts, closing them and the calls after a close owner-close.ts (re-exported here).
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { ChronosError } from '../runtime/errors.js';
import { watchErrors } from './failures.js';
import type { ConnectionHandle } from './owner-close.js';
import { reopenWhenEnded } from './reopen.js';
import { defineScripts } from './scripts.js';
import { redisUrlProblem } from './url-check.js';
import type { RedisClient } from './types.js';

export type { RedisClient } from './types.js';
export { describe, explainFailure, isRedisUnavailable, isUnblocked, lastConnectionError, unavailableFor } from './failures.js';
export { checkServer, type CheckServerOptions } from './server-check.js';
export { closeClient, closeConnection, closedByOwner, QUIT_WAIT_MS, type ConnectionHandle } from './owner-close.js';

/**
 * How Chronos reaches Redis: a URL (`redis://[:password@]host:port[/db]`, `rediss://…`), ioredis
 * options, a URL with ioredis options beside it ({@link UrlConnectionOptions}), an existing ioredis
 * `Redis` or `Cluster` instance, or `{ cluster: nodes, options }`.
 * A client passed in is shared: Chronos never closes it (asynq's ownership rule); clients Chronos
 * creates (from a URL or options), and every blocking/subscriber duplicate, are owned and closed.
 * @publicApi
 */
export type RedisConnection =
  | string
  | RedisOptions
  | UrlConnectionOptions
  | RedisClient
  | {
      /** The cluster's startup nodes, as ioredis `Cluster` takes them (e.g. `[{ host, port }]` or URLs). */
      cluster: ConstructorParameters<typeof Cluster>[0];
      /** ioredis `ClusterOptions` (e.g. `redisOptions` with the password). */
      options?: ClusterOptions;
    };

/**
 * A URL with ioredis options beside it (`{ url: process.env.REDIS_URL, maxRetriesPerRequest: 1 }`),
 * as node-redis takes it: ioredis has no `url` option and would connect to 127.0.0.1:6379 in
 * silence (BullMQ #1220, #2497). The URL gives the address, user, password and db; the other
 * options everything else. A `host`, `port`, `path` or `sentinels` beside it is refused
 * (`ChronosError` CONFIG): one of them would be ignored.
 * @publicApi
 */
export type UrlConnectionOptions = Omit<RedisOptions, 'host' | 'port' | 'path' | 'sentinels'> & {
  /** `redis://[[user]:password@]host:port[/db]` or `rediss://…`. */
  url: string;
};

/** The options beside a URL that name the address too (refused: {@link UrlConnectionOptions}). */
const ADDRESS_KEYS = ['host', 'port', 'path', 'sentinels'] as const;

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
  else if (typeof input === 'string') client = new Redis(checkUrlString(input), loading);
  else if (isRedisClient(input)) {
    client = input;
    owned = false;
  } else if ('cluster' in input) {
    const redisOptions = { ...loading, ...input.options?.redisOptions };
    const lazy = marked ? { lazyConnect: true } : {};
    client = new Cluster(input.cluster, { ...CLUSTER_RETRY_OPTIONS, ...lazy, ...input.options, redisOptions });
  } else if ('url' in input) {
    const { url, ...given } = checkUrlOptions(input as UrlConnectionOptions);
    client = new Redis(url.trim(), { ...loading, ...given });
  } else {
    const given = input as RedisOptions;
    client = new Redis({ ...loading, ...(given.sentinels ? SENTINEL_OPTIONS : {}), ...given });
  }
  rejectKeyPrefix(client);
  defineScripts(client);
  if (owned) {
    watchErrors(client);
    reopenWhenEnded(client);
  }
  return { client, owned };
}

/**
 * A dedicated connection for blocking reads or pub/sub, owned by Chronos. Commands wait for a
 * reconnect instead of failing (`maxRetriesPerRequest: null`), as loops want; while Redis loads its
 * data it asks every {@link LOADING_POLL_MS} at most, whatever `client` does. With
 * `shardedSubscribers` a cluster client gets one subscriber connection per master, for SSUBSCRIBE
 * (ioredis resubscribes after a failover or a slot move); ignored for one Redis. `subscriber`: the
 * connection only ever subscribes (a connection in subscribed mode runs no script), so the Chronos
 * scripts are not defined on it: ioredis hashes each script's source per client (some 4 ms of a
 * worker's start for its three subscribers).
 */
export function duplicateConnection(client: RedisClient, { shardedSubscribers = false, subscriber = false } = {}): RedisClient {
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
  if (!subscriber) defineScripts(dup);
  watchErrors(dup);
  reopenWhenEnded(dup);
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

/**
 * @throws ChronosError CONFIG unless `url` is a redis:// or rediss:// URL with no address option
 * beside it (the URL itself is not named: it may hold a password).
 */
function checkUrlOptions(input: UrlConnectionOptions): UrlConnectionOptions {
  const problem = urlOptionsProblem(input);
  if (problem) throw new ChronosError('CONFIG', `connection: ${problem}`);
  return input;
}

/**
 * A connection string with a scheme (`…://`) must be a redis:// or rediss:// URL: ioredis took
 * `http://host` as a host to retry for ever (an enqueue never settled) and threw a bare TypeError for
 * a redis URL it could not parse. A string without one is left to ioredis (a socket path, `host:port`).
 * @returns the URL without white space around it.
 * @throws ChronosError CONFIG naming the URL, its credentials hidden
 */
function checkUrlString(url: string): string {
  const problem = url.includes('://') ? redisUrlProblem(url) : undefined;
  if (problem) throw new ChronosError('CONFIG', `connection: ${problem}`);
  // trimmed as the URL check (WHATWG URL) reads it: ioredis took " redis://h" (a REDIS_URL with a stray
  // space or line break before it) for a host, and threw a bare "TypeError: Invalid URL"
  return url.trim();
}

/** What is wrong with a `{ url, … }` connection, or undefined (the Nest module's validation says it too). @internal */
export function urlOptionsProblem(input: { url?: unknown }): string | undefined {
  const { url } = input;
  if (typeof url !== 'string') return `url: expected a redis:// or rediss:// URL, got ${typeof url}`;
  const problem = redisUrlProblem(url);
  if (problem) return `url: ${problem}`;
  const beside = ADDRESS_KEYS.filter((k) => (input as Record<string, unknown>)[k] !== undefined);
  if (beside.length) return `url and ${beside.join(', ')} both name the address: give the address in one of them`;
  return undefined;
}
