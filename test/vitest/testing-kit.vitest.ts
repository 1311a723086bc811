// @chronos/nest/testing under Vitest (`npx vitest run --config vitest.config.mjs`, part of `npm test`):
// the sample's services in manual mode, written as a Vitest user would. The same kit runs under Jest in
// sample/test/; this file proves nothing in it depends on Jest (globals, expect, module loading).
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ChronosTesting, ChronosTestingError, ChronosTestingModule } from '@chronos/nest/testing';
import { EmailService } from '../../sample/email/email.service.js';
import { SendEmail } from '../../sample/email/send-email.task.js';
import { EmailsController } from '../../sample/http/emails.controller.js';
import { ReportsService } from '../../sample/reports/reports.service.js';

let module: TestingModule;
let chronos: ChronosTesting;

beforeEach(async () => {
  module = await Test.createTestingModule({
    imports: [ChronosTestingModule.forRoot({ mode: 'manual' })],
    controllers: [EmailsController],
    providers: [EmailService, ReportsService],
  }).compile();
  module.useLogger(false);
  await module.init();
  chronos = module.get(ChronosTesting);
});
afterEach(() => module.close());

describe('the testing kit under Vitest', () => {
  test('a controller enqueues a SendEmail (constructor injection), and its @TaskHandler runs it', async () => {
    await module.get(EmailsController).send({ to: 'ada@example.com', subject: 'Welcome' });

    const task = chronos.expectEnqueued(SendEmail, { to: 'ada@example.com' });
    expect(await chronos.perform(task)).toMatchObject({ outcome: 'succeeded' });
    expect(chronos.enqueued()).toEqual([]);
  });

  test('expectEnqueued fails with a ChronosTestingError when the task was not enqueued', () => {
    expect(() => chronos.expectEnqueued(SendEmail, { to: 'nobody@example.com' })).toThrow(ChronosTestingError);
  });

  test('fireDue enqueues the 03:00 Budapest report once on the spring-forward night', async () => {
    await chronos.fireDue('2026-03-29T00:30:00Z', '2026-03-29T01:30:00Z');

    const [report, ...rest] = chronos.enqueued('ReportsService.nightlyReport');
    expect(rest).toEqual([]);
    expect(new Date(report.triggerAt!).toISOString()).toBe('2026-03-29T01:00:00.000Z');
    expect(await chronos.perform(report)).toMatchObject({ outcome: 'succeeded' });
  });
});
