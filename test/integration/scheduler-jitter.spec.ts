// Schedules with jitter, startAt/endAt and maxRuns, on a real Redis (issue 25 item 3).
import { Redis } from 'ioredis';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { EventBus, type ChronosEvent } from '../../lib/core/runtime/events.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueKeys, ShardKeys, shardOf } from '../../lib/core/redis/keys.js';
import { Scheduler, type SchedulerOptions } from '../../lib/core/scheduler/scheduler.js';
import { jitterShiftMs } from '../../lib/core/scheduler/schedule-bounds.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

type Fired = Extract<ChronosEvent, { type: 'schedule.fired' }>;

let ns: string;
const started: { stop(): Promise<void> }[] = [];
const logger = recordingLogger();
beforeEach(() => {
  ns = newNamespace('jitter');
});
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
  await deleteNamespace(ns);
});

function scheduler(options: SchedulerOptions = {}): Scheduler {
  const s = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, heartbeatInterval: 200, logger, ...options });
  started.push(s);
  return s;
}

/** A plain client, to read the keys. */
function redis(): Redis {
  const r = new Redis(redisUrl());
  started.push({ stop: async () => void (await r.quit()) });
  return r;
}

function inspector(): Inspector {
  const i = new Inspector({ connection: redisUrl(), namespace: ns });
  started.push({ stop: () => i.close() });
  return i;
}

/** The schedule.fired events of a bus, as they come. */
function firesOf(events: EventBus): Fired[] {
  const out: Fired[] = [];
  events.subscribe((e) => e.type === 'schedule.fired' && out.push(e));
  return out;
}

test('jitter: a trigger keeps its nominal dedup key and triggerAt; its task waits until nominal + shift and never starts before', async () => {
  const events = new EventBus();
  const fired = firesOf(events);
  const s = scheduler({ events });
  s.register({ name: 'spread', spec: { every: 1000 }, jitter: 900, type: 'spread' });
  await s.start();
  // no worker yet: each trigger's task waits in the scheduled set, due at its shifted instant
  await waitFor(() => fired.length >= 3, 'three fires');
  const k = new QueueKeys(ns, 'default');
  const first = fired.slice(0, 3);
  let delayed = 0;
  const r = redis();
  for (const f of first) {
    expect(f.taskId).toBe(`spread:${f.triggerAt / 1000}`); // the nominal dedup key
    const shift = jitterShiftMs('spread', f.triggerAt, 900); // computed apart from the leader: the same
    const score = await r.zscore(k.scheduled, f.taskId);
    if (score !== null) {
      expect(Number(score)).toBe(f.triggerAt + shift);
      delayed++;
    } else {
      expect(shift).toBe(0); // only an unshifted trigger goes straight to the stream
    }
  }
  expect(delayed).toBeGreaterThan(0);
  expect(await inspector().schedule('spread')).toMatchObject({ jitterMs: 900 });

  const runs: { id: string; triggerAt?: number; startedAt: number }[] = [];
  const w = new ChronosServer({ connection: redisUrl(), namespace: ns, logger });
  started.push({ stop: () => w.shutdown() });
  w.handle('spread', (t) => void runs.push({ id: t.id, triggerAt: t.triggerAt, startedAt: Date.now() }));
  await w.start();
  await waitFor(() => first.every((f) => runs.some((r) => r.id === f.taskId)), 'the first three trigger tasks to run');
  for (const r of runs) {
    expect(r.id).toBe(`spread:${r.triggerAt! / 1000}`); // the task's trigger instant is the nominal one
    expect(r.startedAt).toBeGreaterThanOrEqual(r.triggerAt! + jitterShiftMs('spread', r.triggerAt!, 900));
  }
  expect(new Set(runs.map((r) => r.id)).size).toBe(runs.length); // each trigger once
});

