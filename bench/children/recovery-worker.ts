// Workload 6: a worker whose handler never returns (role 'victim', SIGKILLed by the parent with its
// tasks in flight) or a healthy worker that recovers them (role 'survivor', no-op handler).
// Config: { lib: 'chronos' | 'bullmq', role, url, prefix, concurrency, settings }.
// IPC: → ready (running); victim → started { n, t } per handler start; survivor → done { n, t } per
// task finished (Chronos: handler returned, ack batched right after; BullMQ: 'completed' event).
import { childConfig, onExit, send } from '../lib/ipc.js';
import { BULL_QUEUE, TASK_TYPE, bullConnection } from '../lib/common.js';
import { nowMs } from '../lib/time.js';

interface Config {
  lib: 'chronos' | 'bullmq';
  role: 'victim' | 'survivor';
  url: string;
  prefix: string;
  concurrency: number;
  /** Chronos: { visibilityTimeout?, recoverInterval? }; BullMQ: { lockDuration?, stalledInterval? } (absent = library default) */
  settings: Record<string, number>;
}

const cfg = childConfig<Config>();
const victim = cfg.role === 'victim';
const forever = new Promise<never>(() => {});

if (cfg.lib === 'chronos') {
  const { ChronosServer } = await import('../../lib/core/index.js');
  const server = new ChronosServer({ connection: cfg.url, namespace: cfg.prefix, concurrency: cfg.concurrency, ...cfg.settings });
  server.handle<{ n: number }>(TASK_TYPE, async (task) => {
    if (victim) {
      send({ type: 'started', n: task.payload.n, t: nowMs() });
      await forever;
    }
    send({ type: 'done', n: task.payload.n, t: nowMs() });
  });
  onExit(() => server.shutdown());
  await server.start();
} else {
  const { Worker } = await import('bullmq');
  const worker = new Worker<{ n: number }>(
    BULL_QUEUE,
    async (job) => {
      if (victim) {
        send({ type: 'started', n: job.data.n, t: nowMs() });
        await forever;
      }
    },
    { connection: bullConnection(cfg.url), prefix: cfg.prefix, concurrency: cfg.concurrency, ...cfg.settings },
  );
  worker.on('completed', (job) => send({ type: 'done', n: job.data.n, t: nowMs() }));
  worker.on('error', () => {});
  await worker.waitUntilReady();
  onExit(() => worker.close(true));
}
send({ type: 'ready' });
