// The queue-integrity issue, fault 7: a NestJS app whose init() fails and that catches the error
// (no app.close()) exits by itself: whatever the failed start opened is closed, in both roles.
import { Redis } from 'ioredis';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { killAllChildren, startChild } from '../helpers/children.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { freePort } from '../helpers/sample.js';
import { within } from '../helpers/wait.js';

let ns: string;
beforeEach(() => {
  ns = newNamespace('boot');
});
afterEach(async () => {
  await killAllChildren();
  await deleteNamespace(ns);
});

test('fault 7: nothing answers at the Redis address: init() fails, the app catches it, the process exits by itself', async () => {
  const port = await freePort();
  const child = await startChild('failed-boot', 'unreachable', { REDIS_URL: `redis://127.0.0.1:${port}`, NS: ns });
  const outcome = await child.message((m) => m.event === 'boot-failed' || m.event === 'booted');
  expect(outcome.error).toMatch(/did not answer within 10000 ms/);
  const exit = await within(child.exited, 15_000, 'the process to exit by itself');
  expect(exit.code).toBe(0);
}, 45_000);

test('fault 7: the worker fails to start while the scheduler started: the scheduler and the client are closed too', async () => {
  const redis = new Redis(redisUrl());
  await redis.set(new QueueKeys(ns, 'default').stream, 'not a stream'); // XGROUP CREATE fails: WRONGTYPE
  redis.disconnect();
  const child = await startChild('failed-boot', 'wrongtype', { REDIS_URL: redisUrl(), NS: ns });
  const outcome = await child.message((m) => m.event === 'boot-failed' || m.event === 'booted');
  expect(outcome.error).toMatch(/WRONGTYPE/);
  const exit = await within(child.exited, 15_000, 'the process to exit by itself');
  expect(exit.code).toBe(0);
}, 45_000);

test.each([
  ['discovery', /Chronos found 1 problem in decorated methods:[\s\S]*hour field "25"/],
  ['imported-twice', /ChronosModule is imported 2 times/],
])(
  'a failed discovery (%s) in init(): the app catches it, the process exits by itself',
  async (broken, error) => {
    const child = await startChild('failed-boot', broken, { REDIS_URL: redisUrl(), NS: ns, BROKEN: broken });
    const outcome = await child.message((m) => m.event === 'boot-failed' || m.event === 'booted');
    expect(outcome.error).toMatch(error);
    const exit = await within(child.exited, 15_000, 'the process to exit by itself');
    expect(exit.code).toBe(0);
  },
  45_000,
);

test.each([
  ['user-constructor', /user provider failed in its constructor/],
  ['context-constructor', /user provider failed in its constructor/],
  ['user-init', /user provider failed in onModuleInit/],
])(
  'a user provider that throws (%s): the app catches it; Chronos connected nothing yet, so the process exits by itself',
  async (broken, error) => {
    const child = await startChild('failed-boot', broken, { REDIS_URL: redisUrl(), NS: ns, BROKEN: broken });
    const outcome = await child.message((m) => m.event === 'boot-failed' || m.event === 'booted');
    expect(outcome.error).toMatch(error);
    const exit = await within(child.exited, 15_000, 'the process to exit by itself');
    expect(exit.code).toBe(0);
  },
  45_000,
);

test('a second app with metrics in the registry of a running one: a ChronosConfigError naming the metric, and the process exits by itself', async () => {
  // the second app fails while Nest creates its providers (no lifecycle hook runs), after its client connected
  const child = await startChild('failed-boot', 'metrics-twice', { REDIS_URL: redisUrl(), NS: ns, BROKEN: 'metrics-twice' });
  const outcome = await child.message((m) => m.event === 'boot-failed' || m.event === 'booted');
  expect(outcome.name).toBe('ChronosConfigError');
  expect(outcome.error).toMatch(/metrics\.registry: .*"chronos_tasks_processed_total" .*already registered/);
  const exit = await within(child.exited, 15_000, 'the process to exit by itself');
  expect(exit.code).toBe(0);
}, 45_000);
