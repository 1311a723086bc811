// Overlap 'skip': the marker that makes a schedule skip while its task is live is taken back on every
// way the task ends early, so the schedule fires again at its next trigger and never stays skipping:
// a running task cancelled by an operator (its handler only ends on the abort), a task that goes dead,
// a task deleted by an operator before it started. A real leader, worker and Inspector on one Redis.
import { jest } from '@jest/globals';
import { NonRetryableError } from '../../lib/core/runtime/errors.js';
import type { ChronosEvent } from '../../lib/core/runtime/events.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, waitFor } from '../helpers/wait.js';

jest.setTimeout(30_000);

let rig: QueueRig;
let scheduler: Scheduler | undefined;
const seen: ChronosEvent[] = [];
beforeEach(() => {
  rig = new QueueRig();
  seen.length = 0;
  rig.events.subscribe((e) => void seen.push(e));
});
afterEach(async () => {
  await scheduler?.stop();
  scheduler = undefined;
  await rig.close();
});

/** Starts a leader with the skip schedule `ovl` (every second) on queue `q`. */
async function startSchedule(): Promise<void> {
  scheduler = new Scheduler({ connection: redisUrl(), namespace: rig.namespace, events: rig.events, leaderTtl: 2000 });
  await scheduler.start();
  await scheduler.addSchedule({ name: 'ovl', spec: '@every 1s', queue: 'q', type: 'ovl', overlap: 'skip', maxRetry: 0 });
}

const firedAfter = (at: number) =>
  waitFor(
    () => seen.find((e) => e.type === 'schedule.fired' && e.schedule === 'ovl' && e.triggerAt > at),
    'a trigger fired after the task ended',
    15_000,
  );
const skipped = () =>
  waitFor(
    () => seen.find((e) => e.type === 'schedule.skipped' && e.reason === 'overlap'),
    'a trigger skipped behind the live task',
    15_000,
  );

test.each(['a running task cancelled by an operator', 'a task that goes dead'])(
  'skip: %s takes the marker back; the next trigger fires',
  async (how) => {
    const first = deferred<string>();
    let calls = 0;
    const w = rig.server({ queues: ['q'] });
    w.handle('ovl', (task) => {
      calls++;
      if (calls > 1) return;
      first.resolve(task.id);
      if (how === 'a task that goes dead') {
        // dead only once a trigger was skipped behind it (the marker was in force)
        return skipped().then(() => {
          throw new NonRetryableError('fails for good');
        });
      }
      return new Promise<void>((_, reject) => task.signal.addEventListener('abort', () => reject(task.signal.reason as Error)));
    });
    await w.start();
    await startSchedule();
    const id = await first.promise;
    await skipped();
    if (how === 'a running task cancelled by an operator') await rig.inspector.cancelTask(id, { queue: 'q' });
    else await waitFor(() => seen.find((e) => e.type === 'task.dead' && e.taskId === id), 'the task to go dead');
    const endedAt = Date.now();
    await firedAfter(endedAt);
  },
);

test('skip: a task deleted by an operator before it started takes the marker back; the next trigger fires', async () => {
  await startSchedule(); // no worker serves q: the first task waits
  const fired = await waitFor(() => seen.find((e) => e.type === 'schedule.fired' && e.schedule === 'ovl'), 'the first fire');
  await skipped();
  const id = (fired as Extract<ChronosEvent, { type: 'schedule.fired' }>).taskId;
  expect((await rig.inspector.deleteTask('q', id, { state: 'pending' })).count).toBe(1);
  await firedAfter(Date.now());
});
