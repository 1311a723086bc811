// Due-time wakes (issue 22, target 2): a delayed task enqueued by another process, and a retry, start
// at their due time although the worker's forward poll is 10 minutes away: the enqueue lowered the
// queue's score in the due-time index, lower-due.lua published the new due time, and the worker's
// forwarder re-armed its timer to it. Real worker processes on a real Redis.
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { GlobalKeys, QueueKeys } from '../../lib/core/redis/keys.js';
import { lowerDue } from '../../lib/core/redis/commands/due.js';
import { rereadTimeOrigin } from '../../lib/core/runtime/time.js';
import { startWorker, useWorkerRig } from '../helpers/worker-rig.js';
import { readRecords } from '../helpers/records.js';
import { redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(60_000);

const rig = useWorkerRig('wake');
/** The forward poll of the workers: far longer than any test, so only a wake starts a delayed task. */
const NO_POLL = { FORWARD_MS: 600_000 };

async function started(id: string): Promise<boolean> {
  return (await readRecords(rig.redis, rig.recordKey)).some((r) => r.id === id && r.phase === 'start');
}

test('a delayed task enqueued by another process starts at its due time, not at the next forward poll', async () => {
  await startWorker(rig, 'W1', NO_POLL);
  const { id } = await rig.client.enqueue('quick', {}, { delay: 800 });
  await waitFor(() => started(id), 'the delayed task to start (woken, not polled)', 20_000);
  // a later one leaves the index as it is (no wake needed: the timer is armed for an earlier time), and still starts
  const later = await rig.client.enqueue('quick', {}, { delay: 1500 });
  const earlier = await rig.client.enqueue('quick', {}, { delay: 300 });
  await waitFor(async () => (await started(earlier.id)) && (await started(later.id)), 'both to start', 20_000);
});

test('a client whose own clock runs ahead of Redis still indexes a delayed task by Redis time: it starts at its due time', async () => {
  await startWorker(rig, 'W1', NO_POLL);
  // this process's monotonic base 3 s ahead of Redis time (its wall clock was ahead when it started, then
  // stepped back), as a client-only process that never heard Redis's time had it: before, the enqueue wrote the
  // due index 3 s past the task's due time (its delay counted from its own clock) and the worker woke that late
  const real = performance.timeOrigin;
  Object.defineProperty(performance, 'timeOrigin', { value: real + 3000, configurable: true });
  rereadTimeOrigin(); // the engine reads it once per process: as if this process had started with it
  try {
    const { id } = await rig.client.enqueue('quick', {}, { delay: 800 });
    const [s, us] = await rig.redis.time();
    const score = Number(await rig.redis.zscore(new GlobalKeys(rig.ns).due, 'default'));
    const dueAt = Number(await rig.redis.zscore(new QueueKeys(rig.ns, 'default').scheduled, id)); // by Redis time (enqueue.lua)
    expect(score).toBeLessThanOrEqual(dueAt);
    expect(score).toBeLessThanOrEqual(Number(s) * 1000 + Math.floor(Number(us) / 1000) + 800);
    await waitFor(() => started(id), 'the delayed task to start (woken at its due time)', 20_000);
    // the same through enqueueBulk, by a new client, the clock stepped again
    Object.defineProperty(performance, 'timeOrigin', { value: real + 6000, configurable: true });
    rereadTimeOrigin();
    const bulkClient = new QueueClient({ connection: redisUrl(), namespace: rig.ns });
    try {
      const [r] = await bulkClient.enqueueBulk([{ type: 'quick', payload: {}, options: { queue: 'other', delay: 800 } }]);
      const bulkScore = Number(await rig.redis.zscore(new GlobalKeys(rig.ns).due, 'other'));
      expect(bulkScore).toBeLessThanOrEqual(Number(await rig.redis.zscore(new QueueKeys(rig.ns, 'other').scheduled, r.id)));
    } finally {
      await bulkClient.close();
    }
  } finally {
    delete (performance as { timeOrigin?: number }).timeOrigin;
    rereadTimeOrigin();
  }
});

test('two workers woken for one queue both forward it beside their claim: the task runs once, and the index keeps the next due time', async () => {
  await startWorker(rig, 'W1', NO_POLL);
  await startWorker(rig, 'W2', NO_POLL);
  const far = await rig.client.enqueue('quick', {}, { delay: 600_000 });
  const farAt = Number(await rig.redis.zscore(new QueueKeys(rig.ns, 'default').scheduled, far.id));
  const due = new GlobalKeys(rig.ns).due;
  for (let round = 0; round < 3; round++) {
    const { id } = await rig.client.enqueue('quick', {}, { delay: 300 });
    await waitFor(() => started(id), `delayed task ${round} to start`, 20_000);
    // whichever worker claimed the queue put it back at the far task's due time (not left at a claim mark, not removed)
    await waitFor(async () => Number(await rig.redis.zscore(due, 'default')) === farAt, 'the index back at the far due time');
  }
  const starts = (await readRecords(rig.redis, rig.recordKey)).filter((r) => r.phase === 'start');
  expect(starts.length).toBe(3); // each delayed task once (the far one not yet)
  expect(new Set(starts.map((r) => r.id)).size).toBe(3);
});

test('on 100 queues: a delayed task of one of them starts at its due time', async () => {
  const queues = Array.from({ length: 100 }, (_, i) => `q${i}`);
  await startWorker(rig, 'W1', { ...NO_POLL, QUEUES: queues.join(',') });
  const { id } = await rig.client.enqueue('quick', {}, { queue: 'q57', delay: 800 });
  await waitFor(() => started(id), 'the delayed task of q57 to start', 20_000);
});

test('a retry starts at its due time with the forward poll 10 minutes away', async () => {
  await startWorker(rig, 'W1', { ...NO_POLL, BACKOFF_MS: 1000 });
  const { id } = await rig.client.enqueue('failOnce', {});
  await waitFor(
    async () => (await readRecords(rig.redis, rig.recordKey)).some((r) => r.id === id && r.phase === 'done' && r.retried === 1),
    'the retry to run',
    20_000,
  );
});

test('lower-due.lua publishes a wake only when it lowered the score: one message per lowering, none for a later time', async () => {
  const keys = new GlobalKeys(rig.ns);
  const sub = new Redis(redisUrl());
  const got: string[] = [];
  try {
    sub.on('message', (_ch: string, text: string) => got.push(text));
    await sub.subscribe(keys.dueWake);
    expect(await lowerDue(rig.redis, keys.due, 'a', 5000)).toBe(1); // added
    expect(await lowerDue(rig.redis, keys.due, 'a', 9000)).toBe(0); // later: not raised, not published
    expect(await lowerDue(rig.redis, keys.due, 'a', 5000)).toBe(0); // the same: nothing changed
    expect(await lowerDue(rig.redis, keys.due, 'a', 4000)).toBe(1); // lowered
    expect(await lowerDue(rig.redis, keys.due, 'b:c', 7000)).toBe(1); // a queue name with a colon
    await rig.redis.ping(); // the publishes went out before this reply
    await waitFor(() => got.length === 3, 'three wakes');
    expect(got).toEqual(['5000:a', '4000:a', '7000:b:c']);
    expect(await rig.redis.zscore(keys.due, 'a')).toBe('4000');
  } finally {
    sub.disconnect();
  }
});

test('queues nobody serves, overdue in the due index ahead of this worker’s queue, do not hide it from its claim', async () => {
  // 200 queues of the namespace with delayed tasks and no live worker (their workers retired or down), all
  // overdue: before, claim-due.lua read only the first limit + 64 rows of the index, all theirs, so it never
  // saw the worker's own queue; a first delayed task still started (the wake's hint forwarded it), but its
  // queue's score stayed at that past time, a later task lowered nothing, published no wake, and waited for the
  // 5-minute sweep
  const due = new GlobalKeys(rig.ns).due;
  const gone: (string | number)[] = [];
  for (let i = 0; i < 200; i++) gone.push(1000 + i, `gone${i}`);
  await rig.redis.zadd(due, ...gone);
  await startWorker(rig, 'W1', NO_POLL);
  const first = await rig.client.enqueue('quick', {}, { delay: 300 });
  await waitFor(() => started(first.id), 'the first delayed task to start', 20_000);
  const second = await rig.client.enqueue('quick', {}, { delay: 600 });
  await waitFor(() => started(second.id), 'the second delayed task to start (its queue claimed, not left to the sweep)', 20_000);
  // the worker claimed its queue and settled it: out of the index (nothing waits), the other queues left as they were
  await waitFor(async () => (await rig.redis.zscore(due, 'default')) === null, 'the queue settled out of the index');
  expect(await rig.redis.zcard(due)).toBe(200);
});
