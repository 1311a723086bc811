// Workloads 5 and 7: schedule processes.
// role 'chronos-scheduler': a Chronos Scheduler declaring `schedules` schedules '@every 1s' (no worker).
// role 'chronos-worker':    a ChronosServer running the fired tasks.
// role 'bullmq-worker':     a BullMQ Worker; first upserts `schedules` job schedulers (every: 1000, or
//                           pattern '* * * * * *' when `aligned`), since BullMQ schedules from its workers.
// role 'limit-leader':      a minimal leader loop: at each whole second, one script enqueues every
//                           schedule's trigger (SET NX dedup + XADD + HSET lastFired per trigger).
// role 'limit-worker':      XREADGROUP COUNT <concurrency> + XACK/XDEL pipelined with the next read.
// Config: { role, url, prefix, schedules, concurrency, leaderTtl?, reportEvents?, aligned? }.
// IPC: → ready; ← mark (start of the measured window); ← end → stats { cpuUs, lags, enqLags, fires, starts, ms };
// with reportEvents: → leader { acquired, term, t } and → fired { schedule, triggerAt, t } as they happen.
import { childConfig, on, onExit, send } from '../lib/ipc.js';
import { BULL_QUEUE, LIMIT_FIRE_LUA, LIMIT_GROUP, TASK_TYPE, bullConnection, bullTriggerAt, limitKeys, payload } from '../lib/common.js';
import { cpuSince, nowMs, sleepUntil } from '../lib/time.js';

interface Config {
  role: 'chronos-scheduler' | 'chronos-worker' | 'bullmq-worker' | 'limit-leader' | 'limit-worker';
  url: string;
  prefix: string;
  schedules: number;
  concurrency: number;
  leaderTtl?: number;
  reportEvents?: boolean;
  aligned?: boolean;
  name?: string;
}

const cfg = childConfig<Config>();

// measured window state
let measuring = false;
let cpu0 = process.cpuUsage();
let markAt = nowMs();
let lags: number[] = [];
let enqLags: number[] = [];
let fires = 0;
let starts = 0;
/** A handler started for a trigger of instant `triggerAt` (and, when known, enqueued at `enqueuedAt`). */
function started(triggerAt: number, enqueuedAt?: number): void {
  if (!measuring) return;
  starts++;
  lags.push(nowMs() - triggerAt);
  if (enqueuedAt !== undefined) enqLags.push(enqueuedAt - triggerAt);
}
function fired(n = 1): void {
  if (measuring) fires += n;
}

let stop: () => Promise<unknown> = async () => {};