test('jitter under overlap skip: the task waiting for its shifted instant is live, so the next trigger is skipped; it still starts, at or after that instant', async () => {
  const events = new EventBus();
  const seen: ChronosEvent[] = [];
  events.subscribe((e) => seen.push(e));
  const s = scheduler({ events });
  s.register({ name: 'slow', spec: { every: 1000 }, jitter: 999, overlap: 'skip', type: 'slow', queue: 'skipq' });
  await s.start();
  const firedOf = () => seen.filter((e): e is Fired => e.type === 'schedule.fired' && e.schedule === 'slow');
  const skipped = () => seen.filter((e) => e.type === 'schedule.skipped' && e.schedule === 'slow' && e.reason === 'overlap');
  await waitFor(() => skipped().length >= 1, 'a trigger skipped while the first task waits (no worker yet)');
  const first = firedOf()[0];
  const shift = jitterShiftMs('slow', first.triggerAt, 999);
  const r = redis();
  const k = new QueueKeys(ns, 'skipq');
  expect(await r.get(k.overlap('slow'))).toBe(first.taskId); // the waiting task holds the marker
  const runs: { id: string; triggerAt: number; startedAt: number }[] = [];
  const w = new ChronosServer({ connection: redisUrl(), namespace: ns, logger, queues: ['skipq'] });
  started.push({ stop: () => w.shutdown() });
  w.handle('slow', (t) => void runs.push({ id: t.id, triggerAt: t.triggerAt!, startedAt: Date.now() }));
  await w.start();
  await waitFor(() => runs.length >= 2, 'the first task and a later one to run');
  expect(runs[0].id).toBe(first.taskId);
  expect(runs[0].startedAt).toBeGreaterThanOrEqual(first.triggerAt + shift);
  for (const run of runs) expect(run.startedAt).toBeGreaterThanOrEqual(run.triggerAt + jitterShiftMs('slow', run.triggerAt, 999));
});

test('startAt / endAt: triggers fall in [startAt, endAt); the ended schedule stays registered and the Inspector shows it ended', async () => {
  const events = new EventBus();
  const fired = firesOf(events);
  const s = scheduler({ events });
  const startAt = Math.ceil(Date.now() / 1000) * 1000 + 2000;
  const endAt = startAt + 3000;
  s.register({ name: 'window', spec: { every: 1000 }, startAt: new Date(startAt), endAt, queue: 'w' });
  s.register({ name: 'tock', spec: { every: 1000 }, queue: 'clock' }); // a clock: its fires count trigger instants
  await s.start();
  const insp = inspector();
  expect(await insp.schedule('window')).toMatchObject({ startAt, endAt });
  expect((await insp.schedule('window')).ended).toBeUndefined();
  // tock's trigger endAt + 1 s is fired (≤ 0.5 s ahead) after window's endAt would have been
  await waitFor(() => fired.some((f) => f.schedule === 'tock' && f.triggerAt >= endAt + 1000), {
    what: 'tock past endAt',
    timeoutMs: 15_000,
  });
  const window = fired.filter((f) => f.schedule === 'window').map((f) => f.triggerAt);
  expect(window).toEqual([startAt, startAt + 1000, startAt + 2000]);
  const info = await insp.schedule('window');
  expect(info.ended).toBe('end-at');
  expect(info.next).toEqual([]);
  expect((await insp.schedules()).map((i) => i.name)).toContain('window');
});

