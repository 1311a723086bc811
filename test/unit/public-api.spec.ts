// The public API is a list, not an accident: every name `@chronos/nest/core` and `@chronos/nest`
// export at run time is listed here, so a new export (or a lost one) fails this test and is a
// conscious choice. Internals go to `lib/core/internal.ts` (the `./internal` entry). Types are not
// run-time names; TypeDoc (`npm run docs:check`) checks that every public type is documented.
import { readFileSync } from 'node:fs';
import * as core from '../../lib/core/index.js';
import * as internal from '../../lib/core/internal.js';
import * as root from '../../lib/index.js';

const ERRORS = [
  'ChronosError',
  'ChronosStateError',
  'DuplicateHandlerError',
  'DuplicateScheduleError',
  'HandlerNotFoundError',
  'InvalidOptionsError',
  'InvalidPayloadError',
  'InvalidScheduleError',
  'InvalidTaskStateError',
  'MissingPeerDependencyError',
  'NonRetryableError',
  'QueueNotFoundError',
  'RedisEvictionPolicyError',
  'RedisScriptError',
  'RedisUnavailableError',
  'RedisUnreachableError',
  'RedisVersionError',
  'ScheduleNotFoundError',
  'TaskCancelledError',
  'TaskDecodeError',
  'TaskNotFoundError',
  'TaskSupersededError',
  'TaskTimeoutError',
];

/** `@chronos/nest/core`: the engine's classes, its errors, and the helpers a user calls. */
const CORE = [
  ...ERRORS,
  // the engine
  'QueueClient',
  'ChronosServer',
  'Scheduler',
  'Inspector',
  'EventBus',
  'Mux',
  'ShutdownAbort',
  'ChronosMetrics',
  'configureTracing',
  // a cluster client's retry options and the failover they wait through (an app's own ioredis Cluster)
  'CLUSTER_RETRY_OPTIONS',
  'CLUSTER_FAILOVER_BOUND_MS',
  // how often Chronos's connections ask a loading Redis whether it is done (an app's own client may use it)
  'LOADING_POLL_MS',
  // handlers and retries
  'defaultBackoff',
  'exponentialBackoff',
  'taskWith',
  // schedules
  'parseSpec',
  'nextTriggers',
  'triggersBetween',
  'triggerKey',
  // the Inspector's task states
  'TASK_STATES',
  // deprecated: the former name of QueueClient (the README promised it)
  'ChronosClient',
];

/** `@chronos/nest` adds the Nest face and the console's entry points. */
const NEST = [
  'ChronosModule',
  'ChronosClient',
  'SchedulerService',
  'WorkerService',
  'InspectorService',
  'ChronosHealthIndicator',
  'Cron',
  'Interval',
  'TaskHandler',
  'CronExpression',
  'ChronosConfigError',
  'ChronosDiscoveryError',
  'taskTypeOf',
  'createConsoleHandler',
  'startConsoleServer',
];

const names = (m: object): string[] => Object.keys(m).sort();

test('@chronos/nest/core exports exactly the listed names, at most 45', () => {
  expect(names(core)).toEqual([...new Set(CORE)].sort());
  expect(names(core).length).toBeLessThanOrEqual(45);
});

test('@chronos/nest exports the core names plus the listed Nest and console names', () => {
  expect(names(root)).toEqual([...new Set([...CORE, ...NEST])].sort());
});

test('one ChronosClient per entry: the Nest injectable at the root, a deprecated alias of QueueClient in core', () => {
  expect(core.ChronosClient).toBe(core.QueueClient);
  expect(root.ChronosClient).not.toBe(core.QueueClient);
  expect(root.ChronosClient.prototype).toBeInstanceOf(core.QueueClient);
  expect(root.QueueClient).toBe(core.QueueClient);
});

test('./internal re-exports the public core and adds the internals', () => {
  for (const name of names(core)) expect((internal as Record<string, unknown>)[name]).toBe((core as Record<string, unknown>)[name]);
  expect(names(internal)).toEqual(expect.arrayContaining(['QueueKeys', 'SchedulerKeys', 'GlobalKeys', 'DEFAULTS', 'recordFires']));
});

test('package.json maps ./core and ./internal for exports and for typesVersions (moduleResolution node)', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    exports: Record<string, { types: string; default: string }>;
    typesVersions: Record<string, Record<string, string[]>>;
  };
  expect(pkg.exports['./core']).toEqual({ types: './dist/lib/core/index.d.ts', default: './dist/lib/core/index.js' });
  expect(pkg.exports['./internal']).toEqual({ types: './dist/lib/core/internal.d.ts', default: './dist/lib/core/internal.js' });
  expect(pkg.typesVersions['*'].internal).toEqual(['./dist/lib/core/internal.d.ts']);
});
