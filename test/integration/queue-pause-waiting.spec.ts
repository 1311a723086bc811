// A pause of a queue whose task a worker fetched but has not started yet (it waits in the worker's
// buffer for a slot, or is held for its trigger instant): the task goes back to the queue at the
// pause, as one a read delivers after the pause does, and starts only after the resume.
import { QueueRig } from '../helpers/queue.js';
import { waitFor } from '../helpers/wait.js';
import { workerWithWaitingTask } from '../helpers/waiting-task.js';

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

test.each([
  ['the server', 'server'],
  ['an operator (Inspector)', 'inspector'],
] as const)('a task waiting in the worker for a slot does not start once %s pauses its queue; it runs after the resume', async (_, by) => {
  const { worker, waiting } = await workerWithWaitingTask(rig, rig.inspector);
  const queue = (await rig.inspector.findTask(waiting))!.queue;
  if (by === 'server') await worker.server.pause(queue);
  else await rig.inspector.pauseQueue(queue);
  // before: it stayed in the worker and started as soon as the slot came free, the queue paused
  await waitFor(async () => (await rig.inspector.findTask(waiting))?.state === 'pending', 'the waiting task to be back in its queue');
  worker.openAll();
  const other = queue === 'a' ? 'b' : 'a';
  await waitFor(async () => {
    const q = await rig.inspector.queue(other);
    return q.pending + q.active === 0;
  }, `queue ${other} to drain`);
  expect(worker.started).not.toContain(waiting);
  if (by === 'server') await worker.server.resume(queue);
  else await rig.inspector.resumeQueue(queue);
  await waitFor(() => worker.started.includes(waiting), 'the task to start after the resume');
  expect(rig.logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
});
