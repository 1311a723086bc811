// Unit tests of the sample's schedules, written as a user of @chronos/nest would: no Redis, the
// real decorators, the kit's virtual clock.
import { Test, type TestingModule } from '@nestjs/testing';
import { ChronosTesting, ChronosTestingModule } from '@chronos/nest/testing';
import { ReportsService } from '../reports/reports.service.js';

let module: TestingModule;
let chronos: ChronosTesting;

beforeEach(async () => {
  module = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot()], providers: [ReportsService] }).compile();
  module.useLogger(false);
  await module.init();
  chronos = module.get(ChronosTesting);
});
afterEach(() => module.close());

test('on the night Budapest springs forward, the 03:00 report runs once, at 03:00 local time', async () => {
  await chronos.fireDue('2026-03-28T12:00:00Z', '2026-03-29T12:00:00Z');

  const [report] = chronos.enqueued('ReportsService.nightlyReport');
  expect(report.id).toBe('ReportsService.nightlyReport:1774746000');
  expect(new Date(report.triggerAt!).toISOString()).toBe('2026-03-29T01:00:00.000Z'); // 03:00 CEST
  expect(await chronos.perform(report)).toMatchObject({ outcome: 'succeeded' });
});

test('the health check fires on the epoch-aligned 10 s grid', async () => {
  const fired = await chronos.fireDue('2026-01-01T00:00:00Z', '2026-01-01T00:00:59Z');
  const checks = fired.filter((t) => t.schedule === 'ReportsService.healthCheck');
  expect(checks.map((t) => new Date(t.triggerAt!).toISOString().slice(14, 19))).toEqual([
    '00:00',
    '00:10',
    '00:20',
    '00:30',
    '00:40',
    '00:50',
  ]);
  expect((await chronos.drain()).dead).toBe(0);
});
