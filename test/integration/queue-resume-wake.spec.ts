// A worker whose every queue is paused waits for the resume, not for its blockTimeout: the resume
// (the server's own, or an operator's through the pause notice) starts the queue's tasks at once.
// The servers' blockTimeout is set far beyond the test's waits, so only the resume can wake them.
import { QueueRig } from '../helpers/queue.js';
import { waitFor } from '../helpers/wait.js';

const FAR = 120_000; // blockTimeout, ms

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

test.each([
  ['its own server', 'server', {}],
  ['an operator (Inspector)', 'inspector', {}],
  ['an operator, on a queue with a fleet-wide limit', 'inspector', { concurrency: 1 }],
] as const)('a worker whose only queue is paused starts its tasks as soon as %s resumes it', async (_, by, limits) => {
  if (Object.keys(limits).length > 0) await rig.client.setQueueLimits('p', limits);
  const started: string[] = [];
  const s = rig.server({ queues: ['p'], concurrency: 2, blockTimeout: FAR });
  s.handle('t', (task) => void started.push(task.id));
  await s.start();
  await rig.inspector.pauseQueue('p');
  await waitFor(() => s.pausedQueues.has('p'), 'the server to know the pause');
  const { id } = await rig.client.enqueue('t', {}, { queue: 'p' });
  if (by === 'server') await s.resume('p');
  else await rig.inspector.resumeQueue('p');
  // before: the fetch loop slept out its blockTimeout with every queue paused, deaf to the resume
  await waitFor(() => started.includes(id), 'the task to start after the resume');
});
