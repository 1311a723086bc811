// The scheduler's log lines (trial 4): what an operator reads must name the schedule's real
// overlap policy, and every change of the shards an instance leads. Real Redis, in-process
// schedulers with a recording logger.
import { EventBus, type ChronosEvent } from '../../lib/core/runtime/events.js';
import { Scheduler, type SchedulerOptions } from '../../lib/core/scheduler/scheduler.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

let ns: string;
const started: { stop(): Promise<void> }[] = [];
beforeEach(() => {
  ns = newNamespace('logs');
});
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
  await deleteNamespace(ns);
});

function scheduler(options: SchedulerOptions = {}): Scheduler {
  const s = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, heartbeatInterval: 200, ...options });
  started.push(s);
  return s;
}

type Skipped = Extract<ChronosEvent, { type: 'schedule.skipped' }>;

test('an overlap skip is logged with the schedule’s own policy: buffer-one says a trigger already waits behind the live task (trial 4 F7)', async () => {
  const logger = recordingLogger();
  const events = new EventBus();
  const skipped: Skipped[] = [];
  events.subscribe((e) => e.type === 'schedule.skipped' && e.reason === 'overlap' && skipped.push(e));
  // no worker: each schedule's first task stays pending (live), so later triggers are buffered or skipped
  const s = scheduler({ logger, events });
  s.register({ name: 'buf', spec: { every: 1000 }, queue: 'logs', overlap: 'buffer-one' });
  s.register({ name: 'one', spec: { every: 1000 }, queue: 'logs', overlap: 'skip' });
  await s.start();
  await waitFor(() => ['buf', 'one'].every((n) => skipped.some((e) => e.schedule === n)), { what: 'a skip of each', timeoutMs: 10_000 });
  const skips = (name: string) =>
    logger.lines.filter((l) => l.message.startsWith('Trigger skipped') && l.message.includes(`schedule=${name} `));
  expect(skips('buf')[0]).toEqual({
    level: 'warn',
    message: expect.stringMatching(
      /^Trigger skipped: a trigger of this schedule already waits behind its live task \(schedule=buf trigger=buf:\d+ overlap=buffer-one\)$/,
    ),
  });
  expect(skips('one')[0]).toEqual({
    level: 'warn',
    message: expect.stringMatching(
      /^Trigger skipped: the previous task of this schedule is still pending or running \(schedule=one trigger=one:\d+ overlap=skip\)$/,
    ),
  });
});

type Lost = Extract<ChronosEvent, { type: 'leader.lost' }>;

test('a shard released on a rebalance is logged, as one taken: "Leadership released (… shards=… reason=…)" names what the other instance then acquires (trial 4 F9)', async () => {
  const logA = recordingLogger();
  const logB = recordingLogger();
  const eventsA = new EventBus();
  const lost: Lost[] = [];
  eventsA.subscribe((e) => e.type === 'leader.lost' && lost.push(e));
  const a = scheduler({ logger: logA, events: eventsA });
  a.register({ name: 'tock', spec: { every: 1000 }, queue: 'logs' });
  await a.start();
  await waitFor(() => logA.lines.some((l) => l.message.startsWith('Leadership acquired')), 'a to lead every shard');
  const b = scheduler({ logger: logB });
  b.register({ name: 'tock', spec: { every: 1000 }, queue: 'logs' });
  await b.start();
  await waitFor(() => lost.length > 0, { what: 'a to release shards to b', timeoutMs: 10_000 });
  expect(lost[0].reason).toBe('released: above this instance’s fair share of the shards');
  const line = logA.lines.find((l) => l.message.startsWith('Leadership released'));
  expect(line).toEqual({
    level: 'log',
    message: `Leadership released (term=${lost[0].term} shards=${lost[0].shards.join(',')} reason=released: above this instance’s fair share of the shards)`,
  });
  // what a gave up, b takes: the logs never show two leaders of a shard
  const taken = () =>
    logB.lines.flatMap((l) => /^Leadership acquired \(term=\d+ shards=([\d,]+) /.exec(l.message)?.[1].split(',').map(Number) ?? []);
  await waitFor(() => lost[0].shards.every((k) => taken().includes(k)), { what: 'b to acquire the released shards', timeoutMs: 10_000 });
});
