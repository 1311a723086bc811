import { newInstanceId } from '../../core/runtime/instance-id.js';
import { describeProblem, OptionProblems, show, type OptionProblem } from '../../core/runtime/options.js';
import { MODULE_KEY_HINTS } from '../../core/runtime/migrant-hints.js';
import { checkClientOptions, type ClientOptions } from '../../core/queue/client.js';
import { checkServerOptions, type ServerOptions } from '../../core/worker/server-options.js';
import { isRedisClient, lazyConnection, urlOptionsProblem, type RedisConnection } from '../../core/redis/connection.js';
import { redactUrl, redisUrlProblem } from '../../core/redis/url-check.js';
import { checkSchedulerOptions, type SchedulerOptions } from '../../core/scheduler/scheduler-options.js';
import type { MetricsRegistry } from '../../core/observability/metrics.js';
import { resolveConsole, type ResolvedConsoleOptions } from '../console/console-options.js';
import { ChronosConfigError } from '../errors/chronos-config.error.js';
import type { ChronosModuleOptions } from './chronos-options.interface.js';
import { limitsProblems, type QueueLimitsUpdate } from '../../core/queue/limits.js';
import type { ScheduleDefinition } from '../../core/scheduler/definition.js';

/** The options after validation, with every default applied (the core's). @internal */
export interface ResolvedChronosOptions {
  connection: RedisConnection;
  namespace: string;
  instanceId: string;
  /** Default zone of `@Cron` schedules. */
  timeZone: string;
  /** Defaults of enqueues and schedules: the queue, the retries, the timeout of an attempt (ms). */
  queue: string;
  maxRetry: number;
  timeout: number;
  leaderTtl: number;
  heartbeatInterval: number;
  concurrency: number;
  shutdownTimeout: number;
  /** The largest payload of an enqueue or a schedule, UTF-8 bytes of its JSON; 0 = no limit. */
  maxPayloadBytes: number;
  /** Explicit queues with their weights, or undefined: derive from the discovered decorators. */
  queues?: Record<string, number>;
  /** Fleet-wide limits of queues (the `queues` option's objects), applied at boot. */
  queueLimits: Record<string, QueueLimitsUpdate>;
  scheduler: { enabled: boolean; eligible: boolean };
  worker: { enabled: boolean };
  /** The `metrics` option: whether this replica exports Prometheus metrics, into which registry, and the fleet gauges' cache (ms). */
  metrics: { enabled: boolean; registry?: MetricsRegistry; fleet: boolean; fleetCacheMs: number; fleetTimeoutMs: number };
  /** The `console` option: whether the web console is mounted, where, read-only or not, and its guards and hooks. */
  console: ResolvedConsoleOptions;
  /**
   * What the module options map to, as the core takes them: the worker server's options (`queues`
   * absent when derived from the decorators), the scheduler's and the client's.
   */
  core: { server: ServerOptions; scheduler: SchedulerOptions; client: ClientOptions };
}

/** The core options a module option is handed to. */
type Core = 'server' | 'scheduler' | 'client';
/** A module option (or its field `from`) is the core option `key` of `to`, which validates it. */
type Route = readonly [to: Core, key: string, from?: string];

/**
 * Every module option, in the order its problems are listed, with where it goes in the core's
 * options (which validate it). Options without a route are checked here: the connection's shape,
 * the instance id, the roles.
 */
