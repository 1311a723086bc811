// SchedulerService's bulk runtime API on a real Redis: the module's defaults fill unset fields as in
// addSchedule (the same fingerprint: an upsert after addSchedule writes nothing), and removeSchedules
// removes a code-declared schedule as removeSchedule does.
import { Injectable } from '@nestjs/common';
import { Cron, InspectorService, InvalidScheduleError, SchedulerService } from '../../lib/index.js';
import { registryNames, storedJson } from '../helpers/registry.js';
import type { StoredSchedule } from '../../lib/core/scheduler/definition.js';
import type { Redis } from 'ioredis';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { connect } from '../helpers/redis.js';
import { BAD_SCHEDULE_ERRORS, badScheduleArgs } from '../helpers/bad-schedule-args.js';

@Injectable()
class Jobs {
  @Cron('0 3 * * *', { name: 'code.nightly' })
  nightly(): void {}
}

let app: ChronosTestApp | undefined;
const opened: Redis[] = [];
afterEach(async () => {
  for (const r of opened.splice(0)) r.disconnect();
  await app?.close();
});

test('upsertSchedules / addSchedules / removeSchedules apply the module defaults like addSchedule', async () => {
  app = await createChronosTestApp({ providers: [Jobs], options: { queue: 'mail', maxRetry: 3, timeout: 5000, timeZone: 'Europe/Paris' } });
  const scheduler = app.get(SchedulerService);
  const redis = connect();
  opened.push(redis);
  const ns = app.namespace;
  const read = async (name: string) => JSON.parse((await storedJson(redis, ns, name))!) as StoredSchedule;

  await scheduler.addSchedule({ name: 'single', spec: '0 8 * * *', type: 'digest' });
  const single = await read('single');
  expect(single).toMatchObject({ queue: 'mail', maxRetry: 3, timeoutMs: 5000, timeZone: 'Europe/Paris' });
  // the same definition through the bulk path: the same fingerprint, so nothing is written
  expect(
    await scheduler.upsertSchedules([
      { name: 'single', spec: '0 8 * * *', type: 'digest' },
      { name: 'bulk', spec: '@every 1h' },
    ]),
  ).toEqual({
    added: 1,
    changed: 0,
    unchanged: 1,
  });
  expect(await read('single')).toEqual(single);
  expect(await read('bulk')).toMatchObject({ queue: 'mail', maxRetry: 3, timeoutMs: 5000, runtime: true });
  expect(
    await scheduler.addSchedules([
      { name: 'bulk', spec: '@every 2h' },
      { name: 'other', spec: '@every 1h', queue: 'q2' },
    ]),
  ).toEqual({
    added: 1,
    existing: ['bulk'],
  });
  expect((await read('other')).queue).toBe('q2');
  await expect(scheduler.upsertSchedules([{ name: 'x', spec: '0 8 * * *', timeZone: 'Nowhere/City' }])).rejects.toThrow(
    InvalidScheduleError,
  );

  // like removeSchedule, a schedule this live instance declares in code is removed too
  expect(await storedJson(redis, ns, 'code.nightly')).not.toBeNull();
  expect(await scheduler.removeSchedules(['code.nightly', 'bulk', 'nope'])).toEqual({ removed: 2, missing: ['nope'] });
  expect(await registryNames(redis, ns)).toEqual(['other', 'single']);
  // recorded in the audit trail, as its docstring says (it said the opposite: trial 22)
  const [entry] = (await app.get(InspectorService).audit({ limit: 1 })).entries;
  expect(entry).toMatchObject({ action: 'schedule.remove', count: 2, detail: 'code.nightly, bulk, nope; force', result: 'done' });
});

test('a field given as undefined takes the module default too, as a decorator option does (trial 22: queue "default", 25 retries)', async () => {
  app = await createChronosTestApp({ options: { queue: 'mail', maxRetry: 3, timeout: 5000 } });
  const scheduler = app.get(SchedulerService);
  const redis = connect();
  opened.push(redis);
  const read = async (name: string) => JSON.parse((await storedJson(redis, app!.namespace, name))!) as StoredSchedule;
  // what `{ queue: tenant.queue }` gives for a tenant without one
  const unset = { queue: undefined, maxRetry: undefined, timeout: undefined };
  await scheduler.addSchedule({ name: 'one', spec: '@every 1h', ...unset });
  await scheduler.upsertSchedules([{ name: 'up', spec: '@every 1h', ...unset }]);
  await scheduler.addSchedules([{ name: 'add', spec: '@every 1h', ...unset }]);
  for (const name of ['one', 'up', 'add'])
    expect([name, await read(name)]).toMatchObject([name, { queue: 'mail', maxRetry: 3, timeoutMs: 5000 }]);
  // a value the validation refuses is still refused, not replaced by the default
  await expect(scheduler.addSchedule({ name: 'bad', spec: '@every 1h', maxRetry: null as unknown as number })).rejects.toThrow(
    /"null": maxRetry/,
  );
});

test('a wrong argument of a runtime schedule call is a typed error naming it, as in the engine (trial 23: TypeErrors, an unknown option ignored)', async () => {
  app = await createChronosTestApp({});
  const scheduler = app.get(SchedulerService);
  expect(await badScheduleArgs(scheduler)).toEqual(BAD_SCHEDULE_ERRORS);
  expect(await app.get(InspectorService).schedules()).toEqual([]); // nothing written
});
