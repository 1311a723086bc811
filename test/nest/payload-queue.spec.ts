// A payload class bound to a queue by its @TaskHandler (`@TaskHandler(X, { queue })`): an enqueue of
// the class goes to that queue (an explicit `queue` option still wins), and a class bound to two
// queues is a boot error naming both — on real Redis, one Nest app per test.
import { Injectable } from '@nestjs/common';
import { ChronosClient, ChronosDiscoveryError, TaskHandler, type Task } from '../../lib/index.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { deferred } from '../helpers/wait.js';

let apps: ChronosTestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.map((a) => a.close()));
  apps = [];
});
async function boot(...args: Parameters<typeof createChronosTestApp>): Promise<ChronosTestApp> {
  const app = await createChronosTestApp(...args);
  apps.push(app);
  return app;
}

test('enqueue of a payload class goes to the queue its @TaskHandler declared; an explicit queue option wins', async () => {
  class Resize {
    static readonly type = 'image.resize';
    constructor(readonly px: number) {}
  }
  const ran = deferred<Task<Resize>>();
  @Injectable()
  class Handlers {
    @TaskHandler(Resize, { queue: 'slow' })
    resize(task: Task<Resize>) {
      ran.resolve(task);
    }
  }
  const app = await boot({ providers: [Handlers] });
  const client = app.get(ChronosClient);

  const a = await client.enqueue(new Resize(64));
  expect(a.queue).toBe('slow');
  const task = await ran.promise;
  expect([task.id, task.queue, task.payload.px]).toEqual([a.id, 'slow', 64]);
  expect((await client.enqueue(Resize, { px: 1 })).queue).toBe('slow');
  expect((await client.enqueueBulk([{ type: Resize, payload: new Resize(2) }]))[0].queue).toBe('slow');
  expect((await client.enqueue(new Resize(3), { queue: 'other' })).queue).toBe('other');
});

test('a payload class bound to two different queues is a boot error naming both queues and both handlers', async () => {
  class Resize {
    static readonly type = 'image.resize';
    constructor(readonly px: number) {}
  }
  @Injectable()
  class Handlers {
    @TaskHandler(Resize, { queue: 'slow' })
    one() {}
    @TaskHandler(Resize, { queue: 'fast', name: 'two' })
    two() {}
  }
  const err = await boot({ providers: [Handlers] }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ChronosDiscoveryError);
  expect((err as Error).message).toMatch(/"image\.resize".*"slow".*Handlers#one.*"fast".*Handlers#two/);
});
