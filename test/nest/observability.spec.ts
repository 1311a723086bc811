// Observability: events$ (rxjs), InspectorService (leader, schedules, queues, servers) and the
// health indicator with @nestjs/terminus.
import { Injectable } from '@nestjs/common';
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { firstValueFrom, filter } from 'rxjs';
import {
  ChronosClient,
  ChronosHealthIndicator,
  InspectorService,
  Interval,
  SchedulerService,
  TaskHandler,
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

@Injectable()
class Work {
  @TaskHandler('work.do')
  async do(task: Task<{ fail?: boolean }>) {
    if (task.payload?.fail) throw new Error('nope');
  }
  @Interval('1s')
  beat() {}
}

test('events$ streams task, schedule and leadership events; the Inspector shows leader, schedules, queues and servers', async () => {
  const events: ChronosEvent[] = [];
  app = await createChronosTestApp({ providers: [Work], options: { instanceId: 'obs-1' }, init: false });
  const sub = app.get(InspectorService).events$.subscribe((e) => events.push(e));
  await app.module.init();
  const scheduler = app.get(SchedulerService);
  const fired = await firstValueFrom(app.get(InspectorService).events$.pipe(filter((e) => e.type === 'schedule.fired')));
  expect(fired).toMatchObject({ type: 'schedule.fired', schedule: 'Work.beat', queue: 'default' });

  const { id } = await app.get(ChronosClient).enqueue('work.do', {});
  const bad = await app.get(ChronosClient).enqueue('work.do', { fail: true }, { maxRetry: 0 });
  await waitFor(
    () =>
      events.some((e) => e.type === 'task.dead' && e.taskId === bad.id) &&
      events.some((e) => e.type === 'task.succeeded' && e.taskId === id),
    'both tasks to end',
  );
  // `task.enqueued` is emitted when the enqueue's reply arrives, which can be after this
  // instance's worker already started the task: only the worker's events are ordered
  const of = (taskId: string) => events.filter((e) => 'taskId' in e && e.taskId === taskId).map((e) => e.type);
  expect(of(id).filter((t) => t !== 'task.enqueued')).toEqual(['task.started', 'task.succeeded']);
  expect(of(bad.id).filter((t) => t !== 'task.enqueued')).toEqual(['task.started', 'task.failed', 'task.dead']);
  expect(of(id).filter((t) => t === 'task.enqueued')).toHaveLength(1);
  const all = [...Array(16).keys()]; // a fleet of one leads every shard
  expect(events[0]).toEqual({ type: 'leader.acquired', instanceId: 'obs-1', term: scheduler.term, shards: all });

  const inspector = app.get(InspectorService);
  await waitFor(async () => (await inspector.servers()).length === 1, 'the worker heartbeat');
  const o = await inspector.overview(2);
  expect(o.leader).toMatchObject({ instance: 'obs-1', term: scheduler.term });
  expect(o.leader!.since).toBeGreaterThan(Date.now() - 60_000);
  const beat = o.schedules.find((s) => s.name === 'Work.beat')!;
  expect(beat).toMatchObject({
    expression: '@every 1s',
    timeZone: 'UTC',
    paused: false,
    orphaned: false,
    declaredBy: [expect.objectContaining({ instance: 'obs-1' })],
  });
  expect(beat.lastFiredAt! % 1000).toBe(0);
  expect(beat.next).toHaveLength(2);
  expect(o.queues.find((q) => q.name === 'default')).toMatchObject({ dead: 1 });
  expect(o.servers.map((s) => [s.id, s.queues])).toEqual([['obs-1', { default: 1 }]]);
  expect((await inspector.tasks('default', 'dead')).map((t) => t.id)).toEqual([bad.id]);

  await app.close();
  expect(events.at(-1)).toEqual({ type: 'leader.lost', instanceId: 'obs-1', term: scheduler.term, reason: 'resigned', shards: all });
  sub.unsubscribe();
});

test('health indicator: up with terminus when Redis answers and both roles run; down before they start', async () => {
  app = await createChronosTestApp({ providers: [Work], imports: [TerminusModule], init: false });
  const health = app.get(HealthCheckService);
  const indicator = app.get(ChronosHealthIndicator);
  // not bootstrapped yet: the roles are enabled but not running
  const before = await indicator.isHealthy();
  expect(before.chronos).toMatchObject({
    status: 'down',
    redis: 'up',
    worker: { enabled: true, running: false },
    scheduler: { enabled: true, running: false },
  });
  await expect(health.check([() => indicator.isHealthy('chronos')])).rejects.toMatchObject({ response: { status: 'error' } });

  await app.module.init();
  await waitFor(() => app!.get(SchedulerService).isLeader, 'leadership');
  const result = await health.check([() => indicator.isHealthy('chronos')]);
  expect(result.status).toBe('ok');
  expect(result.details.chronos).toMatchObject({
    status: 'up',
    redis: 'up',
    worker: { enabled: true, running: true },
    scheduler: { enabled: true, running: true, leader: true },
  });
});
