import { DEFAULTS } from '../../core/defaults.js';
import { isRedisClient, type RedisConnection } from '../../core/redis/connection.js';
import { isValidName } from '../../core/redis/keys.js';
import type { BackoffFn } from '../../core/queue/task.js';
import { newInstanceId } from '../../core/instance-id.js';
import { ChronosConfigError } from '../errors/chronos-config.error.js';
import type { ChronosModuleOptions } from './chronos-options.interface.js';

/** The options after validation, with every default applied. @internal */
export interface ResolvedChronosOptions {
  connection: RedisConnection;
  namespace: string;
  instanceId: string;
  timeZone: string;
  queue: string;
  maxRetry: number;
  timeout: number;
  leaderTtl: number;
  heartbeatInterval: number;
  concurrency: number;
  /** Explicit queues, or undefined: derive from the discovered decorators. */
  queues?: Record<string, number>;
  /** Whether `queues` was a list (its order is the strict priority order). */
  queuesOrdered: boolean;
  strictPriority: boolean;
  shutdownTimeout: number;
  visibilityTimeout: number;
  recoverInterval: number;
  maxDeliveries: number;
  maxPayloadBytes: number;
  requireNoEviction: boolean;
  backoff?: BackoffFn;
  scheduler: { enabled: boolean; eligible: boolean };
  worker: { enabled: boolean };
}

const KEYS = new Set<keyof ChronosModuleOptions>([
  'connection',
  'namespace',
  'instanceId',
  'timeZone',
  'queue',
  'maxRetry',
  'timeout',
  'leaderTtl',
  'heartbeatInterval',
  'concurrency',
  'queues',
  'strictPriority',
  'shutdownTimeout',
  'visibilityTimeout',
  'recoverInterval',
  'maxDeliveries',
  'backoff',
  'scheduler',
  'worker',
  'maxPayloadBytes',
  'requireNoEviction',
]);

const DEFAULT_URL = 'redis://127.0.0.1:6379';

function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'function') return 'a function';
  if (typeof v === 'bigint') return `${v}n`;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** True for a valid IANA zone name (Intl knows it). */