const OPTIONS: { readonly [K in keyof Required<ChronosModuleOptions>]: readonly Route[] } = {
  connection: [], // given to all three once its shape is checked
  namespace: [
    ['server', 'namespace'],
    ['scheduler', 'namespace'],
    ['client', 'namespace'],
  ],
  instanceId: [], // the server's serverId and the scheduler's instanceId
  timeZone: [['scheduler', 'timeZone']],
  queue: [['client', 'defaults.queue']],
  maxRetry: [['client', 'defaults.maxRetry']],
  timeout: [['client', 'defaults.timeout']],
  leaderTtl: [['scheduler', 'leaderTtl']],
  heartbeatInterval: [['scheduler', 'heartbeatInterval']],
  concurrency: [['server', 'concurrency']],
  strictPriority: [['server', 'strictPriority']],
  shutdownTimeout: [['server', 'shutdownTimeout']],
  visibilityTimeout: [['server', 'visibilityTimeout']],
  recoverInterval: [['server', 'recoverInterval']],
  maxDeliveries: [['server', 'maxDeliveries']],
  maxPayloadBytes: [
    ['client', 'maxPayloadBytes'],
    ['scheduler', 'maxPayloadBytes'], // a schedule's payload, copied into each trigger's task
  ],
  requireNoEviction: [
    ['server', 'requireNoEviction'],
    ['scheduler', 'requireNoEviction'],
  ],
  compactSchedules: [['scheduler', 'compactSchedules']], // the InspectorService reads it from core.scheduler
  historyLimit: [['scheduler', 'historyLimit']],
  backoff: [['server', 'backoff']],
  queues: [['server', 'queues']], // absent: derived from the decorators at bootstrap
  scheduler: [['scheduler', 'eligible', 'eligible']], // the role is checked here
  worker: [],
  metrics: [], // checked here: the engine's metrics are fed by events, not by an option of the core
  console: [], // checked here (lib/nest/console/console-options.ts): the console is a face of the Nest app
};
const KEYS = Object.keys(OPTIONS);
/** Every route of {@link OPTIONS}, with its module option. */
const ROUTES = Object.entries(OPTIONS).flatMap(([option, rs]) => rs.map((r): [string, ...Route] => [option, ...r]));

const DEFAULT_URL = 'redis://127.0.0.1:6379';
const CONNECTION = 'a redis:// or rediss:// URL, ioredis options or an ioredis client';

/**
 * Validates module options and maps them onto the core's: the server, scheduler and client options
 * validate their own and apply the defaults (from core `DEFAULTS`), and their problems are listed
 * with the checks only the module has (connection shape, instance id, roles). Both `forRoot` and
 * `forRootAsync` go through here.
 * @throws ChronosConfigError listing every problem (unknown keys included), in the order of the options.
 */
export function resolveOptions(input: ChronosModuleOptions | undefined | null): ResolvedChronosOptions {
  if (input === undefined) input = {}; // forRoot(): every default; null is no options object (below)
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw new ChronosConfigError([`expected an options object, got ${show(input)}`]);
  const o = input as Record<string, unknown>;
  const p = new OptionProblems();
  p.unknownKeys(o, new Set(KEYS), '', MODULE_KEY_HINTS);
  const connection = checkConnection(o.connection, p);
  if (o.instanceId !== undefined && (typeof o.instanceId !== 'string' || !/^\S{1,200}$/.test(o.instanceId))) {
    p.expected('instanceId', 'a non-empty string of at most 200 characters without spaces', o.instanceId);
  }
  const instanceId = typeof o.instanceId === 'string' ? o.instanceId : newInstanceId();
  const roles = checkRoles(o, p);
  const metrics = checkMetrics(o.metrics, p);
  const { weights, limits: queueLimits } = splitQueues(o.queues, p);
  const routed = weights === o.queues ? o : { ...o, queues: weights };
  const consoleIssues: string[] = [];
  const consoleOptions = resolveConsole(o.console, consoleIssues);
  for (const issue of consoleIssues) p.add('', issue); // each message names its console.* option

  // opened without connecting: nothing is connected before Chronos starts (a boot failing before
  // that, in a user provider, leaves no socket to hold the process: connection.ts lazyConnection)
  const opened = lazyConnection(connection);
  const mapped: Record<Core, Record<string, unknown>> = {
    server: { connection: opened, serverId: instanceId },
    scheduler: { connection: opened, instanceId },
    client: { connection: opened },
  };
  for (const [option, to, key, from] of ROUTES) {
    const v = from === undefined ? routed[option] : fieldOf(routed[option], from);
    if (v !== undefined) setPath(mapped[to], key, v);
  }
  const core = {
    server: mapped.server as ServerOptions,
    scheduler: mapped.scheduler as SchedulerOptions,
    client: mapped.client as ClientOptions,
  };
  const server = checkServerOptions(core.server);
  const scheduler = checkSchedulerOptions(core.scheduler);
  const client = checkClientOptions(core.client);
  for (const [to, checked] of [
    ['server', server],
    ['scheduler', scheduler],
    ['client', client],
  ] as const) {
    p.merge(checked.problems.map((x) => asModuleProblem(to, x)));
  }
  const issues = [...new Set(inOptionOrder(p.list).map((x) => describeProblem(x)))];
  if (issues.length) throw new ChronosConfigError(issues);

  const s = scheduler.value;
  const d = client.value.defaults;
  return {
    connection,
    namespace: server.value.namespace,
    instanceId,
    timeZone: s.timeZone,
    queue: d.queue,
    maxRetry: d.maxRetry,
    timeout: d.timeoutMs,
    leaderTtl: s.leaderTtlMs,
    heartbeatInterval: s.heartbeatMs,
    concurrency: server.value.opts.concurrency,
    shutdownTimeout: server.value.opts.shutdownTimeout,
    maxPayloadBytes: s.maxPayloadBytes,
    queues: o.queues === undefined ? undefined : Object.fromEntries(server.value.entries),
    queueLimits,
    scheduler: { enabled: roles.scheduler, eligible: s.eligible },
    worker: { enabled: roles.worker },
    metrics,
    console: consoleOptions,
    core,
  };
}

