import { DEFAULTS } from '../runtime/defaults.js';
import { EventBus } from '../runtime/events.js';
import { newInstanceId } from '../runtime/instance-id.js';
import { resolveLogger, type ChronosLogger } from '../runtime/logger.js';
import { OptionProblems, orThrow, type Checked } from '../runtime/options.js';
import type { RedisConnection } from '../redis/connection.js';
import { HISTORY } from '../redis/protocol.js';

/**
 * Options of a {@link Scheduler}. Durations are milliseconds.
 * @publicApi
 */
export interface SchedulerOptions {
  /** Redis to use. @defaultValue redis://127.0.0.1:6379 */
  connection?: RedisConnection;
  /** Key prefix isolating this app: two namespaces never share a lease or a schedule. @defaultValue 'chronos' */
  namespace?: string;
  /** Id of this instance (the lease holder's name). @defaultValue `<hostname>:<pid>:<random>` */
  instanceId?: string;
  /** Leader lease TTL, ms (≥ 1000); renewed every TTL/2. @defaultValue 5000 */
  leaderTtl?: number;
  /** Whether this instance may become leader. Non-eligible instances still declare their schedules. @defaultValue true */
  eligible?: boolean;
  /** Default IANA time zone of cron schedules. @defaultValue 'UTC' */
  timeZone?: string;
  /** Liveness heartbeat of this instance, ms (≥ 100). @defaultValue 5000 */
  heartbeatInterval?: number;
  /**
   * Refuse to start (RedisEvictionPolicyError) when Redis's `maxmemory-policy` is not `noeviction`,
   * instead of logging a warning. @defaultValue false
   */
  requireNoEviction?: boolean;
  /**
   * Write schedule definitions in the compact stored form: about 200 B less per schedule in Redis
   * (fields at their usual values left out; README "How a schedule is stored"). Both forms are read
   * whatever this says. Turn it on only once every instance of the namespace (schedulers, and
   * Inspectors that add schedules) runs this version or a later one: an earlier version cannot
   * read a compact definition. @defaultValue false
   */
  compactSchedules?: boolean;
  /**
   * Most fire records kept per schedule (its history: `Inspector.scheduleHistory`, `chronos schedule
   * history`, the console), an integer from 0 to 100; 0 keeps none (the leader writes no history).
   * A record takes about 145 B of Redis, so 100 records are about 14.5 KB per schedule (14.5 GB at
   * 1,000,000 schedules that fire often): lower it for schedules by the hundred thousand, as
   * sidekiq-cron's `cron_history_size` (default 10) does. The leader of each shard applies its own
   * setting when it fires: set it alike on every instance. An operator's trigger-now or backfill
   * trims the list at 100 records; the next fire trims it back. @defaultValue 100
   */
  historyLimit?: number;
  /**
   * The largest payload of a schedule, in UTF-8 bytes of its JSON, as the client's limit of an
   * enqueue (each trigger copies the payload into a task): a bigger one is an InvalidScheduleError
   * naming its size and the limit, at `register` and at the runtime adds. 0 = no limit. @defaultValue 1048576 (1 MiB)
   */
  maxPayloadBytes?: number;
  /** Where the scheduler logs; `false` drops its messages. @defaultValue a console logger with context 'Scheduler' */
  logger?: ChronosLogger | false;
  /** Where the scheduler emits its events (leader.*, schedule.*). @defaultValue a new EventBus */
  events?: EventBus;
}

/** {@link SchedulerOptions} validated, with every default applied. Durations are ms. */
export interface ResolvedSchedulerOptions {
  connection?: RedisConnection;
  namespace: string;
  instanceId: string;
  leaderTtlMs: number;
  eligible: boolean;
  timeZone: string;
  heartbeatMs: number;
  requireNoEviction: boolean;
  compactSchedules: boolean;
  /** Most fire records kept per schedule, 0–100 (0: none written). */
  historyLimit: number;
  /** The largest schedule payload, UTF-8 bytes of its JSON; 0 = no limit. */
  maxPayloadBytes: number;
  logger: ChronosLogger;
  events: EventBus;
}

const OPTION_KEYS = new Set([
  'connection',
  'namespace',
  'instanceId',
  'leaderTtl',
  'eligible',
  'timeZone',
  'heartbeatInterval',
  'logger',
  'events',
  'requireNoEviction',
  'compactSchedules',
  'historyLimit',
  'maxPayloadBytes',
]);

/**
 * Validates scheduler options and applies the defaults.
 * @throws InvalidOptionsError listing every problem (unknown option, namespace, leaderTtl, heartbeatInterval, timeZone,
 *   eligible, requireNoEviction, compactSchedules, historyLimit, maxPayloadBytes, logger), each naming the offending value.
 */
export function resolveSchedulerOptions(options: SchedulerOptions): ResolvedSchedulerOptions {
  return orThrow(checkSchedulerOptions(options), 'scheduler options');
}

/** Validates scheduler options without throwing: every problem, and the options with the defaults applied. */
export function checkSchedulerOptions(options: SchedulerOptions): Checked<ResolvedSchedulerOptions> {
  const p = new OptionProblems();
  p.unknownKeys(options, OPTION_KEYS);
  p.name('namespace', options.namespace);
  p.timerMs('leaderTtl', options.leaderTtl, 1000);
  p.timerMs('heartbeatInterval', options.heartbeatInterval, 100);
  p.bool('eligible', options.eligible);
  p.timeZone('timeZone', options.timeZone);
  p.bool('requireNoEviction', options.requireNoEviction);
  p.bool('compactSchedules', options.compactSchedules);
  p.int('historyLimit', options.historyLimit, 0, undefined, HISTORY.limit);
  p.int('maxPayloadBytes', options.maxPayloadBytes, 0);
  p.logger('logger', options.logger);
  const value: ResolvedSchedulerOptions = {
    connection: options.connection,
    namespace: options.namespace ?? DEFAULTS.namespace,
    instanceId: options.instanceId ?? newInstanceId(),
    leaderTtlMs: options.leaderTtl ?? DEFAULTS.leaderTtlMs,
    eligible: options.eligible ?? true,
    timeZone: options.timeZone ?? DEFAULTS.timeZone,
    heartbeatMs: options.heartbeatInterval ?? DEFAULTS.instanceHeartbeatMs,
    requireNoEviction: options.requireNoEviction ?? false,
    compactSchedules: options.compactSchedules ?? false,
    historyLimit: options.historyLimit ?? HISTORY.limit,
    maxPayloadBytes: options.maxPayloadBytes ?? DEFAULTS.maxPayloadBytes,
    logger: resolveLogger(options.logger, 'Scheduler'),
    events: options.events ?? new EventBus(),
  };
  return { value, problems: p.list };
}
