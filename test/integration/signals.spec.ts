// Test signals of the worker's and the scheduler's parts, and their services' health.
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, recordingLogger, within } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => {
  rig = new QueueRig();
});
afterEach(async () => {
  await rig.close();
});

test('a worker announces a forwarded delayed task, then its fetch; its health lists its services', async () => {
  const ran = deferred();
  const server = rig.server({ forwardInterval: 50 });
  server.handle('later', () => ran.resolve());
  await server.start();
  const forwarded = server.signals.next('forwarded');
  const fetched = server.signals.next('fetched');
  await rig.client.enqueue('later', {}, { delay: 200 });
  expect(await forwarded).toEqual({ moved: 1 });
  expect(await fetched).toEqual({ count: 1 });
  await within(ran.promise, 10_000, 'the task to run');
  const services = server.health().services;
  expect(services.map((s) => s.name)).toEqual(
    expect.arrayContaining(['fetch', 'forward', 'heartbeat', 'liveness', 'recover', 'claims', 'paused', 'notices']),
  );
  expect(services.every((s) => s.state === 'running')).toBe(true);
  await server.shutdown();
  expect(server.health().services.every((s) => s.state === 'stopped')).toBe(true);
});

test('a leader announces each firing tick; its health lists notices, lease, firing and heartbeat', async () => {
  const s = new Scheduler({ connection: redisUrl(), namespace: rig.namespace, leaderTtl: 1000, logger: recordingLogger() });
  try {
    s.register({ name: 'tick', spec: '@every 1s' });
    // the timer's ticks announce tick.start (synchronously, before the tick) and, once done, tick.done
    const order: string[] = [];
    s.signals.on('tick.start', () => void order.push('start'));
    const timerTickDone = deferred();
    s.signals.on('tick.done', () => {
      order.push('done');
      if (order.includes('start')) timerTickDone.resolve();
    });
    await s.start();
    await within(timerTickDone.promise, 10_000, 'a timer tick to end');
    expect(order.indexOf('start')).toBeLessThan(order.lastIndexOf('done'));
    expect(s.health().services.map((x) => [x.name, x.state])).toEqual([
      ['notices', 'running'],
      ['lease', 'running'],
      ['firing', 'running'],
      ['heartbeat', 'running'],
    ]);
  } finally {
    await s.stop();
  }
  expect(s.health().services.every((x) => x.state === 'stopped')).toBe(true);
});