/**
 * The `queues` option's objects (`{ name: { weight?, ...limits } }`) split into the weights the server
 * takes and the limits applied at boot (checked here: `queues.<name>.<limit>: …`). A list or plain
 * weights are returned as they are.
 */
function splitQueues(q: unknown, p: OptionProblems): { weights: unknown; limits: Record<string, QueueLimitsUpdate> } {
  const limits: Record<string, QueueLimitsUpdate> = {};
  if (typeof q !== 'object' || q === null || Array.isArray(q)) return { weights: q, limits };
  const entries = Object.entries(q as Record<string, unknown>);
  if (!entries.some(([, v]) => typeof v === 'object' && v !== null)) return { weights: q, limits };
  const weights: Record<string, unknown> = {};
  for (const [name, v] of entries) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      weights[name] = v;
      continue;
    }
    const { weight, ...rest } = v as QueueLimitsUpdate & { weight?: unknown };
    weights[name] = weight ?? 1;
    for (const problem of limitsProblems(name, rest)) {
      // "<limit>: <what>" under the queue's option (its name is checked with the weights, by the server)
      const m = /^([^:]+): (.*)$/.exec(problem);
      if (!m || m[1] === 'queue') continue;
      p.add(`queues.${name}.${m[1]}`, m[2].replace('(known: ', '(known: weight, '));
    }
    if (Object.keys(rest).length > 0) limits[name] = rest;
  }
  return { weights, limits };
}

/** `v[field]` when `v` is an object. */
function fieldOf(v: unknown, field: string): unknown {
  return typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[field] : undefined;
}

/** Sets `path` ('defaults.queue') in `target`, creating the objects on the way. */
function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let at = target;
  for (const part of parts.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
  at[parts[parts.length - 1]] = value;
}

/** A problem of the core's options, under the module option it comes from ('defaults.queue' → 'queue'). */
function asModuleProblem(core: Core, problem: OptionProblem): OptionProblem {
  for (const [option, to, key, from] of ROUTES) {
    if (to !== core || (problem.key !== key && !problem.key.startsWith(`${key}.`))) continue;
    return { ...problem, key: `${option}${from === undefined ? '' : `.${from}`}${problem.key.slice(key.length)}` };
  }
  return problem;
}

/** Problems sorted by the order of {@link OPTIONS} (unknown options first), stable within one option. */
function inOptionOrder(problems: readonly OptionProblem[]): OptionProblem[] {
  const rank = (x: OptionProblem) => (x.key === '' ? -1 : KEYS.indexOf(x.key.split('.')[0]));
  return [...problems].sort((a, b) => rank(a) - rank(b));
}

/** The roles: `scheduler` (true, false or `{ eligible }`, whose `eligible` the scheduler checks) and `worker`. */
function checkRoles(o: Record<string, unknown>, p: OptionProblems): { scheduler: boolean; worker: boolean } {
  const s = o.scheduler;
  if (typeof s === 'object' && s !== null && !Array.isArray(s)) p.unknownKeys(s, new Set(['eligible']), 'scheduler');
  else if (s !== undefined && typeof s !== 'boolean') p.expected('scheduler', 'true, false or { eligible: boolean }', s);
  p.bool('worker', o.worker);
  return { scheduler: s !== false, worker: o.worker !== false };
}