test('maxRuns: exactly N tasks fleet-wide across a leader hand-over; the Inspector shows runsLeft 0; removal deletes the counter', async () => {
  const eventsA = new EventBus();
  const eventsB = new EventBus();
  const firedA = firesOf(eventsA);
  const firedB = firesOf(eventsB);
  const a = scheduler({ events: eventsA });
  const b = scheduler({ events: eventsB });
  for (const s of [a, b]) s.register({ name: 'tock', spec: { every: 1000 }, queue: 'clock' });
  await a.start();
  await waitFor(() => a.isLeader, 'a to lead');
  await b.start();
  await a.addSchedule({ name: 'limited', spec: { every: 1000 }, maxRuns: 4, queue: 'lim' });
  const limited = () => [...firedA, ...firedB].filter((f) => f.schedule === 'limited');
  await waitFor(() => limited().length >= 1, 'the first fire of limited');
  await a.stop(); // the hand-over, in the middle of the runs
  await waitFor(() => b.isLeader, 'b to lead');
  await waitFor(() => limited().length >= 4, { what: 'four fires of limited', timeoutMs: 15_000 });
  const last = Math.max(...limited().map((f) => f.triggerAt));
  // three trigger instants more, counted by tock's fires on b: none of them enqueues a limited task
  await waitFor(() => firedB.some((f) => f.schedule === 'tock' && f.triggerAt >= last + 3000), {
    what: 'tock past the last fire',
    timeoutMs: 15_000,
  });
  expect(firedB.some((f) => f.schedule === 'limited')).toBe(true); // b fired some of them
  expect(new Set(limited().map((f) => f.taskId)).size).toBe(4);
  const k = new QueueKeys(ns, 'lim');
  const r = redis();
  expect(await r.xlen(k.stream)).toBe(4);
  expect(await r.hgetall(k.runs('limited'))).toEqual({ max: '4', n: '4' });
  const info = await inspector().schedule('limited');
  expect(info).toMatchObject({ maxRuns: 4, runsLeft: 0, ended: 'max-runs' });

  await b.removeSchedule('limited');
  expect(await r.exists(k.runs('limited'))).toBe(0);
});

test('the next runs shown stop at the runs maxRuns leaves (trial 7: 5 shown with 2 left)', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  await s.addSchedules([
    { name: 'mr', spec: '@every 1h', maxRuns: 2 },
    { name: 'free', spec: '@every 1h' },
  ]);
  const insp = inspector();
  const [mr, free] = [await insp.schedule('mr', 5), await insp.schedule('free', 5)];
  expect([mr.runsLeft, mr.next.length, free.next.length]).toEqual([2, 2, 5]);
  expect(mr.next).toEqual(free.next.slice(0, 2));
});

test('maxRuns reached: no next runs (as an endAt-ended schedule), and the activity windows count the real runs only, expecting none after them (trial 4 F6)', async () => {
  const events = new EventBus();
  const fired = firesOf(events);
  const s = scheduler({ events });
  s.register({ name: 'tock', spec: { every: 1000 }, queue: 'clock' });
  await s.start();
  await waitFor(() => s.isLeader, 'leadership');
  await s.addSchedule({ name: 'twice', spec: { every: 1000 }, maxRuns: 2, queue: 'tw' });
  const twice = () => fired.filter((f) => f.schedule === 'twice');
  await waitFor(() => twice().length >= 2, 'two fires of twice');
  const last = Math.max(...twice().map((f) => f.triggerAt));
  // the leader's next batch finds the count reached and takes it out of the due index: no further
  // trigger is planned (none refused either, trial 44), so its last fire stays its last run
  const insp = inspector();
  const due = new ShardKeys(ns, shardOf('twice')).due;
  const r = redis();
  await waitFor(async () => (await r.zscore(due, 'twice')) === null, 'the ended schedule out of the due index');
  expect((await insp.schedule('twice')).lastFiredAt).toBe(last);
  await waitFor(() => fired.some((f) => f.schedule === 'tock' && f.triggerAt >= last + 3000), {
    what: 'tock 3 triggers past the last run',
    timeoutMs: 15_000,
  });
  const info = await insp.schedule('twice');
  expect(info).toMatchObject({ maxRuns: 2, runsLeft: 0, ended: 'max-runs', next: [] });
  expect(info.nextDueAt).toBeUndefined();
  expect((await insp.schedules()).find((x) => x.name === 'twice')?.next).toEqual([]);
  const activity = (await insp.scheduleActivity()).find((a) => a.name === 'twice')!;
  expect([activity.hour, activity.day, activity.overdue]).toEqual([
    { expected: 2, fired: 2, exact: true },
    { expected: 2, fired: 2, exact: true },
    0,
  ]);
  expect(twice()).toHaveLength(2);
});

