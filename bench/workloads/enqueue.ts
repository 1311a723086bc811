// Workloads 1 and 2: enqueue N tasks one at a time (each awaited) or in bulk batches of 1,000.
import { fmt, fmtInt, measureChild, prefixFor, type Ctx, type RunRecord, type WorkloadResult, pick, roundRatio } from './common.js';

const CONTENDERS = ['chronos', 'bullmq', 'limit', 'limit-xadd'];

export async function enqueueWorkload(ctx: Ctx, kind: 'awaited' | 'bulk'): Promise<WorkloadResult> {
  const id = kind === 'awaited' ? 'w1' : 'w2';
  const n = ctx.quick ? (kind === 'awaited' ? 2_000 : 5_000) : 20_000;
  const batch = kind === 'bulk' ? 1_000 : 0;
  const runs: RunRecord[] = [];
  for (let round = 1; round <= ctx.rounds; round++) {
    const line: string[] = [];
    for (const lib of pick(ctx, CONTENDERS)) {
      const prefix = prefixFor(ctx, `${id}-r${round}-${lib}`);
      const { done, delta } = await measureChild(
        ctx,
        'enqueuer',
        `${id}-${lib}-r${round}`,
        { lib, url: ctx.redis.url, prefix, n, batch },
        120_000 + n * 5,
      );
      await ctx.redis.clean(prefix);
      const ms = done.ms as number;
      const metrics = {
        rate: n / (ms / 1000),
        cmdsPerTask: delta.commands / n,
        redisUsPerTask: delta.cpuUs / n,
        nodeUsPerTask: (done.cpuUs as number) / n,
      };
      runs.push({ round, contender: lib, metrics, byCommand: delta.byCommand, units: n });
      line.push(`${lib} ${fmtInt(metrics.rate)}/s (${fmt(metrics.cmdsPerTask)} cmd/task)`);
    }
    ctx.log(`  ${id} round ${round}/${ctx.rounds}: ${line.join('  ')}${roundRatio(runs, round, 'rate')}`);
  }
  const what =
    kind === 'awaited' ? `enqueue ${fmtInt(n)}, one at a time, awaited` : `enqueue ${fmtInt(n)} in bulk (batches of ${fmtInt(batch)})`;
  return {
    id,
    title: `${id === 'w1' ? '1' : '2'}. ${what}`,
    params: { tasks: n, batch },
    settings: {
      chronos: kind === 'awaited' ? 'ChronosClient.enqueue(type, payload) — defaults' : 'ChronosClient.enqueueBulk(1,000 tasks) — defaults',
      bullmq:
        kind === 'awaited'
          ? 'Queue.add(name, data), defaultJobOptions { removeOnComplete: true }'
          : 'Queue.addBulk(1,000 jobs), defaultJobOptions { removeOnComplete: true }',
      limit:
        kind === 'awaited'
          ? 'ioredis: EVALSHA of a one-XADD Lua script, awaited'
          : 'ioredis: EVALSHA of a one-XADD Lua script, pipelined 1,000 per exec',
      'limit-xadd': kind === 'awaited' ? 'ioredis: bare XADD, awaited' : 'ioredis: bare XADD, pipelined 1,000 per exec',
    },
    contenders: pick(ctx, CONTENDERS),
    runs,
    rows: [
      { label: what, metric: 'rate', unit: 'tasks/s', higherIsBetter: true, a: 'chronos', b: 'bullmq', limit: 'limit', decimals: 0 },
      {
        label: `  same, limit = bare XADD`,
        metric: 'rate',
        unit: 'tasks/s',
        higherIsBetter: true,
        a: 'chronos',
        b: 'bullmq',
        limit: 'limit-xadd',
        decimals: 0,
      },
    ].filter((r) => ctx.contenders === undefined || ctx.contenders.includes(r.limit)),
    cost: { per: 'task', contenders: pick(ctx, CONTENDERS) },
  };
}
