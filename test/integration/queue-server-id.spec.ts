// A serverId given to two live servers: the second would take the first's running tasks back at
// start ("left by this server's previous process") and both would run them. It is refused instead;
// a restart after the previous process ended still takes back what it left.
import { ChronosStateError } from '../../lib/core/runtime/errors.js';
import type { ChronosEvent } from '../../lib/core/runtime/events.js';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { QueueRig } from '../helpers/queue.js';
import { deferred } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => {
  rig = new QueueRig();
});
afterEach(async () => {
  await rig.close();
});

test('a second live server with the same serverId is refused at start; the first keeps its running task, which runs once', async () => {
  const runs: string[] = [];
  const started = deferred();
  const end = deferred();
  const first = rig.server({ queues: ['q'], serverId: 'pod-0' });
  first.handle('long', async (t) => {
    runs.push(t.id);
    started.resolve();
    await end.promise;
  });
  await first.start();
  const { id } = await rig.client.enqueue('long', {}, { queue: 'q' });
  await started.promise;
  const second = rig.server({ queues: ['q'], serverId: 'pod-0' });
  second.handle('long', (t) => void runs.push(t.id));
  // before: it started, put the first's running task back in the queue, and the task ran twice
  const refused = await second.start().then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(refused).toBeInstanceOf(ChronosStateError);
  expect((refused as Error).message).toMatch(/^Server id "pod-0" is in use: a live server holds its liveness channel/);
  expect(second.isRunning).toBe(false);
  end.resolve();
  await first.shutdown();
  expect(runs).toEqual([id]);
  expect(rig.logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  // once the first has stopped, the id is free again
  const third = rig.server({ queues: ['q'], serverId: 'pod-0' });
  await third.start();
  expect(third.isRunning).toBe(true);
});

test('a task taken back at start from the previous process with the same serverId is emitted as task.requeued with its type (reason recovered)', async () => {
  const { id } = await rig.client.enqueue('mail', { to: 'a@b.c' }, { queue: 'q' });
  const keys = new QueueKeys(rig.namespace, 'q');
  // the previous process 'pod-1' had fetched it and died before its end: the entry is pending under its name
  await rig.client.redis.xgroup('CREATE', keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM');
  await rig.client.redis.xreadgroup('GROUP', CONSUMER_GROUP, 'pod-1', 'COUNT', 1, 'STREAMS', keys.stream, '>');
  const requeued: ChronosEvent[] = [];
  rig.events.subscribe((e) => void (e.type === 'task.requeued' && requeued.push(e)));
  const ran = deferred<string>();
  const server = rig.server({ queues: ['q'], serverId: 'pod-1' });
  server.handle('mail', (t) => ran.resolve(t.id));
  await server.start();
  expect(await ran.promise).toBe(id);
  // the docs said the type was empty for recovered: it is known
  expect(requeued).toEqual([{ type: 'task.requeued', queue: 'q', taskId: id, taskType: 'mail', reason: 'recovered' }]);
});
