// An option of BullMQ (or Sidekiq) given to a Chronos door that refuses it says what to use instead,
// at that door (the README's "Coming from BullMQ or Sidekiq" table, where the error is read). Before
// (trial 47): `enqueue(type, payload, { attempts: 3, jobId })` said only `unknown option "attempts"`,
// `unknown option "jobId"`; so did a server's `limiter` / `lockDuration`, a handler's `concurrency`,
// `enqueueBulk`'s `{ name, data, opts }` and the Nest module's `limiter` (as @TaskHandler's did
// before commit 061bbae).
import { InvalidOptionsError } from '../../lib/core/runtime/errors.js';
import { checkBulkTasks, prepareTask, type EnqueueContext, type EnqueueOptions } from '../../lib/core/queue/enqueue-options.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { checkServerOptions, type ServerOptions } from '../../lib/core/worker/server-options.js';
import { Mux } from '../../lib/core/worker/mux.js';
import { ChronosConfigError } from '../../lib/nest/errors/chronos-config.error.js';
import { resolveOptions } from '../../lib/nest/options/resolve-options.js';
import { describeProblem } from '../../lib/core/runtime/options.js';

const ctx: EnqueueContext = {
  defaults: { queue: 'default', maxRetry: 25, timeoutMs: 1_800_000 },
  maxPayloadBytes: 0,
  keysOf: (queue) => new QueueKeys('ns', queue),
};

function issuesOf(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    if (err instanceof InvalidOptionsError || err instanceof ChronosConfigError) return [...err.issues];
    throw err;
  }
  throw new Error('no error');
}

test('enqueue: BullMQ job options name what to use instead', () => {
  const options = { attempts: 3, jobId: 'j1', priority: 1, backoff: { type: 'fixed', delay: 10 }, removeOnComplete: true, repeat: {} };
  expect(issuesOf(() => prepareTask(ctx, 't', {}, options as unknown as EnqueueOptions))).toEqual([
    'unknown option "attempts" (use `maxRetry`, the retries after the first attempt: attempts - 1)',
    'unknown option "jobId" (use `taskId`)',
    'unknown option "priority" (no per-task priority: give urgent tasks a queue of their own, served with a higher weight or `strictPriority`)',
    'unknown option "backoff" (a retry backoff is per handler or server: `handle(type, fn, { backoff: (retried) => ms })`)',
    'unknown option "removeOnComplete" (finished tasks always leave Redis)',
    'unknown option "repeat" (a repeating task is a schedule: `Scheduler.register` / `addSchedule({ name, spec, type, payload })`)',
  ]);
  const dedup = { dedup: { id: 'k', extend: true }, delay: 1000 } as unknown as EnqueueOptions;
  expect(issuesOf(() => prepareTask(ctx, 't', {}, dedup))).toEqual([
    'dedup: unknown option "id" (use `key`)',
    'dedup: unknown option "extend" (use `mode: "debounce"` with a `delay`)',
    'dedup.key: expected a non-empty string of at most 400 characters without lone surrogates, got undefined',
  ]);
  // a key of no other library stays a plain unknown option
  expect(issuesOf(() => prepareTask(ctx, 't', {}, { qeue: 'q' } as unknown as EnqueueOptions))).toEqual(['unknown option "qeue"']);
});

test("enqueueBulk: BullMQ's addBulk items name type, payload and options", () => {
  expect(issuesOf(() => checkBulkTasks([{ name: 't', data: {}, opts: {} }]))).toEqual([
    'unknown option "name" (use `type`)',
    'unknown option "data" (use `payload`)',
    'unknown option "opts" (use `options`)',
    'a task takes only type, payload and options (enqueue options go in options)',
  ]);
});

test('server, handler and Nest module: BullMQ worker options name what to use instead', () => {
  const server = checkServerOptions({ limiter: { max: 1, duration: 1000 }, lockDuration: 30_000 } as unknown as ServerOptions);
  expect(server.problems.map((x) => describeProblem(x))).toEqual([
    'unknown option "limiter" (a queue\'s rate limit is fleet-wide: `setQueueLimits(queue, { rate: { max, duration } })`)',
    'unknown option "lockDuration" (use `visibilityTimeout`: running handlers extend their claim by themselves)',
  ]);
  expect(issuesOf(() => new Mux().handle('t', () => {}, { concurrency: 5 } as never))).toEqual([
    'unknown option "concurrency" (handlers at once are the server\'s `concurrency`; a queue\'s fleet-wide limit is `setQueueLimits(queue, { concurrency })`)',
  ]);
  expect(issuesOf(() => resolveOptions({ limiter: { max: 1, duration: 1000 } } as never))).toEqual([
    'unknown option "limiter" (a queue\'s rate limit is fleet-wide: `queues: { q: { rate: { max, duration } } }`)',
  ]);
});
