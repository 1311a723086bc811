// Groups and limits in a NestJS app (issue 21): a payload class names its tasks' group by a static
// string or a function of the payload, an explicit `group` option wins, a schedule's triggers carry
// the group its decorator names, and the `queues` option applies fleet-wide limits at boot.
import { Injectable } from '@nestjs/common';
import { ChronosClient, ChronosConfigError, Interval, TaskHandler, WorkerService, type Task } from '../../lib/index.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { deferred, waitFor } from '../helpers/wait.js';

let apps: ChronosTestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.map((a) => a.close()));
  apps = [];
});

test('a payload class gives its tasks a group (static string or function of the payload); an explicit group wins', async () => {
  class Rebuild {
    static readonly type = 'report.rebuild';
    static readonly group = (p: Rebuild) => `tenant:${p.tenant}`;
    constructor(readonly tenant: string) {}
  }
  class Audit {
    static readonly group = 'audit';
    constructor(readonly n: number) {}
  }
  const seen: Task[] = [];
  @Injectable()
  class Handlers {
    @TaskHandler(Rebuild)
    rebuild(task: Task<Rebuild>) {
      seen.push(task);
    }
    @TaskHandler(Audit)
    audit(task: Task<Audit>) {
      seen.push(task);
    }
  }
  const app = await createChronosTestApp({ providers: [Handlers] });
  apps.push(app);
  const client = app.get(ChronosClient);
  await client.enqueue(new Rebuild('acme'));
  await client.enqueue(Rebuild, { tenant: 'globex' } as Rebuild);
  await client.enqueue(new Audit(1));
  await client.enqueue(new Audit(2), { group: 'special' });
  await client.enqueueBulk([{ type: Rebuild, payload: new Rebuild('initech') }]);
  await waitFor(() => seen.length === 5, 'the five tasks');
  expect(seen.map((t) => t.group).sort()).toEqual(['audit', 'special', 'tenant:acme', 'tenant:globex', 'tenant:initech']);
});

test("a schedule's triggers carry its group", async () => {
  const fired = deferred<Task>();
  @Injectable()
  class Jobs {
    @Interval(1000, { name: 'grouped.tick', group: 'ticks' })
    tick(task: Task) {
      fired.resolve(task);
    }
  }
  const app = await createChronosTestApp({ providers: [Jobs] });
  apps.push(app);
  const task = await fired.promise;
  expect(task.schedule).toBe('grouped.tick');
  expect(task.group).toBe('ticks');
});

test('the queues option applies fleet-wide limits at boot; a bad limit is a config error naming it', async () => {
  const app = await createChronosTestApp({
    options: {
      queues: { reports: { concurrency: 2, groupRate: { max: 5, duration: 1000 } }, default: 2, mail: { weight: 3 } },
    },
  });
  apps.push(app);
  expect(await app.get(ChronosClient).getQueueLimits('reports')).toEqual({ concurrency: 2, groupRate: { max: 5, duration: 1000 } });
  expect(await app.get(ChronosClient).getQueueLimits('mail')).toEqual({});
  expect(app.get(WorkerService).queues).toEqual({ reports: 1, default: 2, mail: 3 });
  await expect(
    createChronosTestApp({ options: { queues: { reports: { concurrency: 0, rate: { max: 1 } as never, burst: 1 } as never } } }),
  ).rejects.toThrow(ChronosConfigError);
  const err = await createChronosTestApp({ options: { queues: { reports: { concurrency: 0, burst: 1 } as never } } }).catch(
    (e: Error) => e,
  );
  expect(String(err)).toMatch(/queues\.reports\.concurrency: expected an integer >= 1 or null, got 0/);
  expect(String(err)).toMatch(/queues\.reports\.burst: not a queue limit \(known: weight, concurrency/);
});
