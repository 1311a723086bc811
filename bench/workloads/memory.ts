// Workload 9: Redis memory per task (issue 15). Each measurement runs on a FRESH private redis-server
// (bench/lib/cluster.ts BenchServers.standalone), so `INFO memory` starts from an empty baseline:
// - pending: N tasks enqueued in bulk (Chronos enqueueBulk, BullMQ Queue.addBulk), batches of 1,000;
// - delayed: the same N tasks with a delay of 1 h (scheduled, not yet due);
// - dead: D + 20 % tasks whose handler throws an error with a 2 KB stack (Chronos maxRetry 0, the
//   documented dead-letter cap deadMaxCount; BullMQ attempts 1, removeOnFail false, no cap).
// Bytes per task = used_memory after − before (both read with the library's connection closed), ÷ the
// tasks Redis holds at the end. MEMORY USAGE (SAMPLES 0) of the main keys is recorded for insight.
// The enqueue and the workers run in this (parent) process: nothing here is timed.
import { Redis } from 'ioredis';
import { BULL_QUEUE, TASK_TYPE, bullConnection, payload } from '../lib/common.js';
import { BenchServers } from '../lib/cluster.js';
import { sleep } from '../lib/time.js';
import { fmt, fmtInt, pick, type Ctx, type RunRecord, type WorkloadResult } from './common.js';

const CONTENDERS = ['chronos', 'bullmq'];
const NS = 'mem';
const DELAY_MS = 3_600_000;
const BATCH = 1_000;

type Form = 'pending' | 'delayed' | 'dead';
const QUIET = { log: () => {}, warn: () => {}, error: () => {} };

/** An error whose stack is 2 KB (a message line and ~2,000 characters of frames): the same for both libraries. */
function bigError(): Error {
  const err = new Error('boom: the handler failed');
  const frames: string[] = [];
  for (let i = 0; frames.join('\n').length < 2000; i++)
    frames.push(`    at handler${i} (file:///app/dist/jobs/email-${i}.js:${10 + i}:${5 + i})`);
  err.stack = `Error: ${err.message}\n${frames.join('\n').slice(0, 2000)}`;
  return err;
}

