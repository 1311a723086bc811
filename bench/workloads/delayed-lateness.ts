// Workload 11-delayed: how late a delayed task starts when another process enqueued it (issue 22,
// target 2). One worker process (bench/children/many-queues.ts, mode 'latency') on Q ∈ {1, 100}
// queues; this process enqueues tasks with `delay` at a steady rate, round-robin over the queues, and
// each task's lateness is its handler start − (send + delay), on this machine's one clock. Every queue
// first gets a task due in 1 h (the queues are known, their due time is far): each delayed task then
// makes its queue due sooner. Chronos: `ChronosClient.enqueue(type, payload, { queue, delay })`;
// BullMQ: `Queue.add(name, data, { delay })`, one Queue per queue.
import { ChronosClient } from '../../lib/core/index.js';
import { BenchChild } from '../lib/children.js';
import { TASK_TYPE, bullConnection, payload } from '../lib/common.js';
import { latencySummary } from '../lib/stats.js';
import { nowMs, sleepUntil } from '../lib/time.js';
import { fmt, pick, prefixFor, type Ctx, type RunRecord, type WorkloadResult } from './common.js';

const SIZES = [1, 100];
const CONTENDERS = ['chronos', 'bullmq'];
const CONCURRENCY = 10;
/** Delays cycle through these (ms): some lower their queue's earliest due time, some do not. */
const DELAYS = [200, 350, 150, 500, 250];

interface Enqueuer {
  add(queue: string, n: number, delay: number): Promise<unknown>;
  close(): Promise<void>;
}

async function enqueuer(ctx: Ctx, lib: string, prefix: string, queues: string[]): Promise<Enqueuer> {
  if (lib === 'chronos') {
    const client = new ChronosClient({ connection: ctx.redis.url, namespace: prefix, tracing: false });
    return { add: (queue, n, delay) => client.enqueue(TASK_TYPE, payload(n), { queue, delay }), close: () => client.close() };
  }
  const { Queue } = await import('bullmq');
  const byName = new Map(queues.map((q) => [q, new Queue(q, { connection: bullConnection(ctx.redis.url), prefix })]));
  return {
    add: (queue, n, delay) => byName.get(queue)!.add(TASK_TYPE, payload(n), { delay, removeOnComplete: true }),
    close: async () => {
      await Promise.all([...byName.values()].map((q) => q.close()));
    },
  };
}

async function lateness(ctx: Ctx, round: number, lib: string, size: number, rate: number, seconds: number) {
  const prefix = prefixFor(ctx, `w11d-r${round}-${lib}-${size}`);
  const queues = Array.from({ length: size }, (_, i) => `q${i}`);
  const total = rate * seconds;
  const worker = await BenchChild.start(
    'many-queues',
    `w11-delayed-${lib}-${size}-r${round}`,
    { lib, url: ctx.redis.url, prefix, queues, n: total, concurrency: CONCURRENCY, mode: 'latency' },
    { cpuProfDir: ctx.cpuProfDir },
  );
  const e = await enqueuer(ctx, lib, prefix, queues);
  try {
    for (const queue of queues) await e.add(queue, -1, 3_600_000);
    const sends = new Float64Array(total);
    const t0 = nowMs() + 50;
    for (let n = 0; n < total; n++) {
      await sleepUntil(t0 + (n * 1000) / rate);
      sends[n] = nowMs();
      await e.add(queues[n % size], n, DELAYS[n % DELAYS.length]);
    }
    worker.send({ type: 'report' });
    const rep = await worker.waitFor('report', 15_000);
    const late: number[] = [];
    const startsByN = new Map((rep.starts as [number, number][]).map(([n, t]) => [n, t]));
    for (let n = 0; n < total; n++) {
      const s = startsByN.get(n);
      if (s !== undefined) late.push(s - sends[n] - DELAYS[n % DELAYS.length]);
    }
    const l = latencySummary(late);
    return { lateP50: l.p50, lateP99: l.p99, lateMax: l.max, missing: total - late.length };
  } finally {
    await e.close();
    await worker.stop();
    await ctx.redis.clean(prefix);
  }
}

export async function delayedLatenessWorkload(ctx: Ctx): Promise<WorkloadResult> {
  const rate = 20;
  const seconds = ctx.quick ? 4 : 15;
  const contenders = pick(ctx, CONTENDERS);
  const runs: RunRecord[] = [];
  for (let round = 1; round <= ctx.rounds; round++) {
    for (const c of contenders) {
      const metrics: Record<string, number> = {};
      for (const size of SIZES) {
        const r = await lateness(ctx, round, c, size, rate, seconds);
        for (const [k, v] of Object.entries(r)) metrics[`${k}Q${size}`] = v;
        ctx.log(
          `  w11-delayed round ${round} ${c} Q=${size}: start − due p50 ${fmt(r.lateP50)} p99 ${fmt(r.lateP99)} max ${fmt(r.lateMax)} ms` +
            (r.missing > 0 ? `, ${r.missing} not started` : ''),
        );
      }
      runs.push({ round, contender: c, metrics });
    }
  }
  const row = (size: number, p: 'P50' | 'P99') => ({
    label: `delayed task from another process, ${size} queue${size > 1 ? 's' : ''}: start − due ${p.toLowerCase()}`,
    metric: `late${p}Q${size}`,
    unit: 'ms',
    higherIsBetter: false,
    a: 'chronos',
    b: 'bullmq',
    decimals: 1,
  });
  return {
    id: 'w11-delayed',
    title: '11-delayed. delayed tasks enqueued by another process: start − due on 1 and 100 queues',
    params: { sizes: SIZES, rate, seconds, delays: DELAYS, concurrency: CONCURRENCY },
    settings: {
      chronos: `one ChronosServer { queues: q0..q<Q-1>, concurrency: ${CONCURRENCY} }, other options default; ChronosClient.enqueue with { delay }`,
      bullmq: `one Worker { concurrency: ${CONCURRENCY} } per queue in one process; Queue.add with { delay }`,
    },
    contenders,
    runs,
    rows: SIZES.flatMap((s) => [row(s, 'P50'), row(s, 'P99')]),
    notes: [
      `${rate} tasks/s for ${seconds} s, round-robin over the queues, delays cycling ${DELAYS.join(', ')} ms; every queue also holds a task due in 1 h.`,
      'Lateness = handler start (worker process) − (send + delay) (this process), one clock: it includes the enqueue round trip.',
    ],
  };
}
