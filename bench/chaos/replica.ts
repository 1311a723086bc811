// One replica of the chaos fleet: the core Scheduler (leaderTtl 2 s, the six schedules of
// common.ts) and a ChronosServer (visibility timeout 5 s) serving the task and trigger queues.
// Config (BENCH_CONFIG): ReplicaConfig. Every handler run is recorded (awaited RPUSH to the records
// Redis) at its start and at its end; a trigger's start also carries its Redis-time estimate (see
// RedisClock). Leadership changes and fired triggers are recorded too, and sent over IPC as
// { type: 'leader', acquired, term, shards }. SIGTERM: a graceful stop (scheduler resigns, server drains),
// exit 0. Logs go to stdout/stderr as the engine writes them (the parent counts the lines).
// The engine reaches Redis at cfg.url (the slot's proxy, which the rig may blackhole: a silent
// partition); the RedisClock at cfg.clockUrl (the chaos Redis itself). `Date.now` is patched, as the
// scheduler-node test fixture does: the IPC message { type: 'step', ms } sets the wall clock to ms
// ahead of the true clock (negative = behind, 0 = back). Records carry the monotonic `nowMs()`,
// which no step moves.
import { ChronosServer, EventBus, Scheduler, type Task } from '../../lib/core/index.js';
import { childConfig, on, onExit, send } from '../lib/ipc.js';
import type { ParentMessage } from '../lib/protocol.js';
import { nowMs, sleep } from '../lib/time.js';
import { FLEET, RedisClock, SCHEDULES, recorder, type ReplicaConfig } from './common.js';

const cfg = childConfig<ReplicaConfig>();
const trueNow = Date.now.bind(Date);
let wallStepMs = 0;
Date.now = () => trueNow() + wallStepMs;
// the rig's clock step is a chaos message, not one of bench/lib/protocol.ts's: handled by its name
on('step' as ParentMessage['type'], (m) => {
  wallStepMs = (m as unknown as { ms: number }).ms;
  send({ type: 'stepped', wallMinusTrueMs: Date.now() - nowMs() });
});
const rec = recorder(cfg.recordsUrl);
const clock = new RedisClock(cfg.clockUrl);
const events = new EventBus();
const i = cfg.name;

events.subscribe((e) => {
  if (e.type === 'schedule.fired') void rec.write({ k: 'fired', id: e.taskId, tr: e.triggerAt, t: nowMs(), i });
  if (e.type === 'leader.acquired' || e.type === 'leader.lost') {
    const acquired = e.type === 'leader.acquired';
    void rec.write({ k: 'lead', a: acquired, term: e.term, t: nowMs(), i, reason: acquired ? undefined : e.reason, sh: e.shards });
    send({ type: 'leader', acquired, term: e.term, shards: e.shards });
  }
});

const scheduler = new Scheduler({ connection: cfg.url, namespace: cfg.namespace, instanceId: i, leaderTtl: FLEET.leaderTtlMs, events });
for (const s of SCHEDULES) scheduler.register(s);

const server = new ChronosServer({
  connection: cfg.url,
  namespace: cfg.namespace,
  serverId: i,
  events,
  concurrency: FLEET.concurrency,
  queues: [FLEET.triggerQueue, FLEET.taskQueue, FLEET.limitedQueue],
  visibilityTimeout: FLEET.visibilityTimeoutMs,
});

server.handle(FLEET.taskType, async (task: Task) => {
  await rec.write({ k: 'start', id: task.id, q: 'd', t: nowMs(), i, r: task.retried });
  await sleep(FLEET.handlerMs);
  await rec.write({ k: 'done', id: task.id, q: 'd', t: nowMs(), i });
});

server.handle(FLEET.limitedType, async (task: Task) => {
  const g = task.group;
  await rec.write({ k: 'start', id: task.id, q: 'l', t: nowMs(), i, r: task.retried, g });
  await sleep(FLEET.limitedHandlerMs);
  await rec.write({ k: 'done', id: task.id, q: 'l', t: nowMs(), i, g });
});

server.handle(FLEET.triggerType, async (task: Task) => {
  const t = nowMs();
  const { rt, eb } = clock.at(t);
  const pv = (task.payload as { v?: number } | null)?.v;
  await rec.write({
    k: 'start',
    id: task.id,
    q: 't',
    t,
    i,
    tr: task.triggerAt,
    rt,
    eb,
    r: task.retried,
    ...(pv !== undefined ? { pv } : {}),
  });
  await sleep(FLEET.handlerMs);
  await rec.write({ k: 'done', id: task.id, q: 't', t: nowMs(), i });
});

let stopping: Promise<void> | undefined;
function stop(): Promise<void> {
  stopping ??= (async () => {
    await scheduler.stop();
    await server.shutdown();
    clock.stop();
    await rec.close();
  })();
  return stopping;
}
process.on('SIGTERM', () => void stop().finally(() => process.exit(0)));
onExit(stop);

clock.start();
// no handler starts before this process has an estimate of Redis time (at most ~5 s while Redis restarts)
for (let n = 0; n < 100 && !clock.ready; n++) await sleep(50);
await server.start();
await scheduler.start();
await rec.write({ k: 'up', t: nowMs(), i });
send({ type: 'ready' });
