// The kit follows the engine's rules: one scenario (retries with a handler backoff, a dead task,
// dedup by taskId, a fan-out, the triggers of a cron schedule in a zone across the spring-forward
// night and of an @every schedule) runs through the kit (manual mode: drain, fireDue) and through
// the real engine on a private redis-server (the kit's redis mode: the real module, backfill of the
// same window, waitForIdle); the task ids and each task's sequence of outcomes are the same.
import { Injectable, type ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ChronosClient, Cron, InspectorService, Interval, TaskHandler, type ChronosEvent, type Task } from '../../lib/index.js';
import { ChronosTesting, ChronosTestingError, ChronosTestingModule } from '../../lib/nest/testing/index.js';

class OrderPlaced {
  static readonly type = 'order.placed';
  constructor(readonly orderId: string) {}
}

const attempts = new Map<string, number>();

@Injectable()
class Handlers {
  @TaskHandler('flaky', { backoff: () => 150 })
  flaky(task: Task) {
    const n = (attempts.get(task.id) ?? 0) + 1;
    attempts.set(task.id, n);
    if (n <= 2) throw new Error(`attempt ${n} fails`);
  }
  @TaskHandler('doomed', { backoff: () => 100 })
  doomed() {
    throw new Error('always');
  }
  @TaskHandler(OrderPlaced)
  mail() {}
  @TaskHandler(OrderPlaced)
  audit() {}
  @Cron('30 2 * * *', { name: 'nightly', timeZone: 'Europe/Budapest' })
  nightly() {}
  @Interval('6h', { name: 'six-hourly' })
  sixHourly() {}
}

const FROM = Date.parse('2026-03-28T12:00:00Z');
const TO = Date.parse('2026-03-29T12:00:00Z');

async function enqueueScenario(client: ChronosClient): Promise<boolean[]> {
  return Promise.all([
    client.enqueue('flaky', { n: 1 }, { taskId: 'flaky-1', maxRetry: 5 }),
    client.enqueue('flaky', { n: 2 }, { taskId: 'flaky-1', maxRetry: 5 }), // deduplicated: flaky-1 is live
    client.enqueue('doomed', null, { taskId: 'doomed-1', maxRetry: 1 }),
    client.enqueue(new OrderPlaced('o-1'), { taskId: 'order-1' }),
  ]).then((rs) => rs.map((r) => r.deduplicated));
}

async function boot(mode: 'manual' | 'redis', providers: ModuleMetadata['providers']) {
  const module = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot({ mode })], providers }).compile();
  module.useLogger(false);
  await module.init();
  return module;
}

/** Task id → outcomes in order ('retry' | 'succeeded' | 'dead'). */
type Outcomes = Record<string, string[]>;

test('the same scenario gives the same task ids and outcomes in the kit and on the real engine', async () => {
  // through the kit
  attempts.clear();
  const kit = await boot('manual', [Handlers]);
  const testing = kit.get(ChronosTesting);
  const kitDedup = await enqueueScenario(kit.get(ChronosClient));
  const kitTriggers = (await testing.fireDue(FROM, TO)).map((t) => t.id);
  await testing.drain();
  const kitOutcomes: Outcomes = {};
  for (const o of testing.outcomes) (kitOutcomes[o.task.id] ??= []).push(o.outcome);
  await kit.close();

  // through the real engine, on a private redis-server
  attempts.clear();
  const real = await boot('redis', [Handlers]);
  const events: ChronosEvent[] = [];
  real.get(InspectorService).events$.subscribe((e) => events.push(e));
  const realDedup = await enqueueScenario(real.get(ChronosClient));
  const inspector = real.get(InspectorService);
  const realTriggers = [
    ...(await inspector.backfillSchedule('nightly', FROM, TO)).ids,
    ...(await inspector.backfillSchedule('six-hourly', FROM, TO)).ids,
  ];
  await real.get(ChronosTesting).waitForIdle();
  expect(() => real.get(ChronosTesting).drain()).toThrow(/drain\(\) is for modes 'manual' and 'inline'/);
  const realOutcomes: Outcomes = {};
  const OUTCOME: Partial<Record<ChronosEvent['type'], string>> = {
    'task.retried': 'retry',
    'task.succeeded': 'succeeded',
    'task.dead': 'dead',
  };
  for (const e of events) {
    const o = OUTCOME[e.type];
    if (o && 'taskId' in e && e.taskId) (realOutcomes[e.taskId] ??= []).push(o);
  }
  await real.close();

  expect(kitDedup).toEqual([false, true, false, false]);
  expect(realDedup).toEqual(kitDedup);
  expect(realTriggers.sort()).toEqual(kitTriggers.sort());
  expect(kitTriggers).toContain('nightly:1774746000'); // 02:30 does not exist that night: 03:00 CEST
  expect(kitOutcomes['flaky-1']).toEqual(['retry', 'retry', 'succeeded']);
  expect(kitOutcomes['doomed-1']).toEqual(['retry', 'dead']);
  expect(kitOutcomes['order-1#Handlers.mail']).toEqual(['succeeded']);
  expect(realOutcomes).toEqual(kitOutcomes);
});

test("mode 'redis' without redis-server fails when the module is declared, with a clear error (before Nest builds anything)", () => {
  const declare = () => ChronosTestingModule.forRoot({ mode: 'redis', redisServer: 'no-such-redis-server' });
  expect(declare).toThrow(ChronosTestingError);
  expect(declare).toThrow(/`no-such-redis-server` is not on the PATH: install Redis >= 6.2/);
});
