// Fan-out: several @TaskHandler methods of one type each get their own task with their own
// retries (only a failing listener retries); a repeated dispatch of the same parent (what a
// retried dispatcher does) creates no second child; a schedule can dispatch to a type.
import { Injectable } from '@nestjs/common';
import {
  ChronosClient,
  Cron,
  InspectorService,
  Interval,
  TaskHandler,
  WorkerService,
  type ChronosEvent,
  type Task,
} from '../../lib/index.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { waitFor } from '../helpers/wait.js';

let app: ChronosTestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

class OrderPlaced {
  static readonly type = 'order.placed';
  constructor(readonly orderId: string) {}
}

test('each listener gets its own task; only the failing one retries; a repeated dispatch creates no second child', async () => {
  const calls: { listener: string; task: Task<OrderPlaced> }[] = [];
  @Injectable()
  class Mailer {
    @TaskHandler(OrderPlaced, { backoff: () => 50 })
    confirm(task: Task<OrderPlaced>) {
      calls.push({ listener: 'mailer', task });
      if (task.retried === 0) throw new Error('SMTP is down');
    }
  }
  @Injectable()
  class Audit {
    @TaskHandler(OrderPlaced)
    record(task: Task<OrderPlaced>) {
      calls.push({ listener: 'audit', task });
    }
  }
  app = await createChronosTestApp({ providers: [Mailer, Audit] });
  const events: ChronosEvent[] = [];
  app.get(InspectorService).events$.subscribe((e) => events.push(e));
  expect(app.get(WorkerService).handledTypes.sort()).toEqual(['order.placed', 'order.placed#Audit.record', 'order.placed#Mailer.confirm']);
  const client = app.get(ChronosClient);
  const succeeded = (id: string) => events.filter((e) => e.type === 'task.succeeded' && e.taskId === id).length;

  await client.enqueue(new OrderPlaced('o-1'), { taskId: 'order-1' });
  await waitFor(() => succeeded('order-1#Mailer.confirm') === 1 && succeeded('order-1#Audit.record') === 1, 'both listeners done');

  const mailer = calls.filter((c) => c.listener === 'mailer');
  const audit = calls.filter((c) => c.listener === 'audit');
  expect(mailer.map((c) => c.task.retried)).toEqual([0, 1]); // only the failing listener retried
  expect(audit.map((c) => c.task.retried)).toEqual([0]);
  for (const c of calls) {
    expect(c.task.type).toBe('order.placed');
    expect(c.task.payload).toBeInstanceOf(OrderPlaced);
    expect(c.task.payload.orderId).toBe('o-1');
  }
  expect(mailer[0].task.id).toBe('order-1#Mailer.confirm');
  expect(audit[0].task.id).toBe('order-1#Audit.record');
  expect(succeeded('order-1')).toBe(1); // the dispatcher itself ran once
  expect(events.filter((e) => e.type === 'task.retried').map((e) => (e as { taskId: string }).taskId)).toEqual(['order-1#Mailer.confirm']);

  // The same parent id dispatched again (a retried dispatcher): both children are deduplicated.
  await client.enqueue(new OrderPlaced('o-1'), { taskId: 'order-1' });
  await waitFor(() => succeeded('order-1') === 2, 'the second dispatch');
  const childEnqueues = events.filter((e) => e.type === 'task.enqueued' && e.taskId.startsWith('order-1#')) as Extract<
    ChronosEvent,
    { type: 'task.enqueued' }
  >[];
  expect(childEnqueues.map((e) => [e.taskId, e.deduplicated]).sort()).toEqual([
    ['order-1#Audit.record', false],
    ['order-1#Audit.record', true],
    ['order-1#Mailer.confirm', false],
    ['order-1#Mailer.confirm', true],
  ]);
  const q = await app.get(InspectorService).queue('default');
  expect([q.pending, q.active, q.retry, q.scheduled, q.dead]).toEqual([0, 0, 0, 0, 0]);
  expect(calls).toHaveLength(3);
});

