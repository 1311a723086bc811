// After app.close(), the runtime schedule API of SchedulerService and the reads and acts of
// InspectorService are usage errors: a ChronosStateError naming the call and saying the connection
// was closed. Before, they went to the connection the app's close had quit and failed with
// ioredis's bare "Error: Connection is closed.", naming neither the call nor why (trial 32). A
// connection the app passed in is left open at the close, and the services keep using it.
import { Redis } from 'ioredis';
import { ChronosStateError, InspectorService, SchedulerService } from '../../lib/index.js';
import { Inspector } from '../../lib/core/index.js';
import { createChronosTestApp } from '../helpers/nest-app.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

const def = { name: 'tenant-1.digest', spec: '@every 1m', type: 'digest' };

async function rejection(call: () => Promise<unknown>): Promise<unknown> {
  return call().then(
    () => undefined,
    (e: unknown) => e,
  );
}

test('after app.close(), SchedulerService and InspectorService calls reject with a ChronosStateError naming the call', async () => {
  const app = await createChronosTestApp({ options: { worker: false } });
  const scheduler = app.get(SchedulerService);
  const inspector = app.get(InspectorService);
  await scheduler.addSchedule(def); // works while the app runs
  await app.close();
  const calls: [string, () => Promise<unknown>][] = [
    ['addSchedule', () => scheduler.addSchedule(def)],
    ['pauseSchedule', () => scheduler.pauseSchedule(def.name)],
    ['resumeSchedule', () => scheduler.resumeSchedule(def.name)],
    ['triggerNow', () => scheduler.triggerNow(def.name)],
    ['removeSchedule', () => scheduler.removeSchedule(def.name)],
    ['upsertSchedules', () => scheduler.upsertSchedules([def])],
    ['schedules', () => inspector.schedules()],
    ['queues', () => inspector.queues()],
    ['leader', () => inspector.leader()],
    ['overview', () => inspector.overview()],
  ];
  for (const [name, call] of calls) {
    const err = await rejection(call);
    expect([name, err]).toEqual([name, expect.any(ChronosStateError)]);
    expect([name, (err as Error).message]).toEqual([name, expect.stringMatching(new RegExp(`^${name}: .*(closed|stopped)`))]);
  }
});

test('with a connection the app passed in (left open by app.close()), the services keep working after the close', async () => {
  const redis = new Redis(redisUrl());
  const app = await createChronosTestApp({ options: { worker: false, connection: redis } });
  try {
    const scheduler = app.get(SchedulerService);
    const inspector = app.get(InspectorService);
    await app.close();
    await scheduler.addSchedule(def);
    expect(await scheduler.pauseSchedule(def.name)).toBe(true);
    expect((await inspector.schedules()).map((s) => s.name)).toContain(def.name);
  } finally {
    redis.disconnect();
  }
});

test('a core Inspector whose connection its owner closed names the call; a connection passed in stays usable', async () => {
  const ns = newNamespace('insp-closed');
  const redis = new Redis(redisUrl());
  try {
    const own = new Inspector({ connection: redisUrl(), namespace: ns });
    await own.queues();
    await own.close();
    const err = await rejection(() => own.queues());
    expect(err).toBeInstanceOf(ChronosStateError);
    expect((err as Error).message).toMatch(/^queues: this Inspector's connection was closed/);

    const shared = new Inspector({ connection: redis, namespace: ns });
    await shared.close(); // leaves the connection passed in open
    expect(await shared.queues()).toEqual([]);
    // a second Inspector on the same connection is not affected by the first one's close either
    expect(await new Inspector({ connection: redis, namespace: ns }).leader()).toBeNull();
  } finally {
    redis.disconnect();
    await deleteNamespace(ns);
  }
});
