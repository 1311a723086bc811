import type { Inspector } from '../../lib/core/admin/inspector.js';
import type { ChronosServer } from '../../lib/core/worker/server.js';
import type { QueueRig } from './queue.js';
import { deferred, waitFor, type Deferred } from './wait.js';

/** A worker of concurrency 1 on queues a and b whose handler of type `t` runs until its gate opens. */
export interface GatedWorker {
  readonly server: ChronosServer;
  /** Task ids in the order their handler started. */
  readonly started: string[];
  /** Ends the handler of the task started last, and waits for the next one to start. */
  next(): Promise<void>;
  /** Ends every handler, the running ones and those still to start. */
  openAll(): void;
  /** The ids of the 6 tasks enqueued (3 in a, 3 in b). */
  readonly ids: Set<string>;
}

/**
 * Starts a gated worker (concurrency 1, queues a and b, 3 tasks in each), and lets its tasks end one
 * by one until it holds one it fetched but has not started (a multi-queue read delivered more than
 * its free slot: the extra entry waits in its buffer): that task's id, active for the Inspector.
 */
export async function workerWithWaitingTask(rig: QueueRig, inspector: Inspector): Promise<{ worker: GatedWorker; waiting: string }> {
  const server = rig.server({ queues: ['a', 'b'], concurrency: 1 });
  const started: string[] = [];
  const gates = new Map<string, Deferred<void>>();
  let open = false;
  server.handle('t', async (task) => {
    const gate = deferred();
    gates.set(task.id, gate);
    started.push(task.id);
    if (!open) await gate.promise;
  });
  await server.start();
  const ids = new Set<string>();
  for (let i = 0; i < 3; i++) ids.add((await rig.client.enqueue('t', { i }, { queue: 'a' })).id);
  await waitFor(() => started.length === 1, 'the first task to start');
  for (let i = 0; i < 3; i++) ids.add((await rig.client.enqueue('t', { i }, { queue: 'b' })).id);
  const worker: GatedWorker = {
    server,
    started,
    ids,
    async next() {
      const n = started.length;
      gates.get(started[n - 1])!.resolve();
      await waitFor(() => started.length > n, 'the next task to start');
    },
    openAll() {
      open = true;
      for (const g of gates.values()) g.resolve();
    },
  };
  const activeIds = async () => {
    const pages = await Promise.all(['a', 'b'].map((q) => inspector.taskPage(q, 'active', { limit: 10 })));
    return pages.flatMap((p) => p.tasks.map((t) => t.id));
  };
  let waiting: string | undefined;
  while (!waiting && started.length < ids.size) {
    await worker.next();
    waiting = (await activeIds()).find((id) => !started.includes(id));
  }
  if (!waiting) throw new Error('the worker never fetched a task beyond its slot: the test cannot hold one waiting');
  return { worker, waiting };
}