test('a schedule dispatches to a type: one trigger fans out to every listener, which sees the schedule and trigger', async () => {
  class SyncInventory {
    static readonly type = 'inventory.sync';
    constructor(readonly reason: string) {}
  }
  const got: { listener: string; task: Task<SyncInventory> }[] = [];
  let declarationCalled = false;
  @Injectable()
  class InventorySchedule {
    @Interval('1s', { name: 'inventory.every-second', dispatch: SyncInventory, payload: new SyncInventory('scheduled') })
    everySecond() {
      declarationCalled = true;
    }
    @Cron('*/15 * * * *', { dispatch: SyncInventory })
    quarterHourly() {
      declarationCalled = true;
    }
  }
  @Injectable()
  class Warehouse {
    @TaskHandler(SyncInventory)
    pull(task: Task<SyncInventory>) {
      got.push({ listener: 'warehouse', task });
    }
  }
  @Injectable()
  class Storefront {
    @TaskHandler(SyncInventory)
    refresh(task: Task<SyncInventory>) {
      got.push({ listener: 'storefront', task });
    }
  }
  app = await createChronosTestApp({ providers: [InventorySchedule, Warehouse, Storefront] });
  const schedules = await app.get(InspectorService).schedules(1);
  // by name in code-unit order (upper case first), as the paged list
  expect(schedules.map((s) => [s.name, s.type])).toEqual([
    ['InventorySchedule.quarterHourly', 'inventory.sync'],
    ['inventory.every-second', 'inventory.sync'],
  ]);
  await waitFor(() => got.length >= 2, 'the first trigger at both listeners');
  const [first, second] = got;
  expect(first.task.triggerAt).toBe(second.task.triggerAt);
  expect(new Set(got.slice(0, 2).map((g) => g.listener))).toEqual(new Set(['warehouse', 'storefront']));
  const trigger = `inventory.every-second:${first.task.triggerAt! / 1000}`;
  for (const g of got.slice(0, 2)) {
    expect(g.task.schedule).toBe('inventory.every-second');
    expect(g.task.type).toBe('inventory.sync');
    expect(g.task.payload).toBeInstanceOf(SyncInventory);
    expect(g.task.payload.reason).toBe('scheduled');
  }
  expect(
    got
      .slice(0, 2)
      .map((g) => g.task.id)
      .sort(),
  ).toEqual([`${trigger}#Storefront.refresh`, `${trigger}#Warehouse.pull`]);
  expect(declarationCalled).toBe(false);
});

test('a payload the enqueue accepted at the size limit fans out to every listener: the envelope is not held to maxPayloadBytes (trial 33)', async () => {
  // before: the children's payload (the parent's in an envelope) was checked against the limit again,
  // so a payload within ~100 bytes of it failed every dispatch, through all its retries, and no listener ran
  const got: string[] = [];
  @Injectable()
  class Listeners {
    @TaskHandler('report.ready')
    archive(task: Task<{ body: string }>) {
      got.push(`archive:${task.payload.body.length}`);
    }
    @TaskHandler('report.ready')
    notify(task: Task<{ body: string }>) {
      got.push(`notify:${task.payload.body.length}`);
    }
  }
  app = await createChronosTestApp({ providers: [Listeners], options: { maxPayloadBytes: 1000 } });
  const events: ChronosEvent[] = [];
  app.get(InspectorService).events$.subscribe((e) => events.push(e));
  const body = 'x'.repeat(1000 - '{"body":""}'.length); // exactly the limit
  const { id } = await app.get(ChronosClient).enqueue('report.ready', { body }, { maxRetry: 0 });
  await waitFor(() => events.some((e) => (e.type === 'task.succeeded' || e.type === 'task.dead') && e.taskId === id), 'the dispatch');
  expect(events.filter((e) => e.type === 'task.failed')).toEqual([]);
  await waitFor(() => got.length === 2, 'both listeners');
  expect(got.sort()).toEqual([`archive:${body.length}`, `notify:${body.length}`]);
  // the limit still holds for the app's own enqueues
  await expect(app.get(ChronosClient).enqueue('report.ready', { body: body + 'x' })).rejects.toThrow(/over the limit of 1000 bytes/);
});