export function isTimeZone(tz: unknown): tz is string {
  if (typeof tz !== 'string' || tz.length === 0) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * Validates module options and applies the defaults (from core `DEFAULTS`, the one place a
 * default is written). Both `forRoot` and `forRootAsync` go through here.
 * @throws ChronosConfigError listing every problem (unknown keys included).
 */
export function resolveOptions(input: ChronosModuleOptions | undefined | null): ResolvedChronosOptions {
  const issues: string[] = [];
  if (input === undefined || input === null) input = {};
  if (typeof input !== 'object' || Array.isArray(input)) throw new ChronosConfigError([`expected an options object, got ${show(input)}`]);
  const o = input as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!KEYS.has(key as keyof ChronosModuleOptions)) issues.push(`unknown option "${key}"`);

  const int = (key: keyof ChronosModuleOptions, min: number, def: number, unit = ''): number => {
    const v = o[key];
    if (v === undefined) return def;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
      issues.push(`${key}: expected an integer >= ${min}${unit}, got ${show(v)}`);
      return def;
    }
    return v;
  };
  const name = (key: keyof ChronosModuleOptions, def: string): string => {
    const v = o[key];
    if (v === undefined) return def;
    if (!isValidName(v)) {
      issues.push(`${key}: expected 1-200 characters of [A-Za-z0-9_.:-], got ${show(v)}`);
      return def;
    }
    return v;
  };
  const bool = (key: keyof ChronosModuleOptions, def: boolean): boolean => {
    const v = o[key];
    if (v === undefined) return def;
    if (typeof v !== 'boolean') {
      issues.push(`${key}: expected true or false, got ${show(v)}`);
      return def;
    }
    return v;
  };

  const connection = checkConnection(o.connection, issues);
  const namespace = name('namespace', DEFAULTS.namespace);
  let instanceId = newInstanceId();
  if (o.instanceId !== undefined) {
    if (typeof o.instanceId !== 'string' || o.instanceId.length === 0 || o.instanceId.length > 200 || /\s/.test(o.instanceId)) {
      issues.push(`instanceId: expected a non-empty string of at most 200 characters without spaces, got ${show(o.instanceId)}`);
    } else instanceId = o.instanceId;
  }
  let timeZone: string = DEFAULTS.timeZone;
  if (o.timeZone !== undefined) {
    if (isTimeZone(o.timeZone)) timeZone = o.timeZone;
    else issues.push(`timeZone: unknown IANA time zone ${show(o.timeZone)}`);
  }
  const queue = name('queue', DEFAULTS.queue);
  const maxRetry = int('maxRetry', 0, DEFAULTS.maxRetry);
  const timeout = int('timeout', 0, DEFAULTS.timeoutMs, ' (ms)');
  const leaderTtl = int('leaderTtl', 1000, DEFAULTS.leaderTtlMs, ' (ms)');
  const heartbeatInterval = int('heartbeatInterval', 100, DEFAULTS.instanceHeartbeatMs, ' (ms)');
  const concurrency = int('concurrency', 1, DEFAULTS.concurrency);
  const strictPriority = bool('strictPriority', false);
  const shutdownTimeout = int('shutdownTimeout', 0, DEFAULTS.shutdownTimeoutMs, ' (ms)');
  const visibilityTimeout = int('visibilityTimeout', 100, DEFAULTS.visibilityTimeoutMs, ' (ms)');
  const recoverInterval = int('recoverInterval', 10, DEFAULTS.recoverIntervalMs, ' (ms)');
  const maxDeliveries = int('maxDeliveries', 1, DEFAULTS.maxDeliveries);
  const maxPayloadBytes = int('maxPayloadBytes', 0, DEFAULTS.maxPayloadBytes, ' (bytes; 0 = no limit)');
  const requireNoEviction = bool('requireNoEviction', false);

  let backoff: BackoffFn | undefined;
  if (o.backoff !== undefined) {
    if (typeof o.backoff === 'function') backoff = o.backoff as BackoffFn;
    else issues.push(`backoff: expected a function (retried, error, task) => ms, got ${show(o.backoff)}`);
  }

  let queues: Record<string, number> | undefined;
  let queuesOrdered = false;
  if (o.queues !== undefined) {
    const q = o.queues;
    let entries: [string, unknown][] | undefined;
    if (Array.isArray(q)) {
      entries = q.map((n) => [n as string, 1]);
      queuesOrdered = true;
    } else if (typeof q === 'object' && q !== null) entries = Object.entries(q);
    else issues.push(`queues: expected a list of queue names or { name: weight }, got ${show(q)}`);
    if (entries) {
      if (entries.length === 0) issues.push('queues: expected at least one queue');
      const seen = new Set<string>();
      for (const [n, w] of entries) {
        if (!isValidName(n)) issues.push(`queues: invalid queue name ${show(n)} (1-200 characters of [A-Za-z0-9_.:-])`);
        else if (seen.has(n)) issues.push(`queues: "${n}" is listed twice`);
        seen.add(n);
        if (typeof w !== 'number' || !Number.isInteger(w) || w < 1)
          issues.push(`queues.${n}: expected an integer weight >= 1, got ${show(w)}`);
      }
      queues = Object.fromEntries(entries as [string, number][]);
    }
  }

  const scheduler = { enabled: true, eligible: true };
  const s = o.scheduler;
  if (typeof s === 'boolean') scheduler.enabled = s;
  else if (typeof s === 'object' && s !== null && !Array.isArray(s)) {
    for (const key of Object.keys(s)) if (key !== 'eligible') issues.push(`scheduler: unknown option "${key}"`);
    const e = (s as { eligible?: unknown }).eligible;
    if (e !== undefined && typeof e !== 'boolean') issues.push(`scheduler.eligible: expected true or false, got ${show(e)}`);
    else if (e !== undefined) scheduler.eligible = e;
  } else if (s !== undefined) issues.push(`scheduler: expected true, false or { eligible: boolean }, got ${show(s)}`);

  const worker = { enabled: bool('worker', true) };

  if (issues.length) throw new ChronosConfigError(issues);
  return {
    connection,
    namespace,
    instanceId,
    timeZone,
    queue,
    maxRetry,
    timeout,
    leaderTtl,
    heartbeatInterval,
    concurrency,
    queues,
    queuesOrdered,
    strictPriority,
    shutdownTimeout,
    visibilityTimeout,
    recoverInterval,
    maxDeliveries,
    maxPayloadBytes,
    requireNoEviction,
    backoff,
    scheduler,
    worker,
  };
}

function checkConnection(c: unknown, issues: string[]): RedisConnection {
  if (c === undefined) return DEFAULT_URL;
  if (typeof c === 'string') {
    let ok = false;
    try {
      ok = ['redis:', 'rediss:'].includes(new URL(c).protocol);
    } catch {
      /* not a URL */
    }
    if (!ok)
      issues.push('connection: expected a redis:// or rediss:// URL, ioredis options or an ioredis client, got a string that is not one');
    return c;
  }
  if (typeof c !== 'object' || c === null || Array.isArray(c)) {
    issues.push(`connection: expected a redis:// URL, ioredis options or an ioredis client, got ${show(c)}`);
    return DEFAULT_URL;
  }
  if (isRedisClient(c)) {
    const prefix = (c.options as { keyPrefix?: string }).keyPrefix;
    if (prefix)
      issues.push(
        `connection: the Redis client has keyPrefix "${prefix}", which Chronos cannot honour inside its scripts; remove it and use \`namespace\``,
      );
    return c;
  }
  if ('cluster' in c) {
    if (!Array.isArray((c as { cluster: unknown }).cluster)) issues.push('connection.cluster: expected a list of cluster nodes');
    const prefix = (c as { options?: { redisOptions?: { keyPrefix?: string }; keyPrefix?: string } }).options;
    if (prefix?.keyPrefix || prefix?.redisOptions?.keyPrefix) issues.push('connection: keyPrefix is not supported; use `namespace`');
    return c as RedisConnection;
  }
  if ((c as { keyPrefix?: string }).keyPrefix)
    issues.push('connection: keyPrefix is not supported (ioredis applies it to declared keys only); use `namespace`');
  return c as RedisConnection;
}
