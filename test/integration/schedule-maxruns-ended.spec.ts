// A schedule that reached its maxRuns has ended: a pause, a resume or a change that does not
// touch maxRuns puts it back in its shard's due index, and the leader must not report the triggers
// it would have had as skipped (trial 44: a resume reported 'Skipped 116 trigger(s) while paused'
// for a maxRuns 3 schedule that had ended minutes before; a payload change 'Skipped 31 missed
// trigger(s)'), nor try to fire them.
import { EventBus, type ChronosEvent } from '../../lib/core/runtime/events.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { ShardKeys, shardOf } from '../../lib/core/redis/keys.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { connect, deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

let ns: string;
const started: { stop(): Promise<void> }[] = [];
beforeEach(() => {
  ns = newNamespace('mrend');
});
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
  await deleteNamespace(ns);
});

/** A leader with its events and log lines, an Inspector and a plain client, all stopped after the test. */
async function fleet() {
  const events: ChronosEvent[] = [];
  const bus = new EventBus();
  bus.subscribe((e) => void events.push(e));
  const logger = recordingLogger();
  const scheduler = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, heartbeatInterval: 200, logger, events: bus });
  started.push(scheduler);
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns });
  started.push({ stop: () => inspector.close() });
  const redis = connect();
  started.push({ stop: async () => void (await redis.quit()) });
  await scheduler.start();
  /** Whether the schedule is in its shard's due index (a change marks it; the leader's batch takes an ended one out). */
  const due = async (name: string) => (await redis.zscore(new ShardKeys(ns, shardOf(name)).due, name)) !== null;
  return { events, logger, scheduler, inspector, due };
}

/** A name of the shard of `name`, other than it. */
function sameShard(name: string): string {
  for (let i = 0; ; i++) if (shardOf(`control.${i}`) === shardOf(name)) return `control.${i}`;
}

/** Resolves once Redis's clock is past `at` (epoch ms): the triggers before it came due. */
async function until(f: Awaited<ReturnType<typeof fleet>>, at: number, what: string): Promise<void> {
  await waitFor(async () => (await f.inspector.redis.time())[0] * 1000 > at, what);
}

test('a resume of a schedule that reached its maxRuns reports no trigger skipped while paused; it stays ended', async () => {
  const f = await fleet();
  // a schedule of the same shard, paused and resumed after it: once its pause is reported, the
  // leader's batches have looked at 'once' too (its mark came first)
  const control = sameShard('once');
  await f.scheduler.addSchedule({ name: 'once', spec: { every: 1000 }, maxRuns: 1, queue: 'mr' });
  await f.scheduler.addSchedule({ name: control, spec: { every: 1000 }, queue: 'mr' });
  await waitFor(() => f.events.some((e) => e.type === 'schedule.fired' && e.schedule === 'once'), 'its one run');
  await waitFor(async () => !(await f.due('once')), 'the leader to take the ended schedule out of the due index');
  await f.scheduler.pauseSchedule('once');
  await f.scheduler.pauseSchedule(control);
  const pausedAt = Date.now();
  await until(f, pausedAt + 3000, 'three triggers to come due while paused');
  await f.scheduler.resumeSchedule('once');
  await f.scheduler.resumeSchedule(control);
  await waitFor(
    () => f.events.some((e) => e.type === 'schedule.skipped' && e.schedule === control),
    'the pause report of the control schedule',
  );

  expect(f.events.filter((e) => e.type === 'schedule.skipped' && e.schedule === 'once')).toEqual([]);
  expect(f.logger.lines.filter((l) => l.message.includes('schedule=once ') && l.message.includes('Skipped'))).toEqual([]);
  expect((await f.inspector.scheduleHistory('once', 10)).map((r) => r.outcome)).toEqual(['enqueued']);
  expect(await f.inspector.schedule('once')).toMatchObject({ runsLeft: 0, ended: 'max-runs', next: [] });
  expect(f.events.filter((e) => e.type === 'schedule.fired' && e.schedule === 'once')).toHaveLength(1);
});

test('a change of an ended maxRuns schedule that keeps its maxRuns reports no missed trigger; raising maxRuns fires again', async () => {
  const f = await fleet();
  const def = { name: 'twice', spec: { every: 1000 }, maxRuns: 2, catchUpCap: 2, queue: 'mr', payload: { v: 1 } };
  await f.scheduler.addSchedule(def);
  await waitFor(() => f.events.filter((e) => e.type === 'schedule.fired' && e.schedule === 'twice').length === 2, 'its two runs');
  await waitFor(async () => !(await f.due('twice')), 'the leader to take the ended schedule out of the due index');
  const endedAt = Date.now();
  await until(f, endedAt + 4000, 'more triggers than catchUpCap to come due');
  expect(await f.scheduler.upsertSchedules([{ ...def, payload: { v: 2 } }])).toEqual({ added: 0, changed: 1, unchanged: 0 });
  expect(await f.due('twice')).toBe(true);
  await waitFor(async () => !(await f.due('twice')), 'the leader to look at it again');

  expect(f.events.filter((e) => e.type === 'schedule.skipped' && e.schedule === 'twice')).toEqual([]);
  expect(f.logger.lines.filter((l) => l.message.includes('Skipped'))).toEqual([]);
  expect(f.logger.lines.some((l) => l.message.includes('no more fire (schedule=twice maxRuns=2)'))).toBe(true);
  expect((await f.inspector.scheduleHistory('twice', 10)).map((r) => r.outcome)).toEqual(['enqueued', 'enqueued']);
  expect(await f.inspector.schedule('twice')).toMatchObject({ runsLeft: 0, ended: 'max-runs' });

  // a new maxRuns counts afresh (README): the schedule fires again
  await f.scheduler.upsertSchedules([{ ...def, payload: { v: 2 }, maxRuns: 3 }]);
  await waitFor(() => f.events.filter((e) => e.type === 'schedule.fired' && e.schedule === 'twice').length === 5, 'three more runs');
  expect(f.events.filter((e) => e.type === 'schedule.skipped' && e.schedule === 'twice')).toEqual([]);
});