test('maxRuns: a new definition keeps the count unless maxRuns changed', async () => {
  const events = new EventBus();
  const fired = firesOf(events);
  const s = scheduler({ events });
  s.register({ name: 'tock', spec: { every: 1000 }, queue: 'clock' });
  await s.start();
  await waitFor(() => s.isLeader, 'leadership');
  await s.addSchedule({ name: 'kept', spec: { every: 1000 }, maxRuns: 2, queue: 'k' });
  const kept = () => fired.filter((f) => f.schedule === 'kept');
  await waitFor(() => kept().length >= 2, 'two fires of kept');
  const insp = inspector();
  await waitFor(async () => (await insp.schedule('kept')).runsLeft === 0, 'runsLeft 0');
  await s.addSchedule({ name: 'kept', spec: { every: 1000 }, maxRuns: 2, queue: 'k', payload: { v: 2 } }); // same maxRuns: the count stays
  expect((await insp.schedule('kept')).runsLeft).toBe(0);
  await s.addSchedule({ name: 'kept', spec: { every: 1000 }, maxRuns: 3, queue: 'k' }); // a new maxRuns: counted afresh
  expect((await insp.schedule('kept')).runsLeft).toBe(3);
  await waitFor(() => kept().length >= 5, { what: 'three more fires of kept', timeoutMs: 15_000 });
  const last = Math.max(...kept().map((f) => f.triggerAt));
  await waitFor(() => fired.some((f) => f.schedule === 'tock' && f.triggerAt >= last + 3000), {
    what: 'tock past the last fire',
    timeoutMs: 15_000,
  });
  expect(kept()).toHaveLength(5);
  const r = redis();
  expect(await r.xlen(new QueueKeys(ns, 'k').stream)).toBe(5);
  // a new queue: counted afresh there, the old queue's counter deleted
  await s.addSchedule({ name: 'kept', spec: { every: 1000 }, maxRuns: 3, queue: 'k2' });
  expect(await r.exists(new QueueKeys(ns, 'k').runs('kept'))).toBe(0);
  expect([2, 3]).toContain((await insp.schedule('kept')).runsLeft); // 2 if its first trigger in k2 fired meanwhile
});

test('maxRuns dropped, then given again: the count starts afresh (trial 29: the old count came back, exhausted at once)', async () => {
  const events = new EventBus();
  const fired = firesOf(events);
  const s = scheduler({ events });
  await s.start();
  await waitFor(() => s.isLeader, 'leadership');
  const def = { name: 'again', spec: { every: 1000 }, queue: 'ag' };
  await s.addSchedule({ ...def, maxRuns: 1 });
  const insp = inspector();
  await waitFor(async () => (await insp.schedule('again')).runsLeft === 0, 'runsLeft 0');
  await s.addSchedule(def); // no limit: nothing counts
  const before = fired.filter((f) => f.schedule === 'again').length;
  await s.upsertSchedules([{ ...def, maxRuns: 1 }]); // a limit again: a fresh count of it
  expect(await insp.schedule('again')).toMatchObject({ maxRuns: 1, runsLeft: 1 });
  await waitFor(() => fired.filter((f) => f.schedule === 'again').length > before, 'a fire under the new limit');
  await waitFor(async () => (await insp.schedule('again')).runsLeft === 0, 'runsLeft 0 again');
});

