// A pause of a queue whose task a worker fetched but has not started yet (it waits in the worker's
// buffer for a slot, or is held for its trigger instant): the task goes back to the queue at the
// pause, as one a read delivers after the pause does, and starts only after the resume.
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';
import { workerWithWaitingTask } from '../helpers/waiting-task.js';

let rig: QueueRig;
let inspector: Inspector;
beforeEach(() => {
  rig = new QueueRig();
  inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace });
});
afterEach(async () => {
  await inspector.close();
  await rig.close();
});

test.each([
  ['the server', 'server'],
  ['an operator (Inspector)', 'inspector'],
] as const)('a task waiting in the worker for a slot does not start once %s pauses its queue; it runs after the resume', async (_, by) => {
  const { worker, waiting } = await workerWithWaitingTask(rig, inspector);
  const queue = (await inspector.findTask(waiting))!.queue;
  if (by === 'server') await worker.server.pause(queue);
  else await inspector.pauseQueue(queue);
  // before: it stayed in the worker and started as soon as the slot came free, the queue paused
  await waitFor(async () => (await inspector.findTask(waiting))?.state === 'pending', 'the waiting task to be back in its queue');
  worker.openAll();
  const other = queue === 'a' ? 'b' : 'a';
  await waitFor(async () => {
    const q = await inspector.queue(other);
    return q.pending + q.active === 0;
  }, `queue ${other} to drain`);
  expect(worker.started).not.toContain(waiting);
  if (by === 'server') await worker.server.resume(queue);
  else await inspector.resumeQueue(queue);
  await waitFor(() => worker.started.includes(waiting), 'the task to start after the resume');
  expect(rig.logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
});
