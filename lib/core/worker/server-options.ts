import { DEFAULTS } from '../runtime/defaults.js';
import type { EventBus } from '../runtime/events.js';
import type { ChronosLogger, FailureLog } from '../runtime/logger.js';
import type { ServiceHealth } from '../runtime/service.js';
import { OptionProblems, orThrow, type Checked } from '../runtime/options.js';
import { SERVER_KEY_HINTS } from '../runtime/migrant-hints.js';
import type { RedisConnection } from '../redis/connection.js';
import type { Mux } from './mux.js';
import { defaultBackoff, type BackoffFn } from '../queue/task.js';

/**
 * Options of a worker server. Durations are milliseconds.
 * @publicApi
 */
export interface ServerOptions {
  /** Redis to use. @defaultValue redis://127.0.0.1:6379 */
  connection?: RedisConnection;
  /** Key prefix isolating this app on a shared Redis. @defaultValue 'chronos' */
  namespace?: string;
  /**
   * Handlers running at once on this server, at most (an integer from 1 to 2^53 − 1; a timed-out or
   * cancelled handler that ignores its signal counts until it returns). @defaultValue 10
   */
  concurrency?: number;
  /**
   * Queues to serve: a list (equal weights) or `{ name: weight }` (the backlogged queues share the
   * fetches by smooth weighted round-robin: a queue of weight 6 gets 6 tasks for every 1 of a queue of
   * weight 1; a weight is an integer from 1 to 1,000,000). @defaultValue ['default']
   */
  queues?: readonly string[] | Readonly<Record<string, number>>;
  /** Serve queues in strict priority (the order of `queues`, or highest weight first). @defaultValue false */
  strictPriority?: boolean;
  /** Grace for in-flight handlers at shutdown before they are aborted and requeued, ms. @defaultValue 8000 */
  shutdownTimeout?: number;
  /**
   * A pending entry idle this long is reclaimed from its consumer, ms: a consumer that is alive but
   * stopped or hung (a server whose process is gone is found by its liveness and reclaimed at once).
   * A running handler's claim is renewed every third of it, and the idle time counts from the last
   * renewal: a stall of two thirds of it can be enough for a running task to run elsewhere too.
   * @defaultValue 30000
   */
  visibilityTimeout?: number;
  /**
   * How often this server sweeps for entries idle past the visibility timeout, ms: every queue while
   * another server is overdue (its main loop stopped), else one queue in turn. @defaultValue 2000
   */
  recoverInterval?: number;
  /** Reclaims before a task is dead as poison (an integer from 1 to 2^53 − 1). @defaultValue 5 */
  maxDeliveries?: number;
  /**
   * Longest wait between checks for due delayed/retry tasks, ms: a fallback poll (the server sleeps to
   * the next due time, and is woken when an enqueue makes a queue due sooner). @defaultValue 30000
   */
  forwardInterval?: number;
  /** Longest single blocking read, ms (ended sooner when a queue is paused or a slot frees up). @defaultValue 5000 */
  blockTimeout?: number;
  /** Retry delay of failed tasks. @defaultValue Sidekiq/asynq formula, see {@link defaultBackoff} */
  backoff?: BackoffFn;
  /** Dead-letter cap by count, per queue (an integer from 0 to 2^53 − 1). @defaultValue 10000 */
  deadMaxCount?: number;
  /** Dead-letter cap by age, ms (an integer from 0 to 2^53 − 1). @defaultValue 7776000000 (90 days) */
  deadMaxAge?: number;
  /**
   * Refuse to start (RedisEvictionPolicyError) when Redis's `maxmemory-policy` is not `noeviction`,
   * instead of logging a warning. @defaultValue false
   */
  requireNoEviction?: boolean;
  /**
   * Id of this server: its consumer name in every group. A server started with a given id takes back
   * at start, at once, what its previous process left pending under that id (it crashed): never run
   * two live servers with one id (on one Redis or Sentinel, `start()` throws a ChronosStateError
   * while a live server has the id). @defaultValue `<hostname>:<pid>:<random>`
   */
  serverId?: string;
  /**
   * Where the server's messages go; `false` drops them.
   * @defaultValue a console logger (`[Chronos] Worker: …` lines on stdout/stderr)
   */
  logger?: ChronosLogger | false;
  /** Event bus shared with the client and scheduler of the app. */
  events?: EventBus;
  /** Handler registry; a new one when omitted. */
  mux?: Mux;
}

const SERVER_KEYS = new Set([
  'connection',
  'namespace',
  'concurrency',
  'queues',
  'strictPriority',
  'shutdownTimeout',
  'visibilityTimeout',
  'recoverInterval',
  'maxDeliveries',
  'forwardInterval',
  'blockTimeout',
  'backoff',
  'deadMaxCount',
  'deadMaxAge',
  'serverId',
  'logger',
  'events',
  'mux',
  'requireNoEviction',
]);

/** The numeric and behavioural options of a server, validated, defaults applied. */
export type ResolvedServerOptions = Required<
  Omit<ServerOptions, 'connection' | 'namespace' | 'queues' | 'serverId' | 'logger' | 'events' | 'mux'>
