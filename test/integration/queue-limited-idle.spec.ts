// queue.limited (and chronos_queue_limited_seconds_total, which sums it) counts the time a fleet-wide
// limit held tasks back: a queue whose limit is full while no task of it waits is not held back (the
// Inspector shows it running), so the worker's wait is not reported as limited. The server also
// serves a plain queue: a task there ends the worker's wait, which then reports what held it. On a
// private redis-server, so that the worker's blocked read is the only one CLIENT LIST shows.
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { EventBus, type ChronosEvent } from '../../lib/core/runtime/events.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { deferred, recordingLogger, waitFor } from '../helpers/wait.js';

const FAR = 120_000; // blockTimeout, ms: only a new task (or a notice) ends a wait

let redis: PrivateRedis;
let admin: Redis;
beforeAll(async () => {
  redis = await PrivateRedis.start();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  admin.disconnect();
  await redis.kill();
});

/** The worker's fetch is blocked in its read (its wait): a blocked XREAD in CLIENT LIST. */
const blocked = async () => /flags=\w*b\w* .*cmd=xread\b/.test(String(await admin.call('CLIENT', 'LIST')));

test.each([
  ['concurrency', { concurrency: 1 }],
  ['rate', { rate: { max: 1, duration: FAR } }],
] as const)('a full %s limit with no task waiting is not reported as limited; with one waiting it is', async (limit, limits) => {
  const namespace = `idle-${limit}`;
  const events = new EventBus();
  const client = new QueueClient({ connection: redis.url, namespace });
  const s = new ChronosServer({
    connection: redis.url,
    namespace,
    queues: ['q', 'other'],
    concurrency: 4,
    blockTimeout: FAR,
    events,
    logger: recordingLogger(),
  });
  const release = deferred();
  try {
    await client.setQueueLimits('q', limits);
    const limited: Extract<ChronosEvent, { type: 'queue.limited' }>[] = [];
    events.subscribe((e) => void (e.type === 'queue.limited' && limited.push(e)));
    const started = deferred();
    const quick: number[] = [];
    s.handle('hold', () => (started.resolve(), release.promise));
    s.handle('quick', (t) => void quick.push((t.payload as { i: number }).i));
    await s.start();
    await client.enqueue('hold', {}, { queue: 'q' });
    await started.promise;
    await waitFor(blocked, 'the worker to wait in its read');
    await client.enqueue('quick', { i: 1 }, { queue: 'other' });
    await waitFor(() => quick.includes(1), 'the plain queue’s task to run');
    // before: that wait was reported as limited by q's limit, though no task of q waited
    expect(limited.filter((e) => e.queue === 'q')).toEqual([]);
    // a task of q waits now: a wait ended by a task of the plain queue is reported as limited by q's limit
    await client.enqueue('hold', {}, { queue: 'q' });
    let i = 2;
    await waitFor(async () => {
      if (limited.some((e) => e.queue === 'q' && e.limit === limit)) return true;
      await client.enqueue('quick', { i: i++ }, { queue: 'other' });
      return false;
    }, `a queue.limited event of q by ${limit}`);
  } finally {
    release.resolve();
    await s.shutdown();
    await client.close();
  }
});