if (cfg.role === 'chronos-scheduler') {
  const { Scheduler, EventBus } = await import('../../lib/core/index.js');
  const events = new EventBus();
  const scheduler = new Scheduler({ connection: cfg.url, namespace: cfg.prefix, instanceId: cfg.name, leaderTtl: cfg.leaderTtl, events });
  for (let i = 0; i < cfg.schedules; i++) scheduler.register({ name: `s${i}`, spec: '@every 1s', type: TASK_TYPE, payload: payload(i) });
  events.subscribe((e) => {
    if (e.type === 'schedule.fired') {
      fired();
      if (cfg.reportEvents) send({ type: 'fired', schedule: e.schedule, triggerAt: e.triggerAt, t: nowMs() });
    } else if (cfg.reportEvents && (e.type === 'leader.acquired' || e.type === 'leader.lost')) {
      send({ type: 'leader', acquired: e.type === 'leader.acquired', term: e.term, t: nowMs() });
    }
  });
  let stopping = false;
  process.on('SIGTERM', () => {
    if (stopping) return;
    stopping = true;
    void scheduler.stop().finally(() => process.exit(0));
  });
  stop = () => scheduler.stop();
  await scheduler.start();
} else if (cfg.role === 'chronos-worker') {
  const { ChronosServer } = await import('../../lib/core/index.js');
  const server = new ChronosServer({ connection: cfg.url, namespace: cfg.prefix, concurrency: cfg.concurrency });
  server.handle(TASK_TYPE, (task) => started(task.triggerAt ?? NaN, task.enqueuedAt));
  stop = () => server.shutdown();
  await server.start();
} else if (cfg.role === 'bullmq-worker') {
  const { Queue, Worker } = await import('bullmq');
  const connection = bullConnection(cfg.url);
  const queue = new Queue(BULL_QUEUE, { connection, prefix: cfg.prefix });
  for (let i = 0; i < cfg.schedules; i++) {
    await queue.upsertJobScheduler(`s${i}`, cfg.aligned ? { pattern: '* * * * * *' } : { every: 1000 }, {
      name: TASK_TYPE,
      data: payload(i),
      opts: { removeOnComplete: true },
    });
  }
  await queue.close();
  const worker = new Worker(BULL_QUEUE, async (job) => started(bullTriggerAt(job)), {
    connection,
    prefix: cfg.prefix,
    concurrency: cfg.concurrency,
  });
  worker.on('error', () => {});
  await worker.waitUntilReady();
  stop = () => worker.close();
} else if (cfg.role === 'limit-leader') {
  const { Redis } = await import('ioredis');
  const redis = new Redis(cfg.url);
  redis.defineCommand('benchFire', { lua: LIMIT_FIRE_LUA });
  await redis.call('SCRIPT', 'LOAD', LIMIT_FIRE_LUA);
  const keys = limitKeys(cfg.prefix);
  const names = Array.from({ length: cfg.schedules }, (_, i) => `s${i}`);
  let running = true;
  const loop = async () => {
    let at = Math.ceil(nowMs() / 1000) * 1000;
    while (running) {
      await sleepUntil(at);
      const keyList = [keys.stream, keys.lastFired, ...names.map((s) => keys.dedup(`${s}:${at / 1000}`))];
      const n = (await (redis as unknown as { benchFire(nk: number, ...a: (string | number)[]): Promise<number> }).benchFire(
        keyList.length,
        ...keyList,
        at,
        ...names,
      )) as number;
      fired(n);
      at += 1000;
      while (at <= nowMs()) at += 1000; // never catch up in a burst: a minimal loop skips what it missed
    }
  };
  void loop();
  stop = async () => {
    running = false;
    redis.disconnect();
  };
} else {
  const { Redis } = await import('ioredis');
  const redis = new Redis(cfg.url);
  const { stream } = limitKeys(cfg.prefix);
  try {
    await redis.xgroup('CREATE', stream, LIMIT_GROUP, '$', 'MKSTREAM');
  } catch {
    /* BUSYGROUP */
  }
  let running = true;
  type Reply = [string, [string, string[]][]][] | null;
  const loop = async () => {
    let ids: string[] = [];
    while (running) {
      const p = redis.pipeline();
      if (ids.length) {
        p.xack(stream, LIMIT_GROUP, ...ids);
        p.xdel(stream, ...ids);
      }
      p.call('XREADGROUP', 'GROUP', LIMIT_GROUP, 'c', 'COUNT', cfg.concurrency, 'BLOCK', 1000, 'STREAMS', stream, '>');
      const res = (await p.exec()) ?? [];
      const reply = res[res.length - 1][1] as Reply;
      ids = [];
      for (const [, entries] of reply ?? []) {
        for (const [id, fields] of entries) {
          ids.push(id);
          started(Number(fields[fields.indexOf('tr') + 1]));
          JSON.parse(fields[fields.indexOf('payload') + 1]);
        }
      }
    }
  };
  void loop().catch(() => {});
  stop = async () => {
    running = false;
    redis.disconnect();
  };
}

onExit(() => Promise.race([stop(), new Promise((r) => setTimeout(r, 3000))]));
on('mark', () => {
  measuring = true;
  cpu0 = process.cpuUsage();
  markAt = nowMs();
  lags = [];
  enqLags = [];
  fires = 0;
  starts = 0;
});
on('end', () => {
  measuring = false;
  send({ type: 'stats', cpuUs: cpuSince(cpu0), ms: nowMs() - markAt, lags, enqLags, fires, starts });
});
send({ type: 'ready' });
