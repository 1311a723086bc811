// Unit tests of the sample's email task: the controller enqueues it, EmailService handles it.
import { Test, type TestingModule } from '@nestjs/testing';
import { ChronosTesting, ChronosTestingModule } from '@chronos/nest/testing';
import { EmailService } from '../email/email.service.js';
import { SendEmail } from '../email/send-email.task.js';
import { EmailsController } from '../http/emails.controller.js';

let module: TestingModule;
let chronos: ChronosTesting;

beforeEach(async () => {
  module = await Test.createTestingModule({
    imports: [ChronosTestingModule.forRoot()],
    controllers: [EmailsController],
    providers: [EmailService],
  }).compile();
  module.useLogger(false);
  await module.init();
  chronos = module.get(ChronosTesting);
});
afterEach(() => module.close());

test('POST /emails enqueues a SendEmail, and EmailService sends it', async () => {
  const res = await module.get(EmailsController).send({ to: 'ada@example.com', subject: 'Welcome' });

  const task = chronos.expectEnqueued(SendEmail, { to: 'ada@example.com', subject: 'Welcome' });
  expect(res).toEqual({ id: task.id, queue: 'default', state: 'pending' });
  expect(await chronos.perform(task)).toMatchObject({ outcome: 'succeeded' });
  expect(chronos.enqueued()).toEqual([]);
});

test('a bad request enqueues nothing', async () => {
  await expect(module.get(EmailsController).send({ to: 42 })).rejects.toThrow('expected {"to": string, "subject": string}');
  chronos.expectNotEnqueued(SendEmail);
});
