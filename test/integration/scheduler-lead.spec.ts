// A trigger enqueued ahead of its instant (fire.lua's lead, definition.ts fireLeadMs) beyond the hold window:
// it waits in the scheduled set, due at its instant, and a pause, removal or change of its schedule before the
// instant takes it back (fence-schedules.lua), on a real Redis (issue 25: "every task enqueued by the instant").
import { Redis } from 'ioredis';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { EventBus, type ChronosEvent } from '../../lib/core/runtime/events.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueKeys, ShardKeys, shardOf } from '../../lib/core/redis/keys.js';
import { FIRE_LEAD } from '../../lib/core/redis/protocol.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

type Fired = Extract<ChronosEvent, { type: 'schedule.fired' }>;

/** Every 10 s: its lead is min(FIRE_LEAD.maxMs, 5 s) = 5 s, beyond the 1 s hold window. */
const PERIOD_MS = 10_000;
let ns: string;
const started: { stop(): Promise<void> }[] = [];
const logger = recordingLogger();
beforeEach(() => {
  ns = newNamespace('lead');
});
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
  await deleteNamespace(ns);
});

function setup(): { events: EventBus; fired: Fired[]; s: Scheduler; inspector: Inspector; r: Redis; k: QueueKeys } {
  const events = new EventBus();
  const fired: Fired[] = [];
  events.subscribe((e) => e.type === 'schedule.fired' && fired.push(e));
  const s = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, heartbeatInterval: 200, logger, events });
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns });
  const r = new Redis(redisUrl());
  started.push(s, { stop: () => inspector.close() }, { stop: async () => void (await r.quit()) });
  return { events, fired, s, inspector, r, k: new QueueKeys(ns, 'default') };
}

/** A worker that records the runs of task type `lead`. */
function worker(): { id: string; triggerAt?: number; payload: unknown; startedAt: number }[] {
  const runs: { id: string; triggerAt?: number; payload: unknown; startedAt: number }[] = [];
  const w = new ChronosServer({ connection: redisUrl(), namespace: ns, logger });
  started.push({ stop: () => w.shutdown() });
  w.handle('lead', (t) => void runs.push({ id: t.id, triggerAt: t.triggerAt, payload: t.payload, startedAt: Date.now() }));
  void w.start();
  return runs;
}

/** Waits for a fire of `ahead` at least 2 s before its instant (the first may come within the lead of a fresh start). */
async function aheadFire(fired: Fired[]): Promise<Fired> {
  const found = () => fired.find((f) => f.schedule === 'ahead' && f.triggerAt - Date.now() > 2000);
  return waitFor(found, 'a fire more than 2 s ahead of its instant', 25_000);
}

test('a trigger further ahead than the hold window waits in the scheduled set, due at its instant, and starts at it once', async () => {
  const { fired, s, inspector, r, k } = setup();
  await s.start();
  await s.addSchedule({ name: 'ahead', spec: { every: PERIOD_MS }, type: 'lead', payload: { v: 1 } });
  const f = await aheadFire(fired);
  expect(f.triggerAt - Date.now()).toBeLessThanOrEqual(FIRE_LEAD.maxMs);
  // fired, not next: the Inspector's next runs start after it (trial 5: next[0] was the trigger just enqueued)
  const info = await inspector.schedule('ahead');
  expect(info.lastFiredAt).toBe(f.triggerAt);
  expect(info.next.slice(0, 2)).toEqual([f.triggerAt + PERIOD_MS, f.triggerAt + 2 * PERIOD_MS]);
  expect(Number(await r.zscore(k.scheduled, f.taskId))).toBe(f.triggerAt); // not in the stream: due at the instant
  const entries = await r.xrange(k.stream, '-', '+');
  expect(entries.filter(([, fields]) => fields.includes(f.taskId))).toEqual([]);
  const runs = worker();
  await waitFor(() => runs.find((x) => x.id === f.taskId), 'its run', 15_000);
  const run = runs.find((x) => x.id === f.taskId)!;
  expect(run.startedAt).toBeGreaterThanOrEqual(f.triggerAt); // never early (one machine: one clock)
  expect(run.triggerAt).toBe(f.triggerAt);
  expect(runs.filter((x) => x.id === f.taskId)).toHaveLength(1);
}, 45_000);

