// Workload 4: end-to-end latency (enqueue call → handler start) at a steady rate, producer and
// worker in two processes.
import { BenchChild } from '../lib/children.js';
import { latencySummary } from '../lib/stats.js';
import { fmt, fmtInt, prefixFor, type Ctx, type RunRecord, type WorkloadResult, pick } from './common.js';

const CONTENDERS = ['chronos', 'bullmq', 'limit'];
const CONCURRENCY = 10;

export async function latencyWorkload(ctx: Ctx): Promise<WorkloadResult> {
  const rate = 500;
  const seconds = ctx.quick ? 2 : 10;
  const warmup = ctx.quick ? 250 : 500; // tasks sent before the measured ones (1 s at 500/s)
  const total = warmup + rate * seconds;
  const runs: RunRecord[] = [];
  for (let round = 1; round <= ctx.rounds; round++) {
    const line: string[] = [];
    for (const lib of pick(ctx, CONTENDERS)) {
      const prefix = prefixFor(ctx, `w4-r${round}-${lib}`);
      const url = ctx.redis.url;
      const worker = await BenchChild.start(
        'processor',
        `w4-worker-${lib}-r${round}`,
        { lib, url, prefix, n: total, concurrency: CONCURRENCY, mode: 'latency' },
        { cpuProfDir: ctx.cpuProfDir },
      );
      let producer: BenchChild | undefined;
      try {
        producer = await BenchChild.start(
          'producer',
          `w4-producer-${lib}-r${round}`,
          { lib, url, prefix, rate, total },
          { cpuProfDir: ctx.cpuProfDir },
        );
        const s0 = await ctx.redis.snapshot();
        worker.send({ type: 'mark' });
        producer.send({ type: 'go' });
        const done = await producer.waitFor('done', (total / rate) * 1000 + 60_000);
        worker.send({ type: 'report' });
        const rep = await worker.waitFor('report', 15_000);
        const s1 = await ctx.redis.snapshot();
        const delta = ctx.redis.delta(s0, s1);
        const sends = new Map((done.sends as [number, number][]).map(([n, t]) => [n, t]));
        const lat: number[] = [];
        let missing = 0;
        const startsByN = new Map((rep.starts as [number, number][]).map(([n, t]) => [n, t]));
        for (let n = warmup; n < total; n++) {
          const s = startsByN.get(n);
          if (s === undefined) missing++;
          else lat.push(s - sends.get(n)!);
        }
        const l = latencySummary(lat);
        const metrics = {
          p50: l.p50,
          p95: l.p95,
          p99: l.p99,
          max: l.max,
          missing,
          cmdsPerTask: delta.commands / total,
          redisUsPerTask: delta.cpuUs / total,
          nodeUsPerTask: ((done.cpuUs as number) + (rep.cpuUs as number)) / total,
          enqueueErrors: done.errors as number,
        };
        runs.push({ round, contender: lib, metrics, byCommand: delta.byCommand, units: total });
        line.push(`${lib} p50 ${fmt(l.p50)} p99 ${fmt(l.p99)} ms${missing ? ` (${missing} missing)` : ''}`);
      } finally {
        await producer?.stop();
        await worker.stop();
        await ctx.redis.clean(prefix);
      }
    }
    ctx.log(`  w4 round ${round}/${ctx.rounds}: ${line.join('  ')}`);
  }
  return {
    id: 'w4',
    title: `4. latency enqueue → handler start at ${rate}/s for ${seconds} s`,
    params: { rate, seconds, warmupTasks: warmup, measuredTasks: total - warmup, workerConcurrency: CONCURRENCY },
    settings: {
      chronos: `producer ChronosClient.enqueue (open loop); worker ChronosServer { concurrency: ${CONCURRENCY} }, other options default`,
      bullmq: `producer Queue.add (removeOnComplete: true, open loop); Worker { concurrency: ${CONCURRENCY} }, other options default`,
      limit: `producer bare XADD (open loop); consumer XREADGROUP COUNT ${CONCURRENCY} BLOCK, XACK + XDEL pipelined with the next read`,
    },
    contenders: pick(ctx, CONTENDERS),
    runs,
    rows: [
      { label: `latency at ${rate}/s, p50`, metric: 'p50', unit: 'ms', higherIsBetter: false, a: 'chronos', b: 'bullmq', limit: 'limit' },
      { label: `latency at ${rate}/s, p95`, metric: 'p95', unit: 'ms', higherIsBetter: false, a: 'chronos', b: 'bullmq', limit: 'limit' },
      { label: `latency at ${rate}/s, p99`, metric: 'p99', unit: 'ms', higherIsBetter: false, a: 'chronos', b: 'bullmq', limit: 'limit' },
    ],
    cost: { per: 'task', contenders: pick(ctx, CONTENDERS) },
    notes: [
      `${fmtInt(warmup)} warm-up tasks at the same rate precede the measured ones; times are taken with performance.timeOrigin + now() in both processes.`,
    ],
  };
}
