// A cancel notice is a PUBLISH: a worker whose subscriber connection is reconnecting at that moment never
// hears it. Its claims round (every visibility timeout / 3) finds the entry pending for no consumer and the
// task dead as cancelled, and cancels the run there: the running handler's signal is aborted (before: the
// handler ran on, unaware, and its end found its entry gone).
import { TaskCancelledError } from '../../lib/core/runtime/errors.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

/** Closes the server's subscriber connections (named after the namespace); they reconnect after `retryStrategy`'s 3 s. */
async function dropSubscribers(): Promise<void> {
  const list = (await rig.client.redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
  const ids = list
    .split('\n')
    .filter((line) => line.includes(` name=${rig.namespace} `))
    .map((line) => /^id=(\d+) /.exec(line)![1]);
  expect(ids.length).toBeGreaterThan(0);
  for (const id of ids) await rig.client.redis.call('CLIENT', 'KILL', 'ID', id);
}

test('a cancel whose notice the worker missed (its subscriber reconnecting) still aborts the running handler', async () => {
  const { hostname, port } = new URL(redisUrl());
  const s = rig.server({
    queues: ['c'],
    visibilityTimeout: 1500,
    connection: { host: hostname, port: Number(port || 6379), connectionName: rig.namespace, retryStrategy: () => 3000 },
  });
  const started: string[] = [];
  const aborted = deferred<unknown>();
  s.handle('long', (t) => {
    started.push(t.id);
    return new Promise<void>((resolve) =>
      t.signal.addEventListener('abort', () => {
        aborted.resolve(t.signal.reason);
        resolve();
      }),
    );
  });
  const cancelled: string[] = [];
  rig.events.subscribe((e) => void (e.type === 'task.cancelled' && cancelled.push(`${e.taskId} by ${e.actor}`)));
  await s.start();
  const first = await rig.client.enqueue('long', {}, { queue: 'c' });
  await waitFor(() => started.length === 1, 'the task to start');
  await dropSubscribers();
  await rig.inspector.cancelTask(first.id, { actor: 'ops:bob' });
  const reason = await aborted.promise;
  expect(reason).toBeInstanceOf(TaskCancelledError);
  expect(reason).toMatchObject({ taskId: first.id, actor: 'ops:bob' });
  await waitFor(() => s.activeCount === 0, 'the run to end');
  expect(cancelled).toEqual([`${first.id} by ops:bob`]);
  expect(rig.logger.lines.some((l) => l.message.includes('its notice was missed') && l.message.includes(`id=${first.id}`))).toBe(true);
  expect(await rig.inspector.queue('c')).toMatchObject({ pending: 0, active: 0, dead: 1 });
});