/** The `metrics` option: `true`, `false` or `{ registry?, fleet?, fleetCacheMs?, fleetTimeoutMs? }`. */
function checkMetrics(m: unknown, p: OptionProblems): ResolvedChronosOptions['metrics'] {
  const out: ResolvedChronosOptions['metrics'] = { enabled: false, fleet: true, fleetCacheMs: 1000, fleetTimeoutMs: 5000 };
  if (m === undefined || m === false) return out;
  out.enabled = true;
  if (m === true) return out;
  if (typeof m !== 'object' || m === null || Array.isArray(m)) {
    p.expected('metrics', 'true, false or { registry?, fleet?, fleetCacheMs?, fleetTimeoutMs? }', m);
    return out;
  }
  const { registry, fleet, fleetCacheMs, fleetTimeoutMs } = m as Record<string, unknown>;
  p.unknownKeys(m, new Set(['registry', 'fleet', 'fleetCacheMs', 'fleetTimeoutMs']), 'metrics');
  if (registry !== undefined) {
    const r = registry as Partial<MetricsRegistry>;
    if (typeof r?.registerMetric !== 'function' || typeof r?.removeSingleMetric !== 'function') {
      p.add('metrics.registry', 'expected a prom-client Registry (with registerMetric and removeSingleMetric)');
    } else out.registry = registry as MetricsRegistry;
  }
  if (p.bool('metrics.fleet', fleet) && fleet !== undefined) out.fleet = fleet as boolean;
  if (p.int('metrics.fleetCacheMs', fleetCacheMs, 0, 'ms') && fleetCacheMs !== undefined) out.fleetCacheMs = fleetCacheMs as number;
  if (p.timerMs('metrics.fleetTimeoutMs', fleetTimeoutMs, 1) && fleetTimeoutMs !== undefined) out.fleetTimeoutMs = fleetTimeoutMs as number;
  return out;
}

/** The shape of the `connection` option (the core opens it). */
function checkConnection(c: unknown, p: OptionProblems): RedisConnection {
  if (c === undefined) return DEFAULT_URL;
  if (typeof c === 'string') {
    // named with its credentials hidden: the URL may hold a password
    const problem = redisUrlProblem(c);
    if (problem === undefined) return c;
    // a redis:// URL wrong inside (a database "abc", a "%" in its password) is told what is wrong with it, as the core's and
    // the CLI's doors tell it; before, "expected a redis:// or rediss:// URL" about a redis:// URL said nothing of it
    if (/^rediss?:\/\//i.test(c) && URL.canParse(c)) p.add('connection', problem);
    else p.add('connection', `expected ${CONNECTION}, got ${JSON.stringify(redactUrl(c))}`);
    return c;
  }
  if (typeof c !== 'object' || c === null || Array.isArray(c)) {
    p.expected('connection', CONNECTION, c);
    return DEFAULT_URL;
  }
  if (isRedisClient(c)) {
    const prefix = (c.options as { keyPrefix?: string }).keyPrefix;
    const problem = `the Redis client has keyPrefix "${prefix}", which Chronos cannot honour inside its scripts`;
    if (prefix) p.add('connection', `${problem}; remove it and use \`namespace\``);
    return c;
  }
  if ('cluster' in c) {
    if (!Array.isArray((c as { cluster: unknown }).cluster)) p.add('connection.cluster', 'expected a list of cluster nodes');
    const prefix = (c as { options?: { redisOptions?: { keyPrefix?: string }; keyPrefix?: string } }).options;
    if (prefix?.keyPrefix || prefix?.redisOptions?.keyPrefix) p.add('connection', 'keyPrefix is not supported; use `namespace`');
    return c as RedisConnection;
  }
  if ((c as { keyPrefix?: string }).keyPrefix) {
    p.add('connection', 'keyPrefix is not supported (ioredis applies it to declared keys only); use `namespace`');
  }
  const urlProblem = 'url' in c ? urlOptionsProblem(c) : undefined;
  if (urlProblem) p.add('connection', urlProblem);
  return c as RedisConnection;
}

/**
 * A runtime schedule definition (`SchedulerService.addSchedule` & co., the testing kit's) with the
 * module's `queue`, `maxRetry` and `timeout` in the fields it leaves unset — absent or `undefined`,
 * as a decorator's (`{ queue: tenant.queue }` with no queue went to `'default'`, and its tasks to a
 * queue no worker served: trial 22). The zone is not filled in: the validation is given the
 * module's as its default. Anything but an object is returned as is, for the validation to name.
 * @internal
 */
export function withScheduleDefaults(def: ScheduleDefinition, o: ResolvedChronosOptions): ScheduleDefinition {
  if (typeof def !== 'object' || def === null || Array.isArray(def)) return def;
  return {
    ...def,
    queue: def.queue === undefined ? o.queue : def.queue,
    maxRetry: def.maxRetry === undefined ? o.maxRetry : def.maxRetry,
    timeout: def.timeout === undefined ? o.timeout : def.timeout,
  };
}
