// A schedule's payload is held to `maxPayloadBytes` as an enqueue's is: every trigger copies it into
// a task, so a schedule was the way round the limit (a 3 MiB @Cron payload booted under a 1 KiB
// limit, and addSchedule stored a 2 MiB one). Refused with InvalidScheduleError naming the schedule,
// the size and the limit, before anything is written; 0 = no limit.
import { Inspector } from '../../lib/core/admin/inspector.js';
import { InvalidOptionsError, InvalidPayloadError, InvalidScheduleError } from '../../lib/core/runtime/errors.js';
import { openConnection, type RedisClient } from '../../lib/core/redis/connection.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger } from '../helpers/wait.js';

const ns = newNamespace('sched-payload');
// one connection for the inspectors (a client passed in is never closed by them): closed here
let redis: RedisClient;
const schedulers: Scheduler[] = [];
beforeAll(() => {
  redis = openConnection(redisUrl()).client;
});
afterAll(async () => {
  for (const s of schedulers) await s.stop();
  await deleteNamespace(ns);
  redis.disconnect();
});
const inspector = (options: Record<string, unknown> = {}) => new Inspector({ connection: redis, namespace: ns, ...options });
const scheduler = (options: Record<string, unknown> = {}) => {
  const s = new Scheduler({ connection: redisUrl(), namespace: ns, logger: recordingLogger(), ...options });
  schedulers.push(s);
  return s;
};
const blob = (bytes: number) => ({ blob: 'x'.repeat(bytes) });

test('Inspector.addSchedule refuses a payload over maxPayloadBytes (default 1 MiB), naming the schedule, size and limit; nothing is stored', async () => {
  const i = inspector();
  const err = await i.addSchedule({ name: 'big.one', spec: '@daily', payload: blob(2 * 1024 * 1024) }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidScheduleError);
  expect((err as InvalidScheduleError).cause).toBeInstanceOf(InvalidPayloadError);
  expect((err as Error).message).toMatch(
    /Invalid schedule "big\.one".*it is 2097163 bytes of JSON, over the limit of 1048576 bytes \(maxPayloadBytes\)/,
  );
  expect(await i.schedulePage({ prefix: 'big.' })).toEqual({ items: [], cursor: null });
  // its own limit, and 0 = none
  await expect(inspector({ maxPayloadBytes: 100 }).addSchedule({ name: 'big.two', spec: '@daily', payload: blob(100) })).rejects.toThrow(
    /over the limit of 100 bytes/,
  );
  await inspector({ maxPayloadBytes: 0 }).addSchedule({ name: 'big.three', spec: '@daily', payload: blob(100) });
  expect((await i.schedulePage({ prefix: 'big.' })).items.map((s) => s.name)).toEqual(['big.three']);
  expect(() => inspector({ maxPayloadBytes: -1 })).toThrow(InvalidOptionsError);
});

test('the bulk writes and Scheduler.register refuse it too: the bulk call with the index, before any write', async () => {
  const s = scheduler({ maxPayloadBytes: 1024 });
  expect(() => s.register({ name: 'code.big', spec: '@daily', payload: blob(2000) })).toThrow(
    /Invalid schedule "code\.big".*over the limit of 1024 bytes \(maxPayloadBytes\)/,
  );
  await s.start();
  const defs = [
    { name: 'bulk.small', spec: '@daily', payload: blob(10) },
    { name: 'bulk.big', spec: '@daily', payload: blob(2000) },
  ];
  for (const call of [() => s.upsertSchedules(defs), () => s.addSchedules(defs), () => s.addSchedule(defs[1])]) {
    const err = await call().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidScheduleError);
    expect((err as Error).message).toMatch(/"bulk\.big".*over the limit of 1024 bytes/);
  }
  expect(((await s.upsertSchedules([defs[1]]).catch((e: unknown) => e)) as InvalidScheduleError).index).toBe(0);
  expect((await inspector().schedulePage({ prefix: 'bulk.' })).items).toEqual([]);
  expect(() => scheduler({ maxPayloadBytes: 1.5 })).toThrow(/maxPayloadBytes: expected an integer >= 0, got 1\.5/);
});
