// A limit changed while a worker waits because that limit held its queue back applies at once, not
// at the worker's blockTimeout: the change's notice (`<ns>:limits`) wakes the wait whatever held the
// queue (its concurrency, its rate, its groups' limits). The server's blockTimeout and the rate
// windows are far beyond the test's waits, so only the notice can end the wait in time. A slot freed
// by an operator's cancel is announced the same way (the cancelled task's worker may announce nothing),
// and so is one freed by a timeout whose handler runs on (when its failure is written, not when it returns).
import type { QueueLimitsUpdate } from '../../lib/core/queue/limits.js';
import { QueueRig } from '../helpers/queue.js';
import { deferred, waitFor } from '../helpers/wait.js';

const FAR = 120_000; // blockTimeout and rate window, ms

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

const cases: [string, 'concurrency' | 'rate' | 'group', QueueLimitsUpdate, QueueLimitsUpdate, string | undefined][] = [
  // before: a queue held back by its rate slept until its blockTimeout (the notice woke only the other waits)
  ['its rate, cleared', 'rate', { rate: { max: 1, duration: FAR } }, { rate: null }, undefined],
  ['its rate, raised', 'rate', { rate: { max: 1, duration: FAR } }, { rate: { max: 2, duration: FAR } }, undefined],
  ['its concurrency, raised', 'concurrency', { concurrency: 1 }, { concurrency: 2 }, undefined],
  ['its group rate, cleared', 'group', { groupRate: { max: 1, duration: FAR } }, { groupRate: null }, 'tenant'],
];

test.each(cases)('a queue held back by %s: the held task starts at once', async (_, limit, limits, change, group) => {
  await rig.client.setQueueLimits('q', limits);
  const release = deferred();
  const started: number[] = [];
  const s = rig.server({ queues: ['q'], concurrency: 4, blockTimeout: FAR });
  s.handle<{ i: number }>('hold', (t) => (started.push(t.payload.i), release.promise));
  await s.start();
  try {
    await rig.client.enqueue('hold', { i: 1 }, { queue: 'q', group });
    await waitFor(() => started.length === 1, 'the first task to start');
    const held = s.signals.next('held', (d) => d.queue === 'q' && d.limit === limit);
    await rig.client.enqueue('hold', { i: 2 }, { queue: 'q', group });
    await held; // the worker waits now, the second task held back
    expect(started).toEqual([1]);
    await rig.client.setQueueLimits('q', change);
    await waitFor(() => started.length === 2, 'the held task to start after the change');
  } finally {
    release.resolve();
  }
});

test("an operator's cancel frees the slot of a task whose handler runs on (a stuck worker): the held task starts at once", async () => {
  await rig.client.setQueueLimits('q', { concurrency: 1 });
  const release = deferred();
  const started: string[] = [];
  let stuckId = '';
  const s = rig.server({ queues: ['q'], concurrency: 4, blockTimeout: FAR });
  // ignores its signal, as a hung handler or a stopped process does: its server announces nothing
  s.handle('stuck', (t) => ((stuckId = t.id), started.push('stuck'), release.promise));
  s.handle('quick', () => void started.push('quick'));
  await s.start();
  try {
    await rig.client.enqueue('stuck', {}, { queue: 'q' });
    await waitFor(() => stuckId !== '', 'the stuck task to start');
    const held = s.signals.next('held', (d) => d.queue === 'q' && d.limit === 'concurrency');
    await rig.client.enqueue('quick', {}, { queue: 'q' });
    await held;
    await rig.inspector.cancelTask(stuckId);
    // before: the cancel freed the slot in Redis, but no notice told the waiting worker (it slept its blockTimeout)
    await waitFor(() => started.includes('quick'), 'the held task to start after the cancel');
  } finally {
    release.resolve();
  }
});

test('a timed-out task whose handler runs on frees its slot when its failure is written: the held task starts then', async () => {
  await rig.client.setQueueLimits('q', { concurrency: 1 });
  const release = deferred();
  const started: string[] = [];
  const s = rig.server({ queues: ['q'], concurrency: 4, blockTimeout: FAR });
  s.handle('stuck', () => (started.push('stuck'), release.promise)); // ignores its signal: runs on after its timeout
  s.handle('quick', () => void started.push('quick'));
  await s.start();
  try {
    const held = s.signals.next('held', (d) => d.queue === 'q' && d.limit === 'concurrency');
    await rig.client.enqueue('stuck', {}, { queue: 'q', timeout: 1000, maxRetry: 0 });
    await rig.client.enqueue('quick', {}, { queue: 'q' });
    await held;
    // before: the slot was announced when the handler returned (never, here), so the waiting worker slept its blockTimeout
    await waitFor(() => started.includes('quick'), 'the held task to start after the timeout');
    expect(started).toEqual(['stuck', 'quick']);
  } finally {
    release.resolve();
  }
});
