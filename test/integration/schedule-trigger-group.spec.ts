// An operator's trigger (Inspector.triggerSchedule, CLI `schedule trigger`) and a backfill enqueue the
// schedule's task with the schedule's `group`, as its fired triggers do: the handler sees task.group,
// and the task is one of its group (per-group limits, round-robin). A real worker on the test Redis.
import { ChronosServer, Inspector, Scheduler, type Task } from '../../lib/core/index.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { deferred } from '../helpers/wait.js';

let ns: string;
beforeAll(() => {
  ns = newNamespace('trigger-group');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

test("triggerSchedule and backfillSchedule enqueue the task in the schedule's group", async () => {
  const common = { connection: redisUrl(), namespace: ns };
  const scheduler = new Scheduler(common);
  const inspector = new Inspector(common);
  const server = new ChronosServer({ ...common, queues: { default: 1 } });
  const seen = new Map<string, string | undefined>();
  const both = deferred();
  server.handle('grouped', (task: Task) => {
    seen.set(task.id.includes(':manual:') ? 'manual' : 'backfill', task.group);
    if (seen.size === 2) both.resolve();
  });
  try {
    await scheduler.start();
    // yearly: it never fires during the test; the backfill below enqueues its 2026-01-01 trigger
    await scheduler.addSchedule({ name: 'tenant-report', spec: '0 0 1 1 *', type: 'grouped', group: 'tenant-a' });
    await server.start();
    await inspector.triggerSchedule('tenant-report');
    const from = Date.parse('2026-01-01T00:00:00Z');
    expect((await inspector.backfillSchedule('tenant-report', from, from)).ids).toEqual(['tenant-report:1767225600']);
    await both.promise;
    expect(Object.fromEntries(seen)).toEqual({ manual: 'tenant-a', backfill: 'tenant-a' });
  } finally {
    await server.shutdown();
    await scheduler.stop();
    await inspector.close();
  }
}, 30_000);