>;

/** Server options resolved: the numeric and behavioural ones, the namespace and the queues. */
export interface ResolvedServer {
  opts: ResolvedServerOptions;
  namespace: string;
  /** Queue name and weight, in the order given. */
  entries: [string, number][];
  /** True when `queues` was a list (its order is the strict-priority order). */
  listed: boolean;
}

/**
 * Validates server options, collecting every problem (unknown keys included), and applies the
 * defaults of {@link DEFAULTS}.
 * @throws InvalidOptionsError listing every problem.
 */
export function resolveServerOptions(options: ServerOptions): ResolvedServer {
  return orThrow(checkServerOptions(options), 'server options');
}

/** Validates server options without throwing: every problem, and the options with the defaults applied. */
export function checkServerOptions(options: ServerOptions): Checked<ResolvedServer> {
  const p = new OptionProblems();
  p.unknownKeys(options, SERVER_KEYS, '', SERVER_KEY_HINTS);
  const int = (key: keyof ServerOptions, min: number, def: number, unit?: 'ms' | 'timer'): number => {
    const v = options[key];
    if (unit === 'timer') p.timerMs(key, v, min);
    else p.int(key, v, min, unit);
    return (v ?? def) as number;
  };
  const opts: ResolvedServerOptions = {
    concurrency: int('concurrency', 1, DEFAULTS.concurrency),
    strictPriority: options.strictPriority ?? false,
    shutdownTimeout: int('shutdownTimeout', 0, DEFAULTS.shutdownTimeoutMs, 'timer'),
    visibilityTimeout: int('visibilityTimeout', 100, DEFAULTS.visibilityTimeoutMs, 'timer'),
    recoverInterval: int('recoverInterval', 10, DEFAULTS.recoverIntervalMs, 'timer'),
    maxDeliveries: int('maxDeliveries', 1, DEFAULTS.maxDeliveries),
    forwardInterval: int('forwardInterval', 10, DEFAULTS.forwardIntervalMs, 'timer'),
    blockTimeout: int('blockTimeout', 10, DEFAULTS.blockTimeoutMs, 'timer'),
    backoff: options.backoff ?? defaultBackoff,
    deadMaxCount: int('deadMaxCount', 0, DEFAULTS.deadMaxCount),
    deadMaxAge: int('deadMaxAge', 0, DEFAULTS.deadMaxAgeMs, 'ms'),
    requireNoEviction: options.requireNoEviction ?? false,
  };
  p.bool('requireNoEviction', options.requireNoEviction);
  p.bool('strictPriority', options.strictPriority);
  p.fn('backoff', options.backoff, '(retried, error, task) => ms');
  p.logger('logger', options.logger);
  p.name('namespace', options.namespace);
  const { entries, listed } = queueEntries(options.queues === undefined ? [DEFAULTS.queue] : options.queues, p);
  return { value: { opts, namespace: options.namespace ?? DEFAULTS.namespace, entries, listed }, problems: p.list };
}

/**
 * The largest weight of a queue (`queues: { name: weight }`): 1,000,000. Weights are shares (6 and 1
 * serve as 600 and 100 do); the bound keeps the round-robin's credits (sums of weights, fetch-size
 * multiples) exact integers, where a weight of 1e300 drowned every other queue's.
 */
export const WEIGHT_MAX = 1_000_000;

/** The queues of `queues` (a list, or `{ name: weight }`), each name and weight (an integer from 1 to 1,000,000) checked once. */
function queueEntries(q: unknown, p: OptionProblems): { entries: [string, number][]; listed: boolean } {
  const listed = Array.isArray(q);
  if (!listed && (typeof q !== 'object' || q === null)) {
    p.expected('queues', 'a list of queue names or { name: weight }', q);
    return { entries: [], listed };
  }
  const entries: [string, number][] = listed ? (q as string[]).map((n) => [n, 1]) : Object.entries(q as Record<string, number>);
  if (entries.length === 0) p.add('queues', 'expected at least one queue');
  const seen = new Set<string>();
  for (const [name, weight] of entries) {
    if (p.name('queues', name, true) && seen.has(name)) p.add('queues', `${JSON.stringify(name)} is listed twice`);
    seen.add(name);
    p.int(`queues.${name}`, weight, 1, undefined, WEIGHT_MAX);
  }
  return { entries, listed };
}

/** What `ChronosServer.health()` reports. */
export interface ServerHealth {
  /** True while the server runs its loops (started and not stopping). */
  running: boolean;
  /** The fetch loop (blocking `XREADGROUP` on the queues). */
  fetch: FailureLog['status'];
  /** The forward loop (moves due delayed and retry tasks into their streams). */
  forward: FailureLog['status'];
  /** When a fetch read last answered (epoch ms, local clock; a blocking read answers at least every `blockTimeout`). */
  lastFetchAt?: number;
  /** The blocking connection the fetch reads use. */
  blocking: {
    /** Connected and ready. */
    ready: boolean;
  };
  /** Each background service of the server (fetch, forward, heartbeat, liveness, recover, …, notices). */
  services: ServiceHealth[];
}
