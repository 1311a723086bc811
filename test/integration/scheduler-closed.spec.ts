// The runtime schedule API of a Scheduler after its stop() (in a Nest app: SchedulerService after
// app.close()) is a usage error: a ChronosStateError naming the method and saying the scheduler was
// stopped. Before, the call went to the connection stop() had closed and failed with ioredis's bare
// "Error: Connection is closed.", naming neither the call nor why.
import { Redis } from 'ioredis';
import { ChronosStateError } from '../../lib/core/runtime/errors.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

const ns = newNamespace('sched-closed');
afterAll(() => deleteNamespace(ns));

test('every runtime write after stop() rejects with a ChronosStateError naming the method', async () => {
  const s = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, heartbeatInterval: 200 });
  await s.start();
  const def = { name: 'tenant-1.digest', spec: '@every 1m', type: 'digest' };
  await s.addSchedule(def); // works while running
  await s.stop();
  const calls: [string, () => Promise<unknown>][] = [
    ['addSchedule', () => s.addSchedule(def)],
    ['upsertSchedules', () => s.upsertSchedules([def])],
    ['addSchedules', () => s.addSchedules([def])],
    ['removeSchedules', () => s.removeSchedules([def.name])],
    ['removeSchedule', () => s.removeSchedule(def.name)],
    ['pauseSchedule', () => s.pauseSchedule(def.name)],
    ['resumeSchedule', () => s.resumeSchedule(def.name)],
    ['triggerNow', () => s.triggerNow(def.name)],
  ];
  for (const [name, call] of calls) {
    const err = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect([name, err]).toEqual([name, expect.any(ChronosStateError)]);
    expect((err as Error).message).toMatch(
      new RegExp(`^${name}: this scheduler was stopped \\(stop\\(\\); in a Nest app, at app\\.close\\(\\)\\)`),
    );
  }
});

test('with a connection passed in (left open by stop()), the runtime API still works after stop()', async () => {
  const redis = new Redis(redisUrl());
  try {
    const s = new Scheduler({ connection: redis, namespace: ns, leaderTtl: 1000, heartbeatInterval: 200 });
    await s.start();
    await s.stop();
    await s.addSchedule({ name: 'tenant-2.digest', spec: '@every 1m', type: 'digest' });
    expect(await s.pauseSchedule('tenant-2.digest')).toBe(true);
  } finally {
    redis.disconnect();
  }
});
