// The testing kit after module.close(): the app's providers are shut down, so nothing may run or be
// enqueued any more. Every act of the kit (perform, drain, fireDue, advanceTo, a runtime schedule
// change) throws a ChronosTestingError that says the module was closed; an enqueue rejects with the
// engine client's ChronosStateError after its close; the reads (enqueued, history, outcomes, dead)
// still answer, for assertions written after the close.
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ChronosClient, ChronosStateError, Cron, SchedulerService, TaskHandler } from '../../lib/index.js';
import { ChronosTesting, ChronosTestingError, ChronosTestingModule } from '../../lib/nest/testing/index.js';

@Injectable()
class Billing {
  readonly ran: string[] = [];
  @Cron('0 3 * * *') nightly() {}
  @TaskHandler('charge') charge() {
    this.ran.push('charge');
  }
}

test("after module.close() every act of the kit throws a ChronosTestingError saying the module was closed, an enqueue the engine client's ChronosStateError; reads still answer", async () => {
  const module = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot()], providers: [Billing] }).compile();
  module.useLogger(false);
  await module.init();
  const chronos = module.get(ChronosTesting);
  const client = module.get(ChronosClient);
  const scheduler = module.get(SchedulerService);
  await client.enqueue('charge', { n: 1 });
  const [task] = chronos.enqueued('charge');
  await module.close();

  const closed = /the testing module was closed/;
  const acts: [string, () => Promise<unknown>][] = [
    ['perform', () => chronos.perform(task)],
    ['perform', () => chronos.perform('charge', { n: 2 })],
    ['drain', () => chronos.drain()],
    ['fireDue', () => chronos.fireDue(chronos.now, chronos.now + 86_400_000)],
    ['advanceTo', () => chronos.advanceTo(chronos.now + 86_400_000)],
    ['SchedulerService.addSchedule', () => scheduler.addSchedule({ name: 'late', spec: '@every 1m', type: 'charge' })],
    ['SchedulerService.triggerNow', () => scheduler.triggerNow('Billing.nightly')],
  ];
  for (const [name, act] of acts) {
    const err = await act().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ChronosTestingError);
    expect((err as Error).message).toMatch(new RegExp(`^${name.replace('.', '\\.')}: `));
    expect((err as Error).message).toMatch(closed);
  }
  // the engine client's error after its close (the real one rejects the same way)
  await expect(client.enqueue('charge', { n: 3 })).rejects.toThrow(ChronosStateError);
  await expect(client.enqueue('charge', { n: 3 })).rejects.toThrow(/^enqueue: this client was closed/);
  await expect(client.enqueueBulk([{ type: 'charge', payload: { n: 4 } }])).rejects.toThrow(/^enqueueBulk: this client was closed/);
  expect(module.get(Billing).ran).toEqual([]); // no handler ran after the close
  expect(chronos.enqueued().map((t) => t.id)).toEqual([task.id]); // the reads answer
  expect(chronos.history).toHaveLength(1);
});
