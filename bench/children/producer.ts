// Workload 4: enqueue at a steady `rate` per second (open loop: sends are not serialised on their
// replies) for `total` tasks, recording when each enqueue call was made.
// Config: { lib: 'chronos' | 'bullmq' | 'limit', url, prefix, rate, total }.
// IPC: → ready; ← go; → done { sends: [n, t][], cpuUs, errors }.
import { childConfig, next, onExit, send } from '../lib/ipc.js';
import { BULL_QUEUE, TASK_TYPE, bullConnection, limitKeys, payload } from '../lib/common.js';
import { cpuSince, nowMs, sleep } from '../lib/time.js';

interface Config {
  lib: 'chronos' | 'bullmq' | 'limit';
  url: string;
  prefix: string;
  rate: number;
  total: number;
}

const cfg = childConfig<Config>();
let enqueue: (n: number) => Promise<unknown>;

if (cfg.lib === 'chronos') {
  const { QueueClient } = await import('../../lib/core/index.js');
  const client = new QueueClient({ connection: cfg.url, namespace: cfg.prefix });
  await client.redis.ping();
  onExit(() => client.close());
  enqueue = (n) => client.enqueue(TASK_TYPE, payload(n));
} else if (cfg.lib === 'bullmq') {
  const { Queue } = await import('bullmq');
  const queue = new Queue(BULL_QUEUE, {
    connection: bullConnection(cfg.url),
    prefix: cfg.prefix,
    defaultJobOptions: { removeOnComplete: true },
  });
  await queue.waitUntilReady();
  onExit(() => queue.close());
  enqueue = (n) => queue.add(TASK_TYPE, payload(n));
} else {
  const { Redis } = await import('ioredis');
  const redis = new Redis(cfg.url);
  await redis.ping();
  const { stream } = limitKeys(cfg.prefix);
  onExit(() => redis.quit());
  enqueue = (n) => redis.xadd(stream, '*', 'type', TASK_TYPE, 'payload', JSON.stringify(payload(n)));
}

send({ type: 'ready' });
await next('go');
const cpu0 = process.cpuUsage();
const sends = new Float64Array(cfg.total);
const pending: Promise<unknown>[] = [];
let errors = 0;
const interval = 1000 / cfg.rate;
const t0 = nowMs() + 5;
for (let n = 0; n < cfg.total;) {
  const due = t0 + n * interval;
  const now = nowMs();
  if (now < due) {
    await sleep(due - now >= 1.5 ? due - now - 0.5 : 0);
    continue;
  }
  // everything due now goes out (a late timer sends a small burst rather than drifting)
  while (n < cfg.total && t0 + n * interval <= nowMs()) {
    sends[n] = nowMs();
    pending.push(enqueue(n).catch(() => errors++));
    n++;
  }
}
await Promise.all(pending);
send({ type: 'done', sends: Array.from(sends, (t, n) => [n, t]), cpuUs: cpuSince(cpu0), errors });
