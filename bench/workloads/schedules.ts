// Workload 5: N schedules firing every second; a steady window of W seconds is measured.
import { BenchChild } from '../lib/children.js';
import { latencySummary } from '../lib/stats.js';
import { nowMs, sleep, sleepUntil } from '../lib/time.js';
import { fmt, fmtInt, prefixFor, type Ctx, type RunRecord, type WorkloadResult, pick } from './common.js';

export async function schedulesWorkload(ctx: Ctx): Promise<WorkloadResult> {
  const schedules = ctx.knobs['w5-schedules'] ?? (ctx.quick ? 200 : 1_000);
  const CONCURRENCY = ctx.knobs['w5-concurrency'] ?? 50;
  const windowMs = ctx.quick ? 2_000 : 20_000; // whole seconds
  const warmupMs = ctx.quick ? 1_500 : 3_000;
  const contenders = pick(ctx, ctx.quick ? ['chronos', 'bullmq', 'limit'] : ['chronos', 'bullmq', 'bullmq-aligned', 'limit']);
  const runs: RunRecord[] = [];
  for (let round = 1; round <= ctx.rounds; round++) {
    const line: string[] = [];
    for (const lib of contenders) {
      const prefix = prefixFor(ctx, `w5-r${round}-${lib}`);
      const base = { url: ctx.redis.url, prefix, schedules, concurrency: CONCURRENCY };
      const opts = { cpuProfDir: ctx.cpuProfDir, readyTimeoutMs: 60_000 };
      const children: { role: string; child: BenchChild }[] = [];
      try {
        const start = async (role: string, extra: Record<string, unknown> = {}) => {
          children.push({ role, child: await BenchChild.start('fire-node', `w5-${role}-r${round}`, { ...base, role, ...extra }, opts) });
        };
        if (lib === 'chronos') {
          await start('chronos-worker');
          await start('chronos-scheduler');
        } else if (lib === 'bullmq' || lib === 'bullmq-aligned') {
          await start('bullmq-worker', { aligned: lib === 'bullmq-aligned' });
        } else {
          await start('limit-worker');
          await start('limit-leader');
        }
        await sleep(warmupMs);
        // whole seconds from a half-second instant: every aligned burst falls wholly inside or outside the window
        await sleepUntil(Math.ceil((nowMs() - 500) / 1000) * 1000 + 500);
        const s0 = await ctx.redis.snapshot();
        for (const c of children) c.child.send({ type: 'mark' });
        await sleep(windowMs);
        const s1 = await ctx.redis.snapshot();
        for (const c of children) c.child.send({ type: 'end' });
        const stats = await Promise.all(children.map(async (c) => ({ role: c.role, s: await c.child.waitFor('stats', 30_000) })));
        const delta = ctx.redis.delta(s0, s1);
        const worker = stats.find((x) => x.role.endsWith('worker'))!.s;
        const sched = stats.find((x) => !x.role.endsWith('worker'))?.s;
        const fires = worker.starts as number;
        const lag = latencySummary(worker.lags as number[]);
        const enq = latencySummary(worker.enqLags as number[]);
        const nodeUs = stats.reduce((a, x) => a + (x.s.cpuUs as number), 0);
        const metrics: Record<string, number> = {
          firesPerSec: fires / (windowMs / 1000),
          cmdsPerFire: delta.commands / fires,
          redisCpuPct: (delta.cpuUs / (windowMs * 1000)) * 100,
          redisUsPerFire: delta.cpuUs / fires,
          nodeCpuPct: (nodeUs / (windowMs * 1000)) * 100,
          nodeUsPerFire: nodeUs / fires,
          workerCpuPct: ((worker.cpuUs as number) / (windowMs * 1000)) * 100,
          lagP50: lag.p50,
          lagP95: lag.p95,
          lagP99: lag.p99,
          lagMax: lag.max,
        };
        if (sched) {
          metrics.schedulerCpuPct = ((sched.cpuUs as number) / (windowMs * 1000)) * 100;
          metrics.schedulerFires = sched.fires as number;
        }
        if (enq.n > 0) {
          metrics.enqueueLagP50 = enq.p50;
          metrics.enqueueLagP99 = enq.p99;
        }
        runs.push({ round, contender: lib, metrics, byCommand: delta.byCommand, units: fires });
        line.push(`${lib} ${fmtInt(metrics.firesPerSec)} fires/s ${fmt(metrics.cmdsPerFire)} cmd/fire lag p99 ${fmt(lag.p99, 1)} ms`);
      } finally {
        await Promise.all(children.map((c) => c.child.stop()));
        await ctx.redis.clean(prefix);
      }
    }
    ctx.log(`  w5 round ${round}/${ctx.rounds}: ${line.join('  ')}`);
  }
  const rows = [];
  const bulls = contenders.filter((c) => c.startsWith('bullmq'));
  for (const b of bulls.length ? bulls : [undefined]) {
    const tag = b === 'bullmq-aligned' ? ' [BullMQ aligned]' : '';
    rows.push(
      {
        label: `${fmtInt(schedules)} schedules/1 s: cmds per fire${tag}`,
        metric: 'cmdsPerFire',
        unit: 'cmd',
        higherIsBetter: false,
        a: 'chronos',
        b,
        limit: contenders.includes('limit') ? 'limit' : undefined,
      },
      {
        label: `${fmtInt(schedules)} schedules/1 s: fire lag p50${tag}`,
        metric: 'lagP50',
        unit: 'ms',
        higherIsBetter: false,
        a: 'chronos',
        b,
        limit: contenders.includes('limit') ? 'limit' : undefined,
        decimals: 1,
      },
      {
        label: `${fmtInt(schedules)} schedules/1 s: fire lag p99${tag}`,
        metric: 'lagP99',
        unit: 'ms',
        higherIsBetter: false,
        a: 'chronos',
        b,
        limit: contenders.includes('limit') ? 'limit' : undefined,
        decimals: 1,
      },
      {
        label: `${fmtInt(schedules)} schedules/1 s: Redis CPU${tag}`,
        metric: 'redisCpuPct',
        unit: '% core',
        higherIsBetter: false,
        a: 'chronos',
        b,
        limit: contenders.includes('limit') ? 'limit' : undefined,
        decimals: 1,
      },
      {
        label: `${fmtInt(schedules)} schedules/1 s: Node CPU${tag}`,
        metric: 'nodeCpuPct',
        unit: '% core',
        higherIsBetter: false,
        a: 'chronos',
        b,
        limit: contenders.includes('limit') ? 'limit' : undefined,
        decimals: 1,
      },
    );
  }
  return {
    id: 'w5',
    title: `5. ${fmtInt(schedules)} schedules firing every second, ${windowMs / 1000} s window`,
    params: { schedules, windowMs, warmupMs, workerConcurrency: CONCURRENCY },
    settings: {
      chronos: `one Scheduler process (${fmtInt(schedules)} × register({ spec: '@every 1s' }), leaderTtl default 5 s) + one ChronosServer process { concurrency: ${CONCURRENCY} }; all else default`,
      bullmq: `one Worker process { concurrency: ${CONCURRENCY} } that first upserts ${fmtInt(schedules)} job schedulers { every: 1000 } (template opts removeOnComplete: true); their phases are set by upsert time, so fires spread over part of each second`,
      'bullmq-aligned': `as bullmq but { pattern: '* * * * * *' }: every scheduler fires on the whole second, the same instants as Chronos`,
      limit: `a minimal leader process (at each whole second one script: per trigger SET NX PX dedup + XADD + HSET lastFired) + a worker process (XREADGROUP COUNT ${CONCURRENCY}, XACK + XDEL pipelined)`,
    },
    contenders,
    runs,
    rows,
    cost: { per: 'fire', contenders },
    notes: [
      'A fire = a handler started in the window. Commands per fire = every Redis command in the window (script-inner calls included, INFO of the harness excluded) ÷ fires: scheduler, worker, heartbeats, lease renewals, recovery and forwarding loops alike.',
      'Fire lag = handler start − trigger instant (Chronos task.triggerAt; BullMQ the millis in the job id repeat:<id>:<millis>; limit the tr field).',
    ],
  };
}
