// A worker process with a no-op handler.
// mode 'drain' (workload 3): the queue holds `n` tasks; on `go` start, run them all, report when the
//   last one is done (acknowledged in Redis) → done { ms, cpuUs, harness }.
// mode 'latency' (workload 4): start consuming at once, record when each task's handler starts
//   (by payload n); on `mark` reset the CPU baseline; on `report` (once `n` tasks were seen, or 5 s
//   later) → report { starts: [n, t][], cpuUs }.
// Config: { lib: 'chronos' | 'bullmq' | 'limit', url, prefix, n, concurrency, mode }; Chronos only (workload 8):
//   `connection` (a URL or { cluster: seeds }, over `url`) and `queues` (served queues, default ['default']).
import { childConfig, next, on, onExit, send } from '../lib/ipc.js';
import { BULL_QUEUE, LIMIT_GROUP, TASK_TYPE, bullConnection, limitKeys } from '../lib/common.js';
import { cpuSince, nowMs, sleep } from '../lib/time.js';

interface Config {
  lib: 'chronos' | 'bullmq' | 'limit';
  url: string;
  prefix: string;
  n: number;
  concurrency: number;
  mode: 'drain' | 'latency';
  connection?: string | { cluster: { host: string; port: number }[] };
  queues?: string[];
}

const cfg = childConfig<Config>();
const starts = new Float64Array(cfg.n).fill(NaN);
let handled = 0;
let allHandled!: () => void;
const allHandledP = new Promise<void>((r) => (allHandled = r));
/** What the handler does: note the start (latency mode), count. */
function onTask(n: number): void {
  if (cfg.mode === 'latency' && n >= 0 && n < cfg.n) starts[n] = nowMs();
  if (++handled === cfg.n) allHandled();
}

let start: () => Promise<void>;
/** Resolves when every task is done as far as Redis knows (acknowledged). */
let allDone: () => Promise<void>;
const harness: Record<string, number> = {};

if (cfg.lib === 'chronos') {
  const { ChronosServer, QueueKeys } = await import('../../lib/core/internal.js');
  const { Cluster, Redis } = await import('ioredis');
  const connection = cfg.connection ?? cfg.url;
  const queues = cfg.queues ?? ['default'];
  const server = new ChronosServer({ connection, namespace: cfg.prefix, concurrency: cfg.concurrency, queues });
  server.handle<{ n: number }>(TASK_TYPE, (task) => onTask(task.payload.n));
  await server.redis.ping();
  const probe = typeof connection === 'string' ? new Redis(connection) : new Cluster(connection.cluster);
  await probe.ping();
  const streams = queues.map((q) => new QueueKeys(cfg.prefix, q).stream);
  onExit(async () => {
    await server.shutdown();
    probe.disconnect();
  });
  start = () => server.start();
  allDone = async () => {
    await allHandledP;
    // acks are batched (one script per event-loop turn): the last ones are written a moment later;
    // an acked entry is deleted, so the streams are empty once every task is done
    for (;;) {
      harness.xlen = (harness.xlen ?? 0) + streams.length;
      const lengths = await Promise.all(streams.map((k) => probe.xlen(k)));
      if (lengths.every((l) => l === 0)) return;
      await sleep(1);
    }
  };
} else if (cfg.lib === 'bullmq') {
  const { Worker } = await import('bullmq');
  let completed = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const worker = new Worker<{ n: number }>(
    BULL_QUEUE,
    async (job) => {
      onTask(job.data.n);
    },
    { connection: bullConnection(cfg.url), prefix: cfg.prefix, concurrency: cfg.concurrency, autorun: false },
  );
  worker.on('completed', () => {
    if (++completed === cfg.n) resolveDone();
  });
  worker.on('error', () => {});
  await worker.waitUntilReady();
  onExit(() => worker.close());
  start = async () => {
    void worker.run();
  };
  allDone = () => done;
} else {
  // the physical limit: XREADGROUP COUNT <concurrency>, then XACK + XDEL of the batch pipelined
  // with the next read (a no-op "handler" parses each payload)
  const { Redis } = await import('ioredis');
  const redis = new Redis(cfg.url);
  const { stream } = limitKeys(cfg.prefix);
  try {
    await redis.xgroup('CREATE', stream, LIMIT_GROUP, '0', 'MKSTREAM');
  } catch {
    /* BUSYGROUP: the parent created it */
  }
  onExit(() => redis.disconnect());
  let read = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  type Reply = [string, [string, string[]][]][] | null;
  const loop = async () => {
    let ids: string[] = [];
    for (;;) {
      const p = redis.pipeline();
      if (ids.length) {
        p.xack(stream, LIMIT_GROUP, ...ids);
        p.xdel(stream, ...ids);
      }
      if (cfg.mode === 'drain' && read >= cfg.n) {
        // the last batch is acknowledged: done
        await p.exec();
        resolveDone();
        return;
      }
      p.call('XREADGROUP', 'GROUP', LIMIT_GROUP, 'c', 'COUNT', cfg.concurrency, 'BLOCK', 1000, 'STREAMS', stream, '>');
      const res = (await p.exec()) ?? [];
      const reply = res[res.length - 1][1] as Reply;
      ids = [];
      for (const [, entries] of reply ?? []) {
        for (const [id, fields] of entries) {
          ids.push(id);
          read++;
          const json = fields[fields.indexOf('payload') + 1];
          onTask((JSON.parse(json) as { n: number }).n);
        }
      }
    }
  };
  start = async () => {
    void loop();
  };
  allDone = () => done;
}

if (cfg.mode === 'drain') {
  send({ type: 'ready' });
  await next('go');
  const cpu0 = process.cpuUsage();
  const t0 = nowMs();
  await start();
  await allDone();
  const ms = nowMs() - t0;
  send({ type: 'done', ms, cpuUs: cpuSince(cpu0), harness });
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
  // let a blocking read get under way before the producer starts
  await sleep(200);
  send({ type: 'ready' });
}
