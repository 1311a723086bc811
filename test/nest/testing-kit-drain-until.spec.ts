// drain(queue, { until }): runs only the tasks due by an instant, so a test can say what has run by
// a time ("the charge runs 5 minutes after checkout, not before") — what a test of delayed work and
// backoffs needs besides drain()'s run-everything (Sidekiq's drain, BullMQ's worker run to the end).
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { ChronosClient, TaskHandler, type Task } from '@chronos/nest';
import { ChronosTesting, ChronosTestingError, ChronosTestingModule } from '@chronos/nest/testing';

const T0 = Date.parse('2026-06-01T00:00:00Z');

@Injectable()
class Billing {
  readonly ran: string[] = [];
  @TaskHandler('charge', { backoff: () => 60_000 })
  charge(task: Task<{ order: string; failOnce?: boolean }>) {
    this.ran.push(`${task.payload.order}#${task.retried}`);
    if (task.payload.failOnce && task.retried === 0) throw new Error('gateway 503');
  }
}

let module: TestingModule;
let chronos: ChronosTesting;
let client: ChronosClient;
beforeEach(async () => {
  module = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot({ now: T0 })], providers: [Billing] }).compile();
  await module.init();
  chronos = module.get(ChronosTesting);
  client = module.get(ChronosClient);
});
afterEach(() => module.close());

test('drain until an instant runs the tasks due by then, retries due by then included, and leaves the rest', async () => {
  await client.enqueue('charge', { order: 'now', failOnce: true });
  await client.enqueue('charge', { order: 'in-5m' }, { delay: 5 * 60_000 });
  const r = await chronos.drain(undefined, { until: T0 + 2 * 60_000 });
  expect(r).toMatchObject({ succeeded: 1, retried: 1, dead: 0 });
  expect(module.get(Billing).ran).toEqual(['now#0', 'now#1']); // the retry came due within the window
  expect(chronos.enqueued().map((t) => t.payload)).toEqual([{ order: 'in-5m' }]);
  expect(chronos.now).toBeLessThanOrEqual(T0 + 2 * 60_000);

  await chronos.advanceTo(T0 + 5 * 60_000);
  expect(await chronos.drain(undefined, { until: chronos.now })).toMatchObject({ succeeded: 1 });
  expect(chronos.enqueued()).toEqual([]);
});

test('drain until now runs nothing that is due later', async () => {
  await client.enqueue('charge', { order: 'later' }, { delay: 1000 });
  expect(await chronos.drain(undefined, { until: chronos.now })).toMatchObject({ succeeded: 0, retried: 0, dead: 0 });
  expect(chronos.now).toBe(T0);
  expect(chronos.enqueued()).toHaveLength(1);
});

test('drain refuses an until that is not an instant, naming it', async () => {
  await expect(chronos.drain(undefined, { until: 'soon' })).rejects.toThrow(ChronosTestingError);
  await expect(chronos.drain(undefined, { until: 'soon' })).rejects.toThrow(/until: .*got soon/);
});
