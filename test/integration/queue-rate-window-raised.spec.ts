// A rate's window made longer at runtime (`{ max: 2, duration: 1000 }` → `{ max: 2, duration: 4000 }`)
// binds the hand-outs already made: no more than `max` in the new window past them, by Redis time.
// The sliding log of hand-outs expired after the window it was last written with, so a worker that
// fetched after the old window (at its blockTimeout, or for a new task) found it gone and handed out
// `max` more: up to twice the new limit in its window ("a lowered limit stops new hand-outs as soon
// as it is stored").
import { jest } from '@jest/globals';
import type { QueueLimitsUpdate } from '../../lib/core/queue/limits.js';
import { QueueRig } from '../helpers/queue.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(30_000);

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

/** Redis time, epoch ms. */
async function redisNow(): Promise<number> {
  const [s, us] = await rig.client.redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** Resolves once Redis time is at or past `ms` (the wait is for time itself to pass). */
function redisReaches(ms: number): Promise<void> {
  return waitFor(async () => (await redisNow()) >= ms || undefined, `Redis time to reach ${ms}`, 10_000).then(() => undefined);
}

const twoPerSecond = { max: 2, duration: 1000 };
const twoPer4s = { max: 2, duration: 4000 };

test.each([
  ['rate', { rate: twoPerSecond }, { rate: twoPer4s }, undefined],
  ['groupRate', { groupRate: twoPerSecond }, { groupRate: twoPer4s }, 'a'],
  ["group override's rate", { groupRate: twoPerSecond }, { groups: { a: { rate: twoPer4s } } }, 'a'],
] as [string, QueueLimitsUpdate, QueueLimitsUpdate, string | undefined][])(
  'a %s window made longer binds the hand-outs already made: no more than max within the new window',
  async (_, before, after, group) => {
    await rig.client.setQueueLimits('r', before);
    const started: string[] = [];
    const s = rig.server({ queues: ['r'], concurrency: 10, blockTimeout: 200 });
    s.handle('t', (task) => void started.push(task.id));
    await s.start();
    await rig.client.enqueue('t', { i: 0 }, { queue: 'r', group });
    await waitFor(() => started.length === 1, 'the first task to start');
    const handedOutBy = await redisNow();
    await rig.client.setQueueLimits('r', after);
    // past the old window (its log would have expired), well inside the new one
    await redisReaches(handedOutBy + 2000);
    for (let i = 1; i <= 4; i++) await rig.client.enqueue('t', { i }, { queue: 'r', group });
    await waitFor(() => started.length >= 2, 'a second task (max is 2)');
    await redisReaches(handedOutBy + 3000);
    expect(started).toHaveLength(2); // before: 3, the first hand-out forgotten with its expired log
    await waitFor(() => started.length === 4, 'the next ones, once the new window has passed', 10_000);
  },
);
