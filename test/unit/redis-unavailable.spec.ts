// Which client errors an enqueue turns into a RedisUnavailableError (the client did not get Redis to
// serve the queue within its retry bound), and which it passes on as they are.
import { unavailableFor } from '../../lib/core/redis/connection.js';
import { InvalidPayloadError, RedisUnavailableError } from '../../lib/core/runtime/errors.js';

test.each([
  'Too many Cluster redirections. Last error: Error: Connection is closed.',
  'Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down',
  'CLUSTERDOWN The cluster is down',
  'Connection is closed.',
  'Reached the max retries per request limit (which is 20). Refer to "maxRetriesPerRequest" option for details.',
  "Cluster isn't ready and enableOfflineQueue options is false",
])('%s: a RedisUnavailableError naming the queue, the cause kept', (message) => {
  const cause = new Error(message);
  const e = unavailableFor('emails', cause);
  expect(e).toBeInstanceOf(RedisUnavailableError);
  expect(e).toMatchObject({ code: 'REDIS_UNAVAILABLE', queue: 'emails', reason: message, cause });
  expect((e as Error).message).toBe(
    `Could not enqueue to queue "emails": Redis did not serve it within the client's retry bound (${message})`,
  );
});

test('other errors pass through unchanged: a script error, a Chronos error, a non-Error', () => {
  const reply = new Error('ERR Error running script (call to f_x): @user_script:1: oops');
  const typed = new InvalidPayloadError('t', 'bad');
  for (const e of [reply, typed, 'text']) expect(unavailableFor('emails', e)).toBe(e);
});
