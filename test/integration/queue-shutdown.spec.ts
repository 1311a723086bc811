// A shutdown stops every loop of the server at once, whatever each loop was doing when it began: a
// loop in the middle of a round (not asleep, so nothing to wake) must not go to sleep afterwards.
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => {
  rig = new QueueRig();
});
afterEach(async () => {
  await rig.close();
});

test('a server shut down while its forward loop runs its first round stops at once: no loop sleeps out its poll, no false "Redis did not answer"', async () => {
  const server = rig.server({ queues: ['a', 'b'], shutdownTimeout: 200 });
  await server.start(); // the forward loop's first sweep and round are in flight when start() returns
  await server.shutdown();
  // before: the forward loop finished its round after the loops were woken, then slept its 30 s poll, and
  // the drain gave up at shutdownTimeout + 5 s with a warning that Redis did not answer (it did)
  expect(rig.logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  expect(server.health().services.find((s) => s.name === 'forward')).toMatchObject({ state: 'stopped' });
  expect(rig.logger.lines.map((l) => l.message)).toContainEqual(expect.stringMatching(/^Worker stopped/));
});

test('a shutdown does not report a cancelled task whose handler ignores its signal as put back in the queue: it is dead', async () => {
  const inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace });
  const requeued: string[] = [];
  rig.events.subscribe((e) => void (e.type === 'task.requeued' && requeued.push(e.taskId)));
  const server = rig.server({ queues: ['c'], shutdownTimeout: 100 });
  const started = deferred();
  const cancelled = deferred();
  const end = deferred();
  server.handle('stubborn', async (task) => {
    task.signal.addEventListener('abort', () => cancelled.resolve(), { once: true });
    started.resolve();
    await end.promise; // ignores its signal
  });
  await server.start();
  const { id } = await rig.client.enqueue('stubborn', {}, { queue: 'c' });
  await started.promise;
  await inspector.cancelTask(id, { actor: 'ops:eve' });
  await cancelled.promise;
  await server.shutdown();
  end.resolve();
  // before: "Shutdown grace over: 1 task(s) aborted and put back in the queue (ids=<id>)" and a task.requeued (shutdown)
  expect(requeued).toEqual([]);
  expect(rig.logger.lines.filter((l) => l.message.includes(id) && /put back/.test(l.message))).toEqual([]);
  expect((await inspector.findTask(id))?.state).toBe('dead');
  await inspector.close();
});

/** Open TCP sockets of this process (Redis connections among them). */
const sockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

test.each([0, 1, 2, 3, 4, 5, 6])(
  'a shutdown while the server starts (%i event-loop turns after start()) ends the start quietly and leaves no connection open',
  async (turns) => {
    await rig.client.redis.ping(); // the rig's own connections are open before counting
    const before = sockets();
    const server = rig.server({ queues: ['a'], serverId: 'early' });
    const starting = server.start().then(
      () => 'resolved',
      (err: unknown) => `rejected: ${String(err)}`,
    );
    for (let i = 0; i < turns; i++) await new Promise<void>((r) => setImmediate(r)); // the start's steps go on meanwhile
    await server.shutdown();
    // before: start() rejected with 'Connection is closed.' and the connections its step in flight opened (the
    // blocking read's, the limits subscriber) stayed open: the process never exited
    expect(await starting).toBe('resolved');
    expect(server.isRunning).toBe(false);
    await waitFor(() => sockets() <= before, 'every connection of the server to close');
  },
);
