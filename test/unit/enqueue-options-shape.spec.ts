// An enqueue's options are an object: an array is refused before Redis, naming it (trial: `enqueue(type,
// payload, [])` enqueued with the defaults in silence, `[{ delay: 5000 }]` said `unknown option "0"`;
// setQueueLimits already refused an array).
import { InvalidOptionsError } from '../../lib/core/runtime/errors.js';
import { prepareTask, type EnqueueContext, type EnqueueOptions } from '../../lib/core/queue/enqueue-options.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';

const ctx: EnqueueContext = {
  defaults: { queue: 'default', maxRetry: 25, timeoutMs: 1_800_000 },
  maxPayloadBytes: 0,
  keysOf: (queue) => new QueueKeys('ns', queue),
};

test.each([
  [[], 'enqueue options (1 problem):\n  - expected an object, got []'],
  [[{ delay: 5000 }], 'enqueue options (1 problem):\n  - expected an object, got [{"delay":5000}]'],
])('options %j are refused, named', (options, said) => {
  const run = () => prepareTask(ctx, 't', {}, options as unknown as EnqueueOptions);
  expect(run).toThrow(InvalidOptionsError);
  expect(run).toThrow(said);
});

test('an empty object and real options still pass', () => {
  expect(prepareTask(ctx, 't', {}, {}).type).toBe('t');
  expect(prepareTask(ctx, 't', {}, { queue: 'q', maxRetry: 1 }).maxRetry).toBe(1);
});
