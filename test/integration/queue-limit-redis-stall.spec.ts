// Trial "trialflow" (2026-12-07): a Redis stalled (SIGSTOP, a long fork, a VM pause) for longer than
// the visibility timeout makes every running task look idle to Redis, whose clock went on, while their
// workers are alive and renewing their claims (the renewals were queued behind the stall). When Redis
// resumed, another worker's visibility-timeout sweep, queued behind the stall as well, could run before
// the holder's renewal and reclaim the running task: it ran again beside its first copy, and a
// `concurrency: 1` queue ran 2 at once (the next task started in the slot the reclaim freed). Measured
// here with VISIBILITY_MS 3000 and a 5 s stall: peak 2, the long task started twice, in 2 of 3 runs
// (2 of 6 on 2026-12-07). Fixed by telling a stalled Redis from idle tasks (recovery/redis-stall.ts): a
// sweep round that Redis runs late takes nothing (recover.lua), a sweep round follows a reply of Redis
// sent just before it, and after a late round or a late presence tick the sweep waits for the holders'
// next claims round.
import { jest } from '@jest/globals';
import { QueueClient } from '../../lib/core/queue/client.js';
import { startWorker, useWorkerRig } from '../helpers/worker-rig.js';
import { countBy, readRecords, type Rec } from '../helpers/records.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(60_000);
const rig = useWorkerRig('stall');

/** The most tasks running at once, by the order of the records (start +1, done -1). */
function peak(recs: readonly Rec[]): number {
  let running = 0;
  let max = 0;
  for (const r of recs) {
    if (r.phase === 'start') max = Math.max(max, ++running);
    else if (r.phase === 'done') running--;
  }
  return max;
}

// Failed once in a fresh-clone CI run under the suite's load (2026-12-07 23:13 UTC: the long task
// started twice) after 11 of 11 runs alone; not reproduced here under load (0 of 14, 2-3 busy loops).
// The gap found: a sweep sent in the last half claims period of the stall (its worker's timers late)
// was not late enough to be refused, and ran before the holder's renewal when its worker's socket got
// its first bytes earlier in the stall (Redis serves waiting sockets in that order). Now a sweep call
// follows a reply of Redis, which comes only after every waiting socket ran
// (queue-recover-stall-order.spec.ts: that order, 4 of 5 runs took the task before, none after).
test('a Redis stalled past the visibility timeout does not reclaim the running tasks of live workers: never over the limit', async () => {
  const redis = await PrivateRedis.start();
  const client = new QueueClient({ connection: redis.url, namespace: rig.ns });
  try {
    await client.setQueueLimits('default', { concurrency: 1 });
    for (const w of ['W1', 'W2'])
      await startWorker(rig, w, { CHRONOS_URL: redis.url, CONCURRENCY: 2, VISIBILITY_MS: 3000, RECOVER_MS: 500 });
    const long = await client.enqueue('slow', { ms: 9000 });
    await client.enqueue('slow', { ms: 100 });
    const records = () => readRecords(rig.redis, rig.recordKey);
    await waitFor(async () => countBy(await records(), 'start').has(long.id), 'the long task started');
    redis.pause();
    // eslint-disable-next-line local/no-fixed-sleep -- the stall's length itself is the point (longer than the visibility timeout)
    await new Promise((r) => setTimeout(r, 5000));
    redis.resume();
    await waitFor(async () => countBy(await records(), 'done').size === 2, 'both tasks done', 30_000);
    const recs = await records();
    expect(countBy(recs, 'start').get(long.id)).toBe(1);
    expect(peak(recs)).toBe(1);
  } finally {
    await client.close();
    await redis.kill();
  }
});
