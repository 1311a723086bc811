// Workloads 1–2: enqueue `n` tasks, one at a time awaited (batch 0) or in bulk batches of `batch`.
// Config: { lib: 'chronos' | 'bullmq' | 'limit' | 'limit-xadd', url, prefix, n, batch }.
// IPC: → ready; ← go; → done { ms, cpuUs }.
import { childConfig, next, onExit, send } from '../lib/ipc.js';
import { BULL_QUEUE, LIMIT_ADD_LUA, TASK_TYPE, bullConnection, limitKeys, payload } from '../lib/common.js';
import { cpuSince, nowMs } from '../lib/time.js';

interface Config {
  lib: 'chronos' | 'bullmq' | 'limit' | 'limit-xadd';
  url: string;
  prefix: string;
  n: number;
  batch: number;
}

const cfg = childConfig<Config>();
let run: () => Promise<void>;

if (cfg.lib === 'chronos') {
  const { QueueClient } = await import('../../lib/core/index.js');
  const client = new QueueClient({ connection: cfg.url, namespace: cfg.prefix });
  await client.redis.ping();
  onExit(() => client.close());
  run = async () => {
    if (cfg.batch === 0) {
      for (let i = 0; i < cfg.n; i++) await client.enqueue(TASK_TYPE, payload(i));
    } else {
      for (let i = 0; i < cfg.n; i += cfg.batch) {
        const tasks = [];
        for (let j = i; j < Math.min(cfg.n, i + cfg.batch); j++) tasks.push({ type: TASK_TYPE, payload: payload(j) });
        await client.enqueueBulk(tasks);
      }
    }
  };
} else if (cfg.lib === 'bullmq') {
  const { Queue } = await import('bullmq');
  const queue = new Queue(BULL_QUEUE, {
    connection: bullConnection(cfg.url),
    prefix: cfg.prefix,
    defaultJobOptions: { removeOnComplete: true },
  });
  await queue.waitUntilReady();
  onExit(() => queue.close());
  run = async () => {
    if (cfg.batch === 0) {
      for (let i = 0; i < cfg.n; i++) await queue.add(TASK_TYPE, payload(i));
    } else {
      for (let i = 0; i < cfg.n; i += cfg.batch) {
        const jobs = [];
        for (let j = i; j < Math.min(cfg.n, i + cfg.batch); j++) jobs.push({ name: TASK_TYPE, data: payload(j) });
        await queue.addBulk(jobs);
      }
    }
  };
} else {
  // the physical limit: a minimal Lua add (or a bare XADD) per task, awaited or pipelined
  const { Redis } = await import('ioredis');
  const redis = new Redis(cfg.url);
  redis.defineCommand('benchAdd', { numberOfKeys: 1, lua: LIMIT_ADD_LUA });
  const add = (redis as unknown as { benchAdd(key: string, type: string, payload: string): Promise<string> }).benchAdd.bind(redis);
  const { stream } = limitKeys(cfg.prefix);
  await redis.call('SCRIPT', 'LOAD', LIMIT_ADD_LUA);
  onExit(() => redis.quit());
  const lua = cfg.lib === 'limit';
  run = async () => {
    if (cfg.batch === 0) {
      for (let i = 0; i < cfg.n; i++) {
        if (lua) await add(stream, TASK_TYPE, JSON.stringify(payload(i)));
        else await redis.xadd(stream, '*', 'type', TASK_TYPE, 'payload', JSON.stringify(payload(i)));
      }
    } else {
      for (let i = 0; i < cfg.n; i += cfg.batch) {
        const p = redis.pipeline();
        for (let j = i; j < Math.min(cfg.n, i + cfg.batch); j++) {
          if (lua) (p as unknown as { benchAdd(...a: string[]): void }).benchAdd(stream, TASK_TYPE, JSON.stringify(payload(j)));
          else p.xadd(stream, '*', 'type', TASK_TYPE, 'payload', JSON.stringify(payload(j)));
        }
        await p.exec();
      }
    }
  };
}

send({ type: 'ready' });
await next('go');
const cpu0 = process.cpuUsage();
const t0 = nowMs();
await run();
const ms = nowMs() - t0;
send({ type: 'done', ms, cpuUs: cpuSince(cpu0) });
