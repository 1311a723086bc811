import { DEFAULTS } from '../defaults.js';
import { InvalidOptionsError } from '../errors.js';
import type { EventBus } from '../events.js';
import type { ChronosLogger } from '../logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { isValidName } from '../redis/keys.js';
import type { Mux } from './mux.js';
import { defaultBackoff, type BackoffFn } from './task.js';

/**
 * Options of a worker server. Durations are milliseconds.
 * @publicApi
 */
export interface ServerOptions {
  /** Redis to use. @defaultValue redis://127.0.0.1:6379 */
  connection?: RedisConnection;
  /** Key prefix isolating this app on a shared Redis. @defaultValue 'chronos' */
  namespace?: string;
  /** Handlers running at once on this server. @defaultValue 10 */
  concurrency?: number;
  /**
   * Queues to serve: a list (equal weights) or `{ name: weight }` (asynq-style: a queue of
   * weight 6 is tried first about 6 times as often as one of weight 1). @defaultValue ['default']
   */
  queues?: readonly string[] | Readonly<Record<string, number>>;
  /** Serve queues in strict priority (the order of `queues`, or highest weight first). @defaultValue false */
  strictPriority?: boolean;
  /** Grace for in-flight handlers at shutdown before they are aborted and requeued, ms. @defaultValue 8000 */
  shutdownTimeout?: number;
  /** A pending entry idle this long is reclaimed from its (presumably dead) consumer, ms. @defaultValue 30000 */
  visibilityTimeout?: number;
  /** How often this server looks for entries idle past the visibility timeout, ms. @defaultValue 2000 */
  recoverInterval?: number;
  /** Reclaims before a task is dead as poison. @defaultValue 5 */
  maxDeliveries?: number;
  /** Longest wait between checks for due delayed/retry tasks, ms. @defaultValue 1000 */
  forwardInterval?: number;
  /** Longest single blocking read, ms. @defaultValue 1000 */
  blockTimeout?: number;
  /** Retry delay of failed tasks. @defaultValue Sidekiq/asynq formula, see {@link defaultBackoff} */
  backoff?: BackoffFn;
  /** Dead-letter cap by count, per queue. @defaultValue 10000 */
  deadMaxCount?: number;
  /** Dead-letter cap by age, ms. @defaultValue 7776000000 (90 days) */
  deadMaxAge?: number;
  /**
   * Refuse to start (RedisEvictionPolicyError) when Redis's `maxmemory-policy` is not `noeviction`,
   * instead of logging a warning. @defaultValue false
   */
  requireNoEviction?: boolean;
  /** Id of this server: its consumer name in every group. @defaultValue `<hostname>:<pid>:<random>` */
  serverId?: string;
  logger?: ChronosLogger;
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

/**
 * Validates server options, collecting every problem (unknown keys included), and applies the
 * defaults of {@link DEFAULTS}.
 * @throws InvalidOptionsError listing every problem.
 */
export function resolveServerOptions(options: ServerOptions): {
  opts: ResolvedServerOptions;
  namespace: string;
  /** Queue name and weight, in the order given. */
  entries: [string, number][];
  /** True when `queues` was a list (its order is the strict-priority order). */
  listed: boolean;
} {
  const issues: string[] = [];
  for (const key of Object.keys(options)) if (!SERVER_KEYS.has(key)) issues.push(`unknown option "${key}"`);
  const int = (name: keyof ServerOptions, min: number, def: number): number => {
    const v = options[name] ?? def;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) issues.push(`${name}: expected an integer >= ${min}, got ${String(v)}`);
    return v as number;
  };
  const opts: ResolvedServerOptions = {
    concurrency: int('concurrency', 1, DEFAULTS.concurrency),
    strictPriority: options.strictPriority ?? false,
    shutdownTimeout: int('shutdownTimeout', 0, DEFAULTS.shutdownTimeoutMs),
    visibilityTimeout: int('visibilityTimeout', 100, DEFAULTS.visibilityTimeoutMs),
    recoverInterval: int('recoverInterval', 10, DEFAULTS.recoverIntervalMs),
    maxDeliveries: int('maxDeliveries', 1, DEFAULTS.maxDeliveries),
    forwardInterval: int('forwardInterval', 10, DEFAULTS.forwardIntervalMs),
    blockTimeout: int('blockTimeout', 10, DEFAULTS.blockTimeoutMs),
    backoff: options.backoff ?? defaultBackoff,
    deadMaxCount: int('deadMaxCount', 0, DEFAULTS.deadMaxCount),
    deadMaxAge: int('deadMaxAge', 0, DEFAULTS.deadMaxAgeMs),
    requireNoEviction: options.requireNoEviction ?? false,
  };
  if (typeof opts.requireNoEviction !== 'boolean') {
    issues.push(`requireNoEviction: expected true or false, got ${String(opts.requireNoEviction)}`);
  }
  if (typeof opts.backoff !== 'function')
    issues.push(`backoff: expected a function (retried, error, task) => ms, got ${typeof opts.backoff}`);
  const namespace = options.namespace ?? DEFAULTS.namespace;
  if (!isValidName(namespace)) issues.push(`namespace: expected 1-200 characters of [A-Za-z0-9_.:-], got ${JSON.stringify(namespace)}`);
  const q = options.queues ?? [DEFAULTS.queue];
  const listed = Array.isArray(q);
  const entries: [string, number][] = listed ? (q as readonly string[]).map((n) => [n, 1]) : Object.entries(q as Record<string, number>);
  if (entries.length === 0) issues.push('queues: expected at least one queue');
  for (const [name, weight] of entries) {
    if (!isValidName(name)) issues.push(`queues: invalid queue name ${JSON.stringify(name)}`);
    if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1)
      issues.push(`queues.${name}: expected an integer weight >= 1, got ${String(weight)}`);
  }
  if (new Set(entries.map((e) => e[0])).size !== entries.length) issues.push('queues: a queue is listed twice');
  if (issues.length) throw new InvalidOptionsError(issues, 'server options');
  return { opts, namespace, entries, listed };
}
