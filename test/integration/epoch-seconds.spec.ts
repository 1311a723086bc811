// An instant given in epoch *seconds* where epoch ms are asked for (a schedule's startAt / endAt, an
// enqueue's processAt, a backfill's range) is refused, naming the value, what it reads as in ms and
// the ms it meant; nothing is written. Before (trial 47): endAt: Math.floor(Date.now() / 1000) + 3600
// registered a schedule that had ended in January 1970 and never fired, a processAt so given ran the
// task at once, a backfill of the last hour in seconds enqueued nothing and said nothing.
import { InvalidOptionsError, InvalidScheduleError, Inspector, QueueClient, Scheduler } from '../../lib/core/index.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

let ns: string;
let inspector: Inspector;
let client: QueueClient;
let scheduler: Scheduler;
beforeAll(() => {
  ns = newNamespace('epoch-seconds');
  const common = { connection: redisUrl(), namespace: ns };
  inspector = new Inspector(common);
  client = new QueueClient(common);
  scheduler = new Scheduler({ ...common, logger: false });
});
afterAll(async () => {
  await Promise.all([inspector.close(), client.close(), scheduler.stop()]);
  await deleteNamespace(ns);
});

const seconds = Math.floor(Date.now() / 1000) + 3600;
const meant = `epoch seconds? in ms that is ${seconds * 1000}`;

test.each([
  ['endAt', { endAt: seconds }],
  ['startAt', { startAt: seconds }],
])('a schedule whose %s is epoch seconds is refused, naming it; nothing is registered', async (key, bound) => {
  const err = await inspector.addSchedule({ name: `by-seconds.${key}`, spec: '* * * * *', ...bound }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidScheduleError);
  expect((err as Error).message).toContain(`${key}: expected epoch ms of an instant after 1973-03-03, got ${seconds}`);
  expect((err as Error).message).toContain(meant);
  await expect(scheduler.upsertSchedules([{ name: 'bulk', spec: '@daily', ...bound }])).rejects.toThrow(meant);
  expect((await inspector.schedulePage({})).items).toEqual([]);
});

test('a Date made of epoch seconds is refused too, with the Date it meant', async () => {
  const err = await inspector.addSchedule({ name: 'by-date', spec: '@daily', endAt: new Date(seconds) }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidScheduleError);
  expect((err as Error).message).toContain(`new Date(seconds * 1000) is ${new Date(seconds * 1000).toISOString()}`);
});

test('an enqueue whose processAt is epoch seconds is refused, naming it; no task is written', async () => {
  const err = await client.enqueue('report.send', {}, { queue: 'q', processAt: seconds }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidOptionsError);
  expect((err as Error).message).toContain(`processAt: expected epoch ms of an instant after 1973-03-03, got ${seconds}`);
  expect((err as Error).message).toContain(meant);
  await expect(client.enqueue('report.send', {}, { queue: 'q', processAt: 0 })).rejects.toThrow('got 0, which in ms is 1970-01-01');
  await expect(client.enqueueBulk([{ type: 'report.send', options: { queue: 'q', processAt: seconds } }])).rejects.toThrow(meant);
  expect(await inspector.queues()).toEqual([]);
  // a real instant in the past still runs at once, as documented
  expect((await client.enqueue('report.send', {}, { queue: 'q', processAt: Date.now() - 60_000 })).state).toBe('pending');
});

test('a backfill whose range is epoch seconds is refused, naming each end; nothing is enqueued', async () => {
  await inspector.addSchedule({ name: 'minutely', spec: '* * * * *' });
  const now = Math.floor(Date.now() / 1000);
  const err = await inspector.backfillSchedule('minutely', now - 3600, now).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidOptionsError);
  expect((err as Error).message).toContain(`from: expected epoch ms of an instant after 1973-03-03, got ${now - 3600}`);
  expect((err as Error).message).toContain(`to: expected epoch ms of an instant after 1973-03-03, got ${now}`);
  expect((await inspector.scheduleHistory('minutely')).length).toBe(0);
  const real = await inspector.backfillSchedule('minutely', (now - 180) * 1000, now * 1000);
  expect(real.enqueued).toBeGreaterThan(0);
});
