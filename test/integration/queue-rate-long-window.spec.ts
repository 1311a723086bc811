// A rate limit whose window is longer than Node's longest timer (2^31-1 ms, about 24.8 days: a
// monthly quota such as { max: 1000, duration: 30 days }) holds the queue's tasks back without a
// busy loop: the held-back fetch waits for its blockTimeout (or a wake), not for a timer that Node
// cuts to 1 ms.
import { jest } from '@jest/globals';
import type { ChronosEvent } from '../../lib/core/runtime/events.js';
import { TIMER_MAX_MS } from '../../lib/core/runtime/options.js';
import { QueueRig } from '../helpers/queue.js';
import { waitFor } from '../helpers/wait.js';

const MONTH_MS = 30 * 24 * 3600 * 1000;

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(async () => {
  jest.restoreAllMocks();
  await rig.close();
});

test.each([
  ['rate', { rate: { max: 1, duration: MONTH_MS } }, undefined],
  ['groupRate', { groupRate: { max: 1, duration: MONTH_MS } }, 'tenant'],
] as const)('a %s window over 2^31-1 ms holds the second task back without arming an overflowing timer', async (_, limits, group) => {
  await rig.client.setQueueLimits('r', limits);
  const timers = jest.spyOn(globalThis, 'setTimeout');
  const limited: Extract<ChronosEvent, { type: 'queue.limited' }>[] = [];
  rig.events.subscribe((e) => void (e.type === 'queue.limited' && limited.push(e)));
  const started: string[] = [];
  const s = rig.server({ queues: ['r'], concurrency: 2, blockTimeout: 200 });
  s.handle('t', (task) => void started.push(task.id));
  await s.start();
  await rig.client.enqueue('t', { i: 1 }, { queue: 'r', group });
  await rig.client.enqueue('t', { i: 2 }, { queue: 'r', group });
  await waitFor(() => started.length === 1 && limited.length > 0, 'the first task to run and the second to be held back');
  // before: the limiter armed setTimeout(wake, ~2.59e9), which Node runs after 1 ms (TimeoutOverflowWarning):
  // the fetch looped at once, about a thousand fetch-limited.lua calls and queue.limited events a second
  const overflowing = timers.mock.calls.map((c) => c[1]).filter((ms) => typeof ms === 'number' && ms > TIMER_MAX_MS);
  expect(overflowing).toEqual([]);
  expect(started).toHaveLength(1);
});
