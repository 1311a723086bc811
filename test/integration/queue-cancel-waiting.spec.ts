// An operator's cancel of a task a worker fetched but has not started yet (it waits in the worker's
// buffer for a slot: a multi-queue read may deliver more entries than the free slots). The Inspector
// shows it active and cancels it (dead at once); the worker must then never start it.
import { QueueRig } from '../helpers/queue.js';
import { waitFor } from '../helpers/wait.js';
import { workerWithWaitingTask } from '../helpers/waiting-task.js';

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

test('a task cancelled while it waits in the worker for a slot never starts: dead, and no warning of a gone entry', async () => {
  const { worker, waiting } = await workerWithWaitingTask(rig, rig.inspector);
  await rig.inspector.cancelTask(waiting, { actor: 'ops:eve' });
  // the notice reaches the worker on its subscriber connection, in a race with the reply to the
  // cancel: a slot freed before it arrives would start the task (the notice then aborts it)
  await waitFor(() => rig.logger.lines.some((l) => l.message.includes('before it started: dropped while waiting for a slot')), 'the drop');
  // every other task runs to its end
  while (worker.started.length < worker.ids.size - 1) await worker.next();
  worker.openAll();
  await waitFor(async () => (await rig.inspector.queue('a')).active + (await rig.inspector.queue('b')).active === 0, 'every run to end');
  // before: the cancelled task started when a slot came free, and its ack warned its entry was gone
  expect(worker.started).not.toContain(waiting);
  expect((await rig.inspector.findTask(waiting))?.state).toBe('dead');
  expect(rig.logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
});