test('a pause before the instant retracts the task enqueued ahead; a resume before it enqueues the trigger again, which runs once', async () => {
  const { fired, s, inspector, r, k } = setup();
  await s.start();
  await s.addSchedule({ name: 'ahead', spec: { every: PERIOD_MS }, type: 'lead', payload: { v: 1 } });
  const f = await aheadFire(fired);
  await inspector.pauseSchedule('ahead', { actor: 'ops' });
  // taken back: task, dedup key and the stored lastFired (back to the pause, before the instant), with a history record
  expect(await r.zscore(k.scheduled, f.taskId)).toBeNull();
  expect(await r.hget(k.tasks, f.taskId)).toBeNull();
  expect(await r.exists(k.dedup(f.taskId))).toBe(0);
  expect(Number(await r.hget(k.lastFired, 'ahead'))).toBeLessThan(f.triggerAt);
  const [latest, taken] = await inspector.scheduleHistory('ahead', 2);
  expect(latest).toMatchObject({ outcome: 'retracted', triggerAt: f.triggerAt, taskId: f.taskId, by: 'ops' });
  // the fire it took back names its task as retracted, never run (trial 9: "done")
  expect(taken).toMatchObject({ outcome: 'enqueued', taskId: f.taskId, task: 'retracted' });

  const count = fired.length;
  await inspector.resumeSchedule('ahead');
  // resumed before the instant: the leader enqueues the same trigger again, under the new generation
  const again = await waitFor(() => fired.slice(count).find((x) => x.taskId === f.taskId), 'the trigger enqueued again', 5000);
  expect(again.triggerAt).toBe(f.triggerAt);
  const runs = worker();
  await waitFor(() => runs.find((x) => x.id === f.taskId), 'its run', 15_000);
  expect(runs.filter((x) => x.id === f.taskId)).toHaveLength(1);
  expect(runs.find((x) => x.id === f.taskId)!.startedAt).toBeGreaterThanOrEqual(f.triggerAt);
  // the history keeps all three records; the retracted one names no task state, the fire under the new state does
  const history = (await inspector.scheduleHistory('ahead', 10)).filter((h) => h.triggerAt === f.triggerAt);
  expect(history.map((h) => h.outcome)).toEqual(['enqueued', 'retracted', 'enqueued']);
  expect(history[1].task).toBeUndefined();
  expect([history[0].task, history[2].task]).toEqual([expect.not.stringMatching(/^retracted$/), 'retracted']);
  // the activity counts that trigger once, as the fire that ran
  const [activity] = await inspector.scheduleActivity([await inspector.schedule('ahead')]);
  expect(activity.fires.filter((x) => x.triggerAt === f.triggerAt).map((x) => [x.outcome, x.mark])).toEqual([['enqueued', 'on-time']]);
}, 45_000);

test('a change before the instant: the trigger runs under the new definition, once; a pause that stays: it does not run', async () => {
  const { fired, s, inspector, r, k } = setup();
  await s.start();
  await s.addSchedule({ name: 'ahead', spec: { every: PERIOD_MS }, type: 'lead', payload: { v: 1 } });
  await s.addSchedule({ name: 'stays-paused', spec: { every: PERIOD_MS }, type: 'lead', payload: { v: 'p' } });
  const f = await aheadFire(fired);
  const p = await waitFor(() => fired.find((x) => x.schedule === 'stays-paused' && x.triggerAt === f.triggerAt), 'the other one fired');
  const count = fired.length;
  await s.addSchedule({ name: 'ahead', spec: { every: PERIOD_MS }, type: 'lead', payload: { v: 2 } });
  await inspector.pauseSchedule('stays-paused');
  expect(await r.zscore(k.scheduled, p.taskId)).toBeNull();
  await waitFor(() => fired.slice(count).find((x) => x.taskId === f.taskId), 'the changed trigger enqueued again', 5000);
  const runs = worker();
  await waitFor(() => runs.find((x) => x.id === f.taskId), 'its run', 15_000);
  expect(runs.filter((x) => x.id === f.taskId).map((x) => x.payload)).toEqual([{ v: 2 }]);
  // the instant has passed and the worker ran what was due: the paused schedule's task is nowhere
  expect(runs.filter((x) => x.id === p.taskId)).toEqual([]);
  expect(await inspector.findTask(p.taskId)).toBeUndefined();
}, 45_000);

test('a trigger refused ahead of its instant as exhausted fires when maxRuns is raised before the instant, or the schedule removed and added again (trial 6)', async () => {
  const { fired, s, r } = setup();
  await s.start();
  await s.addSchedules([
    { name: 'raised', spec: { every: PERIOD_MS }, type: 'lead', maxRuns: 1 },
    { name: 're-added', spec: { every: PERIOD_MS }, type: 'lead', maxRuns: 1 },
  ]);
  await waitFor(() => ['raised', 're-added'].every((n) => fired.some((f) => f.schedule === n)), 'their one run each', 15_000);
  const first = fired.find((f) => f.schedule === 'raised')!.triggerAt;
  // the leader looks at the next instant ahead of it and finds the count reached: it takes the schedule
  // out of the due index (before trial 44 it planned the instant, fire.lua refused it as exhausted and
  // moved lastFired past it; fence-schedules.lua moves it back at a change, script-commands.spec)
  const next = first + PERIOD_MS;
  const decided = async (name: string) => (await r.zscore(new ShardKeys(ns, shardOf(name)).due, name)) === null && next - Date.now() > 2000;
  await waitFor(async () => (await decided('raised')) && (await decided('re-added')), 'the count seen ahead of the instant', 15_000);
  expect(fired.filter((f) => f.triggerAt === next)).toEqual([]);
  await s.upsertSchedules([{ name: 'raised', spec: { every: PERIOD_MS }, type: 'lead', maxRuns: 3 }]);
  await s.removeSchedule('re-added');
  await s.addSchedule({ name: 're-added', spec: { every: PERIOD_MS }, type: 'lead', maxRuns: 1 });
  // before the fix both skipped that instant: lastFired stayed past it
  const at = (name: string) => fired.find((f) => f.schedule === name && f.triggerAt === next);
  await waitFor(() => at('raised') && at('re-added'), 'the instant fired under the new definitions', 10_000);
}, 45_000);
