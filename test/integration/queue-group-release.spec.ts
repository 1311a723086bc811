// Every exit path of a grouped task frees its group slot, and a worker waiting for the slot is told at
// once: the servers' blockTimeout (the waiting fetch's safety net) is set far beyond the test's
// patience, so a slot freed without its notice stalls the test. A slot whose entry left the pending
// entries list unseen (deleted by hand) is dropped at the group's re-check (GROUPS.recheckMs).
import { jest } from '@jest/globals';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { GROUPS } from '../../lib/core/redis/protocol.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, waitFor } from '../helpers/wait.js';

jest.setTimeout(30_000);

let rig: QueueRig;
let inspector: Inspector;
let keys: QueueKeys;
beforeEach(() => {
  rig = new QueueRig();
  inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace });
  keys = new QueueKeys(rig.namespace, 'l');
});
afterEach(async () => {
  await inspector.close();
  await rig.close();
});

const FAR = 120_000; // blockTimeout, ms: the notices must do the waking
const pending = async () => ((await rig.client.redis.call('XPENDING', keys.stream, CONSUMER_GROUP)) as [number])[0];

test('groupConcurrency 1 over two workers: a retry, a dead-lettering, a cancel and acks each hand the group slot on', async () => {
  await rig.client.setQueueLimits('l', { groupConcurrency: 1 });
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
  const opts = { queue: 'l', group: 'a' };
  await rig.client.enqueue('fail', {}, { ...opts, maxRetry: 1 });
  await rig.client.enqueue('long', {}, opts);
  for (let i = 0; i < 3; i++) await rig.client.enqueue('quick', { i }, opts);
  await waitFor(() => longId !== '', 'the long task to start once the failed one went to retry', 20_000);
  await inspector.cancelTask(longId, { actor: 'ops:eve' });
  await waitFor(() => ran.filter((r) => r === 'quick').length === 3 && ran.filter((r) => r === 'fail').length === 2, 'the rest', 20_000);
  expect(peak).toBe(1);
  await waitFor(async () => (await inspector.queue('l')).dead === 2, 'the failed and the cancelled task dead');
  await waitFor(async () => (await pending()) === 0, 'no entry pending');
  expect(await rig.client.redis.scard(keys.groupRunning('a'))).toBe(0);
});

test('a shutdown gives a running grouped task back: its slot frees and another worker runs it', async () => {
  await rig.client.setQueueLimits('l', { groupConcurrency: 1 });
  const first = deferred();
  const a = rig.server({ queues: ['l'], concurrency: 2, blockTimeout: FAR, shutdownTimeout: 50 });
  a.handle('long', (t) => {
    first.resolve();
    return new Promise<void>((resolve) => t.signal.addEventListener('abort', () => resolve()));
  });
  await a.start();
  const { id } = await rig.client.enqueue('long', {}, { queue: 'l', group: 'a' });
  await first.promise;
  const ranOnB = deferred<string>();
  const b = rig.server({ queues: ['l'], concurrency: 2, blockTimeout: FAR });
  b.handle('long', (t) => ranOnB.resolve(t.id));
  await b.start();
  await a.shutdown();
  expect(await ranOnB.promise).toBe(id);
  await waitFor(async () => (await pending()) === 0, 'no entry pending');
  expect(await rig.client.redis.scard(keys.groupRunning('a'))).toBe(0);
});

test('a group slot whose entry left the pending entries list unseen is dropped at the re-check', async () => {
  await rig.client.setQueueLimits('l', { groupConcurrency: 1 });
  await rig.client.redis.sadd(keys.groupRunning('a'), '1-1'); // a slot no pending entry holds (say, deleted by hand)
  const ran = deferred<number>();
  const s = rig.server({ queues: ['l'], concurrency: 2 });
  s.handle('quick', () => ran.resolve(Date.now()));
  await s.start();
  const at = Date.now();
  await rig.client.enqueue('quick', {}, { queue: 'l', group: 'a' });
  const started = await ran.promise;
  expect(started - at).toBeGreaterThanOrEqual(GROUPS.recheckMs - 1000); // held back until the re-check, not for good
  expect(await rig.client.redis.sismember(keys.groupRunning('a'), '1-1')).toBe(0);
});
