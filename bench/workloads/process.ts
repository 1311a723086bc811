// Workload 3: process N pre-enqueued tasks with one worker process at concurrency 1, 10, 50.
import { LIMIT_GROUP, TASK_TYPE, limitKeys, payload } from '../lib/common.js';
import { nowMs } from '../lib/time.js';
import { fill, fmt, fmtInt, measureChild, prefixFor, type Ctx, type RunRecord, type WorkloadResult, pick, roundRatio } from './common.js';

const CONTENDERS = ['chronos', 'bullmq', 'limit'];

export async function processWorkload(ctx: Ctx, concurrency: number): Promise<WorkloadResult> {
  const id = `w3-c${concurrency}`;
  const n = ctx.quick ? 1_000 : 20_000;
  const runs: RunRecord[] = [];
  const contenders = pick(ctx, concurrency === 50 ? [...CONTENDERS, 'limit-cycle'] : CONTENDERS);
  for (let round = 1; round <= ctx.rounds; round++) {
    const line: string[] = [];
    for (const lib of contenders) {
      const prefix = prefixFor(ctx, `${id}-r${round}-${lib}`);
      let ms: number;
      let cpuUs: number;
      let delta;
      if (lib === 'limit-cycle') {
        ({ ms, cpuUs, delta } = await cycle(ctx, prefix, n, concurrency));
      } else {
        await fill(ctx, lib, prefix, n);
        const r = await measureChild(
          ctx,
          'processor',
          `${id}-${lib}-r${round}`,
          { lib, url: ctx.redis.url, prefix, n, concurrency, mode: 'drain' },
          120_000 + n * 10,
        );
        ms = r.done.ms as number;
        cpuUs = r.done.cpuUs as number;
        delta = r.delta;
      }
      await ctx.redis.clean(prefix);
      const metrics = { rate: n / (ms / 1000), cmdsPerTask: delta.commands / n, redisUsPerTask: delta.cpuUs / n, nodeUsPerTask: cpuUs / n };
      runs.push({ round, contender: lib, metrics, byCommand: delta.byCommand, units: n });
      line.push(`${lib} ${fmtInt(metrics.rate)}/s (${fmt(metrics.cmdsPerTask)} cmd/task)`);
    }
    ctx.log(`  ${id} round ${round}/${ctx.rounds}: ${line.join('  ')}${roundRatio(runs, round, 'rate')}`);
  }
  const what = `process ${fmtInt(n)} pre-enqueued, concurrency ${concurrency}`;
  const settings: Record<string, unknown> = {
    chronos: `ChronosServer { concurrency: ${concurrency} } — other options default; no-op handler`,
    bullmq: `Worker { concurrency: ${concurrency} } — other options default; jobs added with removeOnComplete: true; no-op processor`,
    limit: `ioredis: XREADGROUP COUNT ${concurrency}, then XACK + XDEL of the batch pipelined with the next read; JSON.parse of each payload`,
  };
  if (concurrency === 50)
    settings['limit-cycle'] =
      'ioredis: per 50 tasks, one pipeline of 50 XADD + XREADGROUP COUNT 50, then XACK + XDEL pipelined with the next batch (add+read+ack cycle)';
  return {
    id,
    title: `3. ${what}`,
    params: { tasks: n, concurrency },
    settings,
    contenders,
    runs,
    rows: [
      { label: what, metric: 'rate', unit: 'tasks/s', higherIsBetter: true, a: 'chronos', b: 'bullmq', limit: 'limit', decimals: 0 },
      ...(contenders.includes('limit-cycle')
        ? [
            {
              label: '  same, limit = add+read+ack cycle',
              metric: 'rate',
              unit: 'tasks/s',
              higherIsBetter: true,
              a: 'chronos',
              b: 'bullmq',
              limit: 'limit-cycle',
              decimals: 0,
            },
          ]
        : []),
    ],
    cost: { per: 'task', contenders },
    notes:
      concurrency === 50
        ? ['limit-cycle: the issue\'s "add+read+ack cycle" (adds included in its time, so not the same work as the other columns).']
        : undefined,
  };
}

/** The add+read+ack cycle, pipelined, in the parent (no handler process): what Redis allows per task. */
async function cycle(
  ctx: Ctx,
  prefix: string,
  n: number,
  batch: number,
): Promise<{ ms: number; cpuUs: number; delta: ReturnType<Ctx['redis']['delta']> }> {
  const { Redis } = await import('ioredis');
  const r = new Redis(ctx.redis.url);
  const { stream } = limitKeys(prefix);
  await r.xgroup('CREATE', stream, LIMIT_GROUP, '$', 'MKSTREAM');
  const s0 = await ctx.redis.snapshot();
  const cpu0 = process.cpuUsage();
  const t0 = nowMs();
  let ids: string[] = [];
  let added = 0;
  let done = 0;
  while (done < n) {
    const p = r.pipeline();
    if (ids.length) {
      p.xack(stream, LIMIT_GROUP, ...ids);
      p.xdel(stream, ...ids);
    }
    const k = Math.min(batch, n - added);
    for (let i = 0; i < k; i++) p.xadd(stream, '*', 'type', TASK_TYPE, 'payload', JSON.stringify(payload(added + i)));
    added += k;
    p.call('XREADGROUP', 'GROUP', LIMIT_GROUP, 'c', 'COUNT', batch, 'STREAMS', stream, '>');
    const res = (await p.exec()) ?? [];
    done += ids.length;
    ids = [];
    const reply = res[res.length - 1][1] as [string, [string, string[]][]][] | null;
    for (const [, entries] of reply ?? [])
      for (const [id, fields] of entries) {
        ids.push(id);
        JSON.parse(fields[fields.indexOf('payload') + 1]);
      }
  }
  const ms = nowMs() - t0;
  const d = process.cpuUsage(cpu0);
  const s1 = await ctx.redis.snapshot();
  r.disconnect();
  return { ms, cpuUs: d.user + d.system, delta: ctx.redis.delta(s0, s1) };
}