async function usedMemory(admin: Redis): Promise<{ used: number; dataset: number }> {
  const info = await admin.info('memory');
  const num = (k: string) => Number(new RegExp(`^${k}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN);
  return { used: num('used_memory'), dataset: num('used_memory_dataset') };
}

async function memoryUsage(admin: Redis, keys: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = Number((await admin.call('MEMORY', 'USAGE', k, 'SAMPLES', '0')) ?? 0);
  return out;
}

/** Waits until the clients this process opened are gone from Redis (their buffers are not the tasks'). */
async function settle(admin: Redis): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const clients = Number(/^connected_clients:(\d+)/m.exec(await admin.info('clients'))?.[1] ?? 0);
    if (clients <= 1) return;
    await sleep(10);
  }
}

interface Measured {
  /** Tasks Redis holds at the end (what the bytes are divided by). */
  held: number;
  /** Tasks put in (more than held when the dead-letter cap trimmed). */
  put: number;
  keys: Record<string, number>;
}

async function chronosRun(url: string, form: Form, n: number, deadCap: number): Promise<Measured> {
  const { QueueClient, ChronosServer, QueueKeys } = await import('../../lib/core/internal.js');
  const k = new QueueKeys(NS, 'default');
  const admin = new Redis(url);
  try {
    const client = new QueueClient({ connection: url, namespace: NS });
    const options = form === 'delayed' ? { delay: DELAY_MS } : form === 'dead' ? { maxRetry: 0 } : undefined;
    for (let i = 0; i < n; i += BATCH) {
      const batch = [];
      for (let j = i; j < Math.min(n, i + BATCH); j++) batch.push({ type: TASK_TYPE, payload: payload(j), options });
      await client.enqueueBulk(batch);
    }
    await client.close();
    if (form === 'dead') {
      const server = new ChronosServer({ connection: url, namespace: NS, concurrency: 50, deadMaxCount: deadCap, logger: QUIET });
      const err = bigError();
      let dead = 0;
      let allDead!: () => void;
      const done = new Promise<void>((r) => (allDead = r));
      server.events.subscribe((e) => {
        if (e.type === 'task.dead' && ++dead === n) allDead();
      });
      server.handle(TASK_TYPE, () => {
        throw err;
      });
      await server.start();
      await done;
      await server.shutdown();
    }
    const keys = form === 'pending' ? [k.stream] : form === 'delayed' ? [k.scheduled, k.tasks] : [k.stream, k.dead, k.deadTasks];
    const held =
      form === 'pending' ? await admin.xlen(k.stream) : form === 'delayed' ? await admin.zcard(k.scheduled) : await admin.zcard(k.dead);
    if (form === 'dead' && (await admin.hlen(k.deadTasks)) !== held) throw new Error('dead-tasks and dead disagree');
    return { held, put: n, keys: await memoryUsage(admin, keys) };
  } finally {
    admin.disconnect();
  }
}

async function bullRun(url: string, form: Form, n: number): Promise<Measured> {
  const { Queue, Worker } = await import('bullmq');
  const prefix = NS;
  const admin = new Redis(url);
  try {
    const queue = new Queue(BULL_QUEUE, { connection: bullConnection(url), prefix, defaultJobOptions: { removeOnComplete: true } });
    const opts = form === 'delayed' ? { delay: DELAY_MS } : form === 'dead' ? { attempts: 1, removeOnFail: false } : undefined;
    for (let i = 0; i < n; i += BATCH) {
      const jobs = [];
      for (let j = i; j < Math.min(n, i + BATCH); j++) jobs.push({ name: TASK_TYPE, data: payload(j), opts });
      await queue.addBulk(jobs);
    }
    await queue.close();
    if (form === 'dead') {
      const err = bigError();
      let failed = 0;
      let allFailed!: () => void;
      const done = new Promise<void>((r) => (allFailed = r));
      const worker = new Worker(
        BULL_QUEUE,
        async () => {
          throw err;
        },
        { connection: bullConnection(url), prefix, concurrency: 50, autorun: false },
      );
      worker.on('failed', () => {
        if (++failed === n) allFailed();
      });
      void worker.run();
      await done;
      await worker.close();
    }
    const base = `${prefix}:${BULL_QUEUE}`;
    const set = form === 'pending' ? `${base}:wait` : form === 'delayed' ? `${base}:delayed` : `${base}:failed`;
    const held = form === 'pending' ? await admin.llen(set) : await admin.zcard(set);
    const first = form === 'pending' ? await admin.lindex(set, 0) : (await admin.zrange(set, 0, 0))[0];
    const keys = await memoryUsage(admin, [set, `${base}:events`, `${base}:${first}`]);
    return { held, put: n, keys };
  } finally {
    admin.disconnect();
  }
}

/** One measurement on a fresh private Redis: bytes of used_memory (and of the dataset) per task held. */
async function measure(lib: string, form: Form, n: number, deadCap: number): Promise<Measured & { bytes: number; dataset: number }> {
  const servers = await BenchServers.standalone();
  try {
    const url = servers.connection as string;
    const admin = servers.nodes[0].admin;
    const before = await usedMemory(admin);
    const m = lib === 'chronos' ? await chronosRun(url, form, n, deadCap) : await bullRun(url, form, n);
    await settle(admin);
    const after = await usedMemory(admin);
    return { ...m, bytes: (after.used - before.used) / m.held, dataset: (after.dataset - before.dataset) / m.held };
  } finally {
    await servers.close();
  }
}

export async function memoryWorkload(ctx: Ctx): Promise<WorkloadResult> {
  const id = 'w9';
  const n = ctx.quick ? 5_000 : 100_000;
  const deadCap = ctx.quick ? 1_000 : 10_000; // full: the documented default deadMaxCount
  const deadPut = Math.round(deadCap * 1.2);
  const runs: RunRecord[] = [];
  const contenders = pick(ctx, CONTENDERS);
  const insight: Record<string, unknown>[] = [];
  for (let round = 1; round <= ctx.rounds; round++) {
    const line: string[] = [];
    for (const lib of contenders) {
      const metrics: Record<string, number> = {};
      for (const form of ['pending', 'delayed', 'dead'] as const) {
        // BullMQ has no dead-letter cap: it is given the number Chronos keeps
        const put = form === 'dead' ? (lib === 'chronos' ? deadPut : deadCap) : n;
        const m = await measure(lib, form, put, deadCap);
        metrics[`${form}B`] = m.bytes;
        metrics[`${form}DatasetB`] = m.dataset;
        metrics[`${form}Held`] = m.held;
        insight.push({ round, lib, form, put: m.put, held: m.held, memoryUsage: m.keys });
      }
      if (lib === 'chronos' && metrics.deadHeld !== deadCap)
        throw new Error(`dead-letter cap ${deadCap} did not hold: ${metrics.deadHeld} dead`);
      runs.push({ round, contender: lib, metrics });
      line.push(`${lib} ${fmt(metrics.pendingB, 1)} / ${fmt(metrics.delayedB, 1)} / ${fmt(metrics.deadB, 0)} B`);
    }
    ctx.log(`  ${id} round ${round}/${ctx.rounds} (pending / delayed / dead, bytes per task): ${line.join('  ')}`);
  }
  return {
    id,
    title: `9. Redis memory per task: ${fmtInt(n)} pending, ${fmtInt(n)} delayed, ${fmtInt(deadCap)} dead with a 2 KB stack`,
    params: { tasks: n, delayMs: DELAY_MS, deadCap, deadPutChronos: deadPut, deadPutBullmq: deadCap, stackBytes: 2000, insight },
    settings: {
      chronos: `enqueueBulk (batches of ${BATCH}); delayed: { delay: 1 h }; dead: maxRetry 0, ChronosServer { concurrency: 50, deadMaxCount: ${deadCap} }, ${fmtInt(deadPut)} tasks put in`,
      bullmq: `Queue.addBulk (batches of ${BATCH}), removeOnComplete; delayed: { delay: 1 h }; dead: { attempts: 1, removeOnFail: false }, Worker { concurrency: 50 }, ${fmtInt(deadCap)} jobs (no cap)`,
    },
    contenders,
    runs,
    rows: [
      {
        label: `pending: used_memory per task`,
        metric: 'pendingB',
        unit: 'B',
        higherIsBetter: false,
        a: 'chronos',
        b: 'bullmq',
        decimals: 1,
      },
      {
        label: `delayed (1 h): used_memory per task`,
        metric: 'delayedB',
        unit: 'B',
        higherIsBetter: false,
        a: 'chronos',
        b: 'bullmq',
        decimals: 1,
      },
      {
        label: `dead, 2 KB stack: used_memory per task`,
        metric: 'deadB',
        unit: 'B',
        higherIsBetter: false,
        a: 'chronos',
        b: 'bullmq',
        decimals: 0,
      },
    ],
    notes: [
      `Each figure is one fresh private redis-server: (used_memory after − before) ÷ tasks held; Chronos dead: ${fmtInt(deadPut)} put in, the cap keeps ${fmtInt(deadCap)}.`,
    ],
  };
}
