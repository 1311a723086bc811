// The module's `maxPayloadBytes` holds a schedule's payload as it holds an enqueue's: a @Cron payload
// over it is a boot error naming the method, the runtime adds refuse it naming the schedule, and the
// testing kit does the same (a 3 MiB @Cron payload booted under a 1 KiB limit, and every trigger
// would have copied it into a task).
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ChronosDiscoveryError, Cron, InvalidScheduleError, SchedulerService } from '../../lib/index.js';
import { ChronosTestingModule } from '../../lib/nest/testing/index.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';

const blob = (bytes: number) => ({ blob: 'x'.repeat(bytes) });

@Injectable()
class BigPayloadJob {
  @Cron('0 3 * * *', { payload: blob(2000) })
  nightly() {}
}

let apps: ChronosTestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.map((a) => a.close()));
  apps = [];
});

test('a @Cron payload over maxPayloadBytes is a ChronosDiscoveryError naming the method, the size and the limit', async () => {
  const booted = createChronosTestApp({ providers: [BigPayloadJob], options: { maxPayloadBytes: 1024 } });
  const err = await booted.then(
    (app) => (apps.push(app), undefined), // booted: closed after the test
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ChronosDiscoveryError);
  expect((err as Error).message).toMatch(
    /BigPayloadJob#nightly: Invalid schedule "BigPayloadJob\.nightly".*over the limit of 1024 bytes \(maxPayloadBytes\)/,
  );
});

test('SchedulerService.addSchedule and upsertSchedules refuse a payload over it; 0 = no limit', async () => {
  const app = await createChronosTestApp({ options: { maxPayloadBytes: 1024 } });
  apps.push(app);
  const scheduler = app.get(SchedulerService);
  const def = { name: 'tenant.big', spec: '@daily', type: 'report.build', payload: blob(2000) };
  await expect(scheduler.addSchedule(def)).rejects.toThrow(InvalidScheduleError);
  await expect(scheduler.addSchedule(def)).rejects.toThrow(/"tenant\.big".*over the limit of 1024 bytes/);
  await expect(scheduler.upsertSchedules([{ ...def, name: 'tenant.ok', payload: null }, def])).rejects.toThrow(/definition \[1\]/);
  await expect(scheduler.addSchedules([def])).rejects.toThrow(/over the limit of 1024 bytes/);

  const unlimited = await createChronosTestApp({ options: { maxPayloadBytes: 0 } });
  apps.push(unlimited);
  await unlimited.get(SchedulerService).addSchedule(def);
});

test('the testing kit holds schedules to it too', async () => {
  await expect(
    Test.createTestingModule({ imports: [ChronosTestingModule.forRoot({ maxPayloadBytes: 1024 })], providers: [BigPayloadJob] })
      .compile()
      .then((m) => m.init()),
  ).rejects.toThrow(/over the limit of 1024 bytes/);
  const module = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot({ maxPayloadBytes: 1024 })] }).compile();
  await module.init();
  const scheduler = module.get(SchedulerService);
  await expect(scheduler.addSchedule({ name: 'kit.big', spec: '@daily', payload: blob(2000) })).rejects.toThrow(InvalidScheduleError);
  await expect(scheduler.upsertSchedules([{ name: 'kit.big', spec: '@daily', payload: blob(2000) }])).rejects.toThrow(/over the limit/);
  await module.close();
});
