// An operator's cancel of a task a worker fetched but has not started yet (it waits in the worker's
// buffer for a slot: a multi-queue read may deliver more entries than the free slots). The Inspector
// shows it active and cancels it (dead at once); the worker must then never start it.
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, waitFor, type Deferred } from '../helpers/wait.js';

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

test('a task cancelled while it waits in the worker for a slot never starts: dead, and no warning of a gone entry', async () => {
  const s = rig.server({ queues: ['a', 'b'], concurrency: 1 });
  const started: string[] = [];
  const gates = new Map<string, Deferred<void>>();
  let openAll = false;
  s.handle('t', async (task) => {
    const gate = deferred();
    gates.set(task.id, gate);
    started.push(task.id);
    if (!openAll) await gate.promise;
  });
  await s.start();
  const ids = new Set<string>();
  for (let i = 0; i < 3; i++) ids.add((await rig.client.enqueue('t', { i }, { queue: 'a' })).id);
  await waitFor(() => started.length === 1, 'the first task to start');
  for (let i = 0; i < 3; i++) ids.add((await rig.client.enqueue('t', { i }, { queue: 'b' })).id);
  // let tasks end one by one until the worker holds one it has not started (fetched beyond its one slot)
  const activeIds = async () => {
    const pages = await Promise.all(['a', 'b'].map((q) => inspector.taskPage(q, 'active', { limit: 10 })));
    return pages.flatMap((p) => p.tasks.map((t) => t.id));
  };
  let waiting: string | undefined;
  while (!waiting && started.length < ids.size) {
    const n = started.length;
    gates.get(started[n - 1])!.resolve();
    await waitFor(() => started.length > n, 'the next task to start');
    waiting = (await activeIds()).find((id) => !started.includes(id));
  }
  expect(waiting).toBeDefined(); // the worker fetched one beyond its slot (else the test proves nothing)
  await inspector.cancelTask(waiting!, { actor: 'ops:eve' });
  // every other task runs to its end
  while (started.length < ids.size - 1) {
    const n = started.length;
    gates.get(started[n - 1])!.resolve();
    await waitFor(() => started.length > n || started.length === ids.size - 1, 'the next task to start', 10_000);
  }
  openAll = true;
  for (const g of gates.values()) g.resolve();
  await waitFor(async () => (await inspector.queue('a')).active + (await inspector.queue('b')).active === 0, 'every run to end');
  // before: the cancelled task started when a slot came free, and its ack warned its entry was gone
  expect(started).not.toContain(waiting);
  expect((await inspector.findTask(waiting!))?.state).toBe('dead');
  expect(rig.logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
});