test('the last run under maxRuns is never skipped as superseded: no newer trigger comes (trial 29: catchUp latest and cancel-previous skipped it at start, 0 runs of maxRuns 1)', async () => {
  const events = new EventBus();
  const fired = firesOf(events);
  const s = scheduler({ events });
  s.register({ name: 'tock', spec: { every: 1000 }, queue: 'clock' });
  await s.start();
  await waitFor(() => s.isLeader, 'leadership');
  await s.addSchedules([
    { name: 'latest', spec: { every: 1000 }, maxRuns: 1, catchUp: 'latest', queue: 'lq' },
    { name: 'cancel', spec: { every: 1000 }, maxRuns: 1, overlap: 'cancel-previous', queue: 'lq' },
    { name: 'two', spec: { every: 1000 }, maxRuns: 2, catchUp: 'latest', queue: 'lq' }, // its first run is superseded by its second
  ]);
  const of = (name: string) => fired.filter((f) => f.schedule === name);
  await waitFor(() => of('latest').length === 1 && of('cancel').length === 1 && of('two').length === 2, 'every run fired');
  // no worker until the instant after each schedule's last trigger has come: its task has waited past it
  const last = Math.max(...[...of('latest'), ...of('cancel'), ...of('two')].map((f) => f.triggerAt));
  await waitFor(() => fired.some((f) => f.schedule === 'tock' && f.triggerAt > last + 1000), 'tock past the next instants');
  const workerEvents = new EventBus();
  const skipped: string[] = [];
  workerEvents.subscribe((e) => e.type === 'schedule.skipped' && skipped.push(`${e.schedule}:${e.triggerAt / 1000}`));
  const ran: string[] = [];
  const w = new ChronosServer({ connection: redisUrl(), namespace: ns, logger, queues: ['lq'], events: workerEvents });
  started.push({ stop: () => w.shutdown() });
  for (const type of ['latest', 'cancel', 'two']) w.handle(type, (t) => void ran.push(t.id));
  await w.start();
  await waitFor(() => ran.length + skipped.length >= 4, 'the four trigger tasks run or skipped');
  expect(ran.sort()).toEqual([of('latest')[0].taskId, of('cancel')[0].taskId, of('two')[1].taskId].sort());
  expect(skipped).toEqual([of('two')[0].taskId]);
});

test('a change of bounds applies from the next trigger: raising an exhausted maxRuns or extending an ended endAt catches up nothing from before (trial 5)', async () => {
  const events = new EventBus();
  const fired = firesOf(events);
  const s = scheduler({ events });
  await s.start();
  await waitFor(() => s.isLeader, 'leadership');
  const endAt = Date.now() + 2500;
  await s.upsertSchedules([
    { name: 'runs', spec: { every: 1000 }, maxRuns: 2 },
    { name: 'ends', spec: { every: 1000 }, endAt },
  ]);
  const of = (name: string) => fired.filter((f) => f.schedule === name);
  await waitFor(() => of('runs').length >= 2 && of('ends').length >= 2, 'both done');
  // inactive for 3 s: three instants of each that never existed under their bounds
  await waitFor(() => Date.now() > endAt + 3000, { what: '3 s inactive', timeoutMs: 5000, intervalMs: 100 });
  const before = { runs: of('runs').length, ends: of('ends').length };
  const changedFrom = Date.now();
  await s.upsertSchedules([{ name: 'runs', spec: { every: 1000 }, maxRuns: 4 }]); // the bulk path
  await s.addSchedule({ name: 'ends', spec: { every: 1000 }, endAt: endAt + 60_000 }); // the single path
  await waitFor(() => of('runs').length >= before.runs + 2 && of('ends').length >= before.ends + 2, 'two fires of each after the change');
  const after = [...of('runs').slice(before.runs), ...of('ends').slice(before.ends)];
  // before the fix the leader caught up each inactive instant at once (caughtUp, dated before the change)
  expect(after.filter((f) => f.triggerAt < changedFrom).map((f) => [f.schedule, changedFrom - f.triggerAt])).toEqual([]);
  expect(after.filter((f) => f.caughtUp)).toEqual([]);
}, 30_000);
