// Every exit path of a task frees its slot of a fleet-wide concurrency limit, and a worker waiting
// for the slot is told at once: the servers' blockTimeout (the waiting fetch's safety net) is set far
// beyond the test's patience, so a slot freed without its notice stalls the test.
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { QueueRig } from '../helpers/queue.js';
import { waitFor } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

const FAR = 120_000; // blockTimeout, ms: the notices must do the waking

test('concurrency 1 over two workers: a retry, a dead-lettering, a cancel and acks each hand the slot on', async () => {
  await rig.client.setQueueLimits('l', { concurrency: 1 });
  let running = 0;
  let peak = 0;
  const ran: string[] = [];
  const enter = (what: string) => {
    peak = Math.max(peak, ++running);
    ran.push(what);
  };
  let longId = '';
  for (let i = 0; i < 2; i++) {
    const s = rig.server({ queues: ['l'], concurrency: 5, blockTimeout: FAR, backoff: () => 50 });
    s.handle('fail', () => {
      enter('fail');
      running--;
      throw new Error('always fails');
    });
    s.handle('long', (t) => {
      enter('long');
      longId = t.id;
      return new Promise<void>((resolve) => t.signal.addEventListener('abort', () => (running--, resolve())));
    });
    s.handle('quick', async () => {
      enter('quick');
      // eslint-disable-next-line local/no-fixed-sleep -- the handler's duration itself is the point (runs must overlap for the limit to bind)
      await new Promise((r) => setTimeout(r, 20));
      running--;
    });
    await s.start();
  }
  await rig.client.enqueue('fail', {}, { queue: 'l', maxRetry: 1 });
  await rig.client.enqueue('long', {}, { queue: 'l' });
  for (let i = 0; i < 3; i++) await rig.client.enqueue('quick', { i }, { queue: 'l' });
  await waitFor(() => longId !== '', 'the long task to start once the failed one went to retry', 20_000);
  await rig.inspector.cancelTask(longId, { actor: 'ops:eve' });
  await waitFor(() => ran.filter((r) => r === 'quick').length === 3 && ran.filter((r) => r === 'fail').length === 2, 'the rest', 20_000);
  expect(peak).toBe(1);
  await waitFor(async () => (await rig.inspector.queue('l')).dead === 2, 'the failed and the cancelled task dead');
  const keys = new QueueKeys(rig.namespace, 'l');
  await waitFor(async () => ((await rig.client.redis.call('XPENDING', keys.stream, CONSUMER_GROUP)) as [number])[0] === 0, 'no slot taken');
});

test('an idle limited queue wakes on a new task (a blocking XREAD, not a poll), and survives its stream being lost', async () => {
  await rig.client.setQueueLimits('l', { concurrency: 2 });
  const ran: number[] = [];
  const s = rig.server({ queues: ['l'], concurrency: 5, blockTimeout: FAR });
  s.handle<{ i: number }>('quick', (t) => void ran.push(t.payload.i));
  await s.start();
  await rig.client.enqueue('quick', { i: 1 }, { queue: 'l' });
  await waitFor(() => ran.length === 1, 'the first task');
  // idle now, blocked for FAR ms: only the new entry can end the wait in time
  await rig.client.enqueue('quick', { i: 2 }, { queue: 'l' });
  await waitFor(() => ran.length === 2, 'the task enqueued to the idle queue');
  // Redis lost the stream and its consumer group: the fetch recreates the group and goes on
  await rig.client.redis.del(new QueueKeys(rig.namespace, 'l').stream);
  await rig.client.enqueue('quick', { i: 3 }, { queue: 'l' });
  await waitFor(() => ran.length === 3, 'a task after the stream was lost');
  expect(ran).toEqual([1, 2, 3]);
});
