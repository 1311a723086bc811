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

test('a payload with an own "__proto__" field (JSON from outside) still reaches its handler as an instance of its payload class (trial 33)', async () => {
  // JSON.parse makes "__proto__" an own field; before: rehydrate's Object.assign set it as the
  // instance's prototype, so the handler got an object that was not an Invoice and had none of its methods
  class Invoice {
    static readonly type = 'invoice.issue';
    constructor(readonly cents: number) {}
    euros(): number {
      return this.cents / 100;
    }
  }
  const ran = deferred<Task<Invoice>>();
  @Injectable()
  class Handlers {
    @TaskHandler(Invoice)
    issue(task: Task<Invoice>) {
      ran.resolve(task);
    }
  }
  const app = await boot({ providers: [Handlers] });
  const body = JSON.parse('{"cents": 1250, "__proto__": {"euros": "not a method"}}') as Record<string, unknown>;
  await app.get(ChronosClient).enqueue(Invoice, body as unknown as Invoice);
  const { payload } = await ran.promise;
  expect(payload).toBeInstanceOf(Invoice);
  expect(payload.euros()).toBe(12.5);
  expect(Object.getOwnPropertyDescriptor(payload, '__proto__')?.value).toEqual({ euros: 'not a method' }); // kept as the data it is
});
