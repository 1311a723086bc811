// After the part of Chronos that opened a connection closed it, every object using that connection
// refuses its calls the same way: a ChronosStateError naming the call, before anything else is looked
// at (the arguments included). Three ways it did not, found while unifying the three "closed"
// checks into one (lib/core/redis/owner-close.ts):
// - a QueueClient on a connection an Inspector (or a server) opened and closed went on to the closed
//   socket and came back with a RedisUnavailableError blaming Redis, where an Inspector on a
//   connection a QueueClient closed named its call;
// - ChronosServer.pause/resume after shutdown() met ioredis's bare "Connection is closed.", where its
//   start() after shutdown() is a ChronosStateError;
// - ChronosClient (the Nest client) checked its arguments first: a bad call after app.close() was an
//   InvalidOptionsError, where QueueClient and the testing kit's client refuse it as closed.
// And a fourth, in the Scheduler's runtime API: on a connection another part (an Inspector) opened and
// closed, addSchedule met ioredis's bare "Connection is closed." (its own check knew only its own stop()).
import { ChronosServer, ChronosStateError, Inspector, QueueClient, Scheduler } from '../../lib/core/index.js';
import { ChronosClient } from '../../lib/index.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

const namespace = newNamespace('closed-refusals');
afterAll(() => deleteNamespace(namespace));

async function rejection(call: () => Promise<unknown>): Promise<unknown> {
  return call().then(
    () => undefined,
    (e: unknown) => e,
  );
}

test("a QueueClient on a connection its owner (an Inspector) closed names its call, as an Inspector on a client's closed connection does", async () => {
  const inspector = new Inspector({ connection: redisUrl(), namespace });
  const client = new QueueClient({ connection: inspector.redis, namespace });
  await client.enqueue('report.build', { day: 1 }); // works while open
  await inspector.close();
  for (const [name, call] of [
    ['enqueue', () => client.enqueue('report.build', { day: 2 })],
    ['enqueueBulk', () => client.enqueueBulk([{ type: 'report.build', payload: { day: 3 } }])],
    ['getQueueLimits', () => client.getQueueLimits('default')],
  ] as const) {
    const err = await rejection(call);
    expect([name, err]).toEqual([name, expect.any(ChronosStateError)]);
    expect([name, (err as Error).message]).toEqual([
      name,
      expect.stringMatching(new RegExp(`^${name}: this client's connection was closed by its owner`)),
    ]);
  }

  const owner = new QueueClient({ connection: redisUrl(), namespace });
  const reader = new Inspector({ connection: owner.redis, namespace });
  await owner.close();
  expect(await rejection(() => reader.queues())).toBeInstanceOf(ChronosStateError);
});

test('ChronosServer.pause and resume after shutdown() reject with a ChronosStateError naming the call, as start() does', async () => {
  const server = new ChronosServer({ connection: redisUrl(), namespace, queues: { default: 1 } });
  await server.start();
  await server.shutdown();
  expect(await rejection(() => server.start())).toBeInstanceOf(ChronosStateError);
  for (const [name, call] of [
    ['pause', () => server.pause('default')],
    ['resume', () => server.resume('default')],
  ] as const) {
    const err = await rejection(call);
    expect([name, err]).toEqual([name, expect.any(ChronosStateError)]);
    expect([name, (err as Error).message]).toEqual([name, expect.stringMatching(new RegExp(`^${name}: this server was shut down`))]);
  }
});

test('ChronosClient after its close refuses a call as closed before looking at its arguments, as QueueClient does', async () => {
  const client = new ChronosClient({ connection: redisUrl(), namespace });
  await client.close();
  const bad: [string, () => Promise<unknown>][] = [
    ['enqueue', () => client.enqueue({ not: 'a payload class' })],
    ['enqueueBulk', () => client.enqueueBulk('not a list' as never)],
  ];
  for (const [name, call] of bad) {
    const err = await rejection(call);
    expect([name, err]).toEqual([name, expect.any(ChronosStateError)]);
    expect([name, (err as Error).message]).toEqual([
      name,
      expect.stringMatching(new RegExp(`^${name}: this client was closed \\(close\\(\\)`)),
    ]);
  }
  const core = new QueueClient({ connection: redisUrl(), namespace });
  await core.close();
  expect(await rejection(() => core.enqueueBulk('not a list' as never))).toBeInstanceOf(ChronosStateError);
});

test("a Scheduler's runtime API on a connection its owner (an Inspector) closed names its call, before its arguments; after its own stop() too", async () => {
  const inspector = new Inspector({ connection: redisUrl(), namespace });
  const shared = new Scheduler({ connection: inspector.redis, namespace, eligible: false });
  await shared.addSchedule({ name: 'closed-refusals.a', spec: '@every 1h', type: 'report.build' }); // works while open
  await inspector.close();
  for (const [name, call] of [
    ['addSchedule', () => shared.addSchedule({ name: 'closed-refusals.b', spec: '@every 1h', type: 'report.build' })],
    ['upsertSchedules', () => shared.upsertSchedules([{ name: 'bad name', spec: 'nope', type: '' }])],
    ['removeSchedule', () => shared.removeSchedule('closed-refusals.a')],
    ['pauseSchedule', () => shared.pauseSchedule('closed-refusals.a')],
    ['triggerNow', () => shared.triggerNow('closed-refusals.a')],
  ] as const) {
    const err = await rejection(call);
    expect([name, err]).toEqual([name, expect.any(ChronosStateError)]);
    expect([name, (err as Error).message]).toEqual([
      name,
      expect.stringMatching(new RegExp(`^${name}: this scheduler's connection was closed by its owner`)),
    ]);
  }
  const own = new Scheduler({ connection: redisUrl(), namespace, eligible: false });
  await own.start();
  await own.stop();
  const err = await rejection(() => own.upsertSchedules([{ name: 'bad name', spec: 'nope', type: '' }]));
  expect(err).toBeInstanceOf(ChronosStateError);
  expect((err as Error).message).toMatch(/^upsertSchedules: this scheduler was stopped \(stop\(\); in a Nest app, at app.close\(\)\)/);
});
