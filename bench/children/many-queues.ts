// A worker process serving many queues (workload 11), with a no-op handler.
// mode 'idle': start at once (Chronos: one ChronosServer on every queue; BullMQ: one Worker per queue),
//   send `ready` once started; the parent measures Redis while nothing is enqueued.
// mode 'latency': start at once; record when each task's handler starts (by payload n); on `report`
//   (once `n` tasks were seen, or 5 s later) → report { starts: [n, t][], cpuUs }.
// mode 'backlog': the queues hold a backlog; on `go` start, record the queue (index) of each handler start
//   in order; once `n` tasks started → done { order: number[], ms, cpuUs }.
// Config: { lib: 'chronos' | 'bullmq', url, prefix, queues: string[], weights?: number[], n, concurrency, mode,
//   recoverInterval? (Chronos: ms between recovery sweeps, to measure the idle cost without them) }.
import { childConfig, next, on, onExit, send } from '../lib/ipc.js';
import { TASK_TYPE, bullConnection } from '../lib/common.js';
import { cpuSince, nowMs, sleep } from '../lib/time.js';

interface Config {
  lib: 'chronos' | 'bullmq';
  url: string;
  prefix: string;
  queues: string[];
  weights?: number[];
  n: number;
  concurrency: number;
  mode: 'idle' | 'latency' | 'backlog';
  recoverInterval?: number;
}

const cfg = childConfig<Config>();
const starts = new Float64Array(cfg.mode === 'latency' ? cfg.n : 0).fill(NaN);
const order: number[] = [];
let handled = 0;
let allHandled!: () => void;
const allHandledP = new Promise<void>((r) => (allHandled = r));
const queueIndex = new Map(cfg.queues.map((q, i) => [q, i]));

function onTask(queue: string, n: number): void {
  if (cfg.mode === 'latency' && n >= 0 && n < cfg.n) starts[n] = nowMs();
  if (cfg.mode === 'backlog' && order.length < cfg.n) order.push(queueIndex.get(queue) ?? -1);
  if (++handled === cfg.n) allHandled();
}

let start: () => Promise<void>;
if (cfg.lib === 'chronos') {
  const { ChronosServer } = await import('../../lib/core/index.js');
  const queues = cfg.weights ? Object.fromEntries(cfg.queues.map((q, i) => [q, cfg.weights![i]])) : cfg.queues;
  const server = new ChronosServer({
    connection: cfg.url,
    namespace: cfg.prefix,
    concurrency: cfg.concurrency,
    queues,
    ...(cfg.recoverInterval ? { recoverInterval: cfg.recoverInterval } : {}),
    logger: { log: () => {}, warn: () => {}, error: (m: string) => console.error(m) },
  });
  server.handle<{ n: number }>(TASK_TYPE, (task) => onTask(task.queue, task.payload.n));
  await server.redis.ping();
  onExit(() => server.shutdown());
  start = () => server.start();
} else {
  const { Worker } = await import('bullmq');
  const workers = cfg.queues.map(
    (q) =>
      new Worker<{ n: number }>(q, async (job) => onTask(q, job.data.n), {
        connection: bullConnection(cfg.url),
        prefix: cfg.prefix,
        concurrency: cfg.concurrency,
        autorun: false,
      }),
  );
  for (const w of workers) w.on('error', () => {});
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  onExit(() => Promise.all(workers.map((w) => w.close())));
  start = async () => {
    for (const w of workers) void w.run();
  };
}

if (cfg.mode === 'backlog') {
  send({ type: 'ready' });
  await next('go');
  const cpu0 = process.cpuUsage();
  const t0 = nowMs();
  await start();
  await allHandledP;
  send({ type: 'done', order, ms: nowMs() - t0, cpuUs: cpuSince(cpu0) });
} else {
  await start();
  let cpu0 = process.cpuUsage();
  on('mark', () => {
    cpu0 = process.cpuUsage();
  });
  on('report', () => {
    void Promise.race([allHandledP, sleep(5000)]).then(() => {
      const out: [number, number][] = [];
      starts.forEach((t, n) => {
        if (!Number.isNaN(t)) out.push([n, t]);
      });
      send({ type: 'report', starts: out, cpuUs: cpuSince(cpu0) });
    });
  });
  // let the start-up work (consumer groups, the forwarder's first sweep) pass before measuring
  await sleep(1500);
  send({ type: 'ready' });
}
