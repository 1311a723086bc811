// Workload 11: one worker serving many queues (issue 15 target 6).
// a) idle: one worker on Q ∈ {1, 10, 100} queues, nothing enqueued → Redis commands/s (by command) and
//    Redis CPU %. Chronos with default options, Chronos with recovery switched off (its share, measured
//    apart), BullMQ with one Worker per queue in one process (its model).
// b) latency: 100 queues, tasks at a steady rate spread round-robin over them (every 10th one delayed,
//    so the forward path runs) → enqueue → handler start p50/p99, and the delayed tasks' start − due.
// c) backlog: 100 backlogged queues, equal weights and weights 1:2:3 (cycled) → each queue's share of
//    the first 10,000 tasks against its weight (max relative error), and the index of the task at which
//    each queue was first served (max), commands per task.
import { QueueClient } from '../../lib/core/index.js';
import { BenchChild } from '../lib/children.js';
import { TASK_TYPE, payload } from '../lib/common.js';
import { latencySummary } from '../lib/stats.js';
import { nowMs, sleep, sleepUntil } from '../lib/time.js';
import { fmt, pick, prefixFor, type Ctx, type RunRecord, type WorkloadResult } from './common.js';

const SIZES = [1, 10, 100];
const IDLE_CONTENDERS = ['chronos', 'chronos-norecover', 'bullmq'];
const CONCURRENCY = 10;
const BACKLOG_QUEUES = 100;
const BACKLOG_CONCURRENCY = 50;
const BACKLOG_TASKS = 10_000;
const BACKLOG_PER_QUEUE = 200;

const names = (q: number) => Array.from({ length: q }, (_, i) => `q${i}`);

export async function manyQueuesWorkload(ctx: Ctx): Promise<WorkloadResult> {
  const idleSec = ctx.quick ? 3 : 10;
  const rate = 20;
  const latSec = ctx.quick ? 3 : 10;
  const runs: RunRecord[] = [];
  const idleBreakdown: Record<string, Record<string, number>[]> = {};
  const contenders = pick(ctx, IDLE_CONTENDERS);
  for (let round = 1; round <= ctx.rounds; round++) {
    const m: Record<string, Record<string, number>> = Object.fromEntries(contenders.map((c) => [c, {}]));
    for (const size of SIZES) {
      for (const c of contenders) {
        const d = await idle(ctx, round, c, size, idleSec);
        m[c][`idleCmdsQ${size}`] = d.commands / (d.ms / 1000);
        m[c][`idleCpuQ${size}`] = (d.cpuUs / 1000 / d.ms) * 100;
        if (size === 100) (idleBreakdown[c] ??= []).push(perSecond(d.byCommand, d.ms));
      }
    }
    const line = contenders.map((c) => `${c} ${SIZES.map((s) => fmt(m[c][`idleCmdsQ${s}`], 1)).join('/')}`);
    ctx.log(`  w11 round ${round}/${ctx.rounds} idle cmd/s at Q=${SIZES.join('/')}: ${line.join('  ')}`);
    if (contenders.includes('chronos')) {
      Object.assign(m.chronos, await latency(ctx, round, rate, latSec));
      const eq = await backlog(ctx, round, 'equal', BACKLOG_QUEUES);
      const wt = await backlog(ctx, round, 'weighted', BACKLOG_QUEUES);
      Object.assign(m.chronos, prefixed('equal', eq.metrics), prefixed('weighted', wt.metrics));
      m.chronos.cmdsPerTask = eq.metrics.cmdsPerTask;
      m.chronos.redisUsPerTask = eq.metrics.redisUsPerTask;
      m.chronos.nodeUsPerTask = eq.metrics.nodeUsPerTask;
      runs.push({ round, contender: 'chronos', metrics: m.chronos, byCommand: eq.byCommand, units: BACKLOG_TASKS });
      const c = m.chronos;
      ctx.log(
        `  w11 round ${round}: latency p50 ${fmt(c.p50)} p99 ${fmt(c.p99)} ms, delayed lag p99 ${fmt(c.delayedLagP99)} ms; ` +
          `equal: share err ${fmt(c.equalShareErrPct, 1)}%, first turn ≤ #${c.equalFirstTurnMax}; ` +
          `1:2:3: share err ${fmt(c.weightedShareErrPct, 1)}%, first turn ≤ #${c.weightedFirstTurnMax}; ${fmt(c.cmdsPerTask, 3)} cmd/task`,
      );
    }
    for (const c of contenders) if (c !== 'chronos') runs.push({ round, contender: c, metrics: m[c] });
  }
  const idleRow = (size: number) => ({
    label: `idle, ${size} queue${size > 1 ? 's' : ''}: Redis commands/s`,
    metric: `idleCmdsQ${size}`,
    unit: 'cmd/s',
    higherIsBetter: false,
    a: 'chronos',
    b: 'bullmq',
    decimals: 1,
  });
  const chronosRow = (label: string, metric: string, unit: string, decimals = 2) => ({
    label,
    metric,
    unit,
    higherIsBetter: false,
    a: 'chronos',
    decimals,
  });
  const notes = [
    'Idle windows start 1.5 s after the worker started (its start-up sweep and consumer-group creation are not in them).',
    `The latency part runs at ${rate} tasks/s (not the issue's 1 task/s) so that a p99 has enough samples in a short run; every 10th task is enqueued with delay 200 ms and its lag is start − (send + 200 ms).`,
    `Backlog: ${BACKLOG_PER_QUEUE} tasks per queue (queues filled interleaved), concurrency ${BACKLOG_CONCURRENCY}; the first ${BACKLOG_TASKS.toLocaleString('en-US')} handler starts are counted. Weighted: weights 1, 2, 3 cycled over the 100 queues. The first-turn bound of the issue is queues × batch = ${BACKLOG_QUEUES * BACKLOG_CONCURRENCY}; a queue not served at all in the window counts as #${BACKLOG_TASKS + 1}.`,
  ];
  for (const [c, rows] of Object.entries(idleBreakdown)) {
    notes.push(`Idle at 100 queues, ${c}, commands/s by command (round 1): ${fmtBreakdown(rows[0])}`);
  }
  return {
    id: 'w11',
    title: '11. many queues: idle cost, latency and fairness of one worker on 100 queues',
    params: {
      sizes: SIZES,
      idleSeconds: idleSec,
      concurrency: CONCURRENCY,
      latencyRate: rate,
      latencySeconds: latSec,
      backlogQueues: BACKLOG_QUEUES,
      backlogPerQueue: BACKLOG_PER_QUEUE,
      backlogTasks: BACKLOG_TASKS,
      backlogConcurrency: BACKLOG_CONCURRENCY,
    },
    settings: {
      chronos: `one ChronosServer { queues: q0..q<Q-1>, concurrency: ${CONCURRENCY} } (backlog: ${BACKLOG_CONCURRENCY}), other options default`,
      'chronos-norecover': 'the same with recoverInterval: 1 h (the recovery share of the idle cost is chronos − this)',
      bullmq: `one Worker { concurrency: ${CONCURRENCY} } per queue in one process, other options default`,
    },
    contenders,
    runs,
    rows: [
      ...SIZES.map(idleRow),
      { ...idleRow(100), label: 'idle, 100 queues, recovery off: Redis commands/s', a: 'chronos-norecover', b: undefined },
      { ...idleRow(100), label: 'idle, 100 queues: Redis CPU', metric: 'idleCpuQ100', unit: '%', decimals: 2 },
      chronosRow(`100 queues at ${rate}/s: enqueue → start p50`, 'p50', 'ms'),
      chronosRow(`100 queues at ${rate}/s: enqueue → start p99`, 'p99', 'ms'),
      chronosRow('100 queues: delayed task start − due, p99', 'delayedLagP99', 'ms'),
      chronosRow('100 backlogged, equal weights: max share error', 'equalShareErrPct', '%', 1),
      chronosRow('100 backlogged, equal weights: last first turn (task #)', 'equalFirstTurnMax', 'task', 0),
      chronosRow('100 backlogged, weights 1:2:3: max share error', 'weightedShareErrPct', '%', 1),
      chronosRow('100 backlogged, weights 1:2:3: last first turn (task #)', 'weightedFirstTurnMax', 'task', 0),
    ],
    cost: { per: 'task', contenders: contenders.includes('chronos') ? ['chronos'] : [] },
    notes,
  };
}

function prefixed(p: string, metrics: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(metrics))
    if (k.startsWith('share') || k.startsWith('first')) out[p + k[0].toUpperCase() + k.slice(1)] = v;
  return out;
}

function perSecond(byCommand: Record<string, number>, ms: number): Record<string, number> {
  return Object.fromEntries(Object.entries(byCommand).map(([k, v]) => [k, v / (ms / 1000)]));
}

function fmtBreakdown(r: Record<string, number>): string {
  return Object.entries(r)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${fmt(v, 1)}`)
    .join(', ');
}

async function idle(ctx: Ctx, round: number, contender: string, size: number, seconds: number) {
  const prefix = prefixFor(ctx, `w11-idle-r${round}-${contender}-${size}`);
  const lib = contender === 'bullmq' ? 'bullmq' : 'chronos';
  const child = await BenchChild.start(
    'many-queues',
    `w11-idle-${contender}-${size}-r${round}`,
    {
      lib,
      url: ctx.redis.url,
      prefix,
      queues: names(size),
      n: 0,
      concurrency: CONCURRENCY,
      mode: 'idle',
      recoverInterval: contender === 'chronos-norecover' ? 3_600_000 : undefined,
    },
    { cpuProfDir: ctx.cpuProfDir },
  );
  try {
    const s0 = await ctx.redis.snapshot();
    await sleep(seconds * 1000);
    const s1 = await ctx.redis.snapshot();
    return ctx.redis.delta(s0, s1);
  } finally {
    await child.stop();
    await ctx.redis.clean(prefix);
  }
}

async function latency(ctx: Ctx, round: number, rate: number, seconds: number): Promise<Record<string, number>> {
  const prefix = prefixFor(ctx, `w11-lat-r${round}`);
  const total = rate * seconds;
  const queues = names(100);
  const worker = await BenchChild.start(
    'many-queues',
    `w11-latency-r${round}`,
    { lib: 'chronos', url: ctx.redis.url, prefix, queues, n: total, concurrency: CONCURRENCY, mode: 'latency' },
    { cpuProfDir: ctx.cpuProfDir },
  );
  const client = new QueueClient({ connection: ctx.redis.url, namespace: prefix, tracing: false });
  try {
    for (const queue of queues) await client.enqueue(TASK_TYPE, payload(-1), { queue, delay: 3_600_000 }); // known queues, a delayed task each
    const delayed = (n: number) => n % 10 === 9;
    const sends = new Float64Array(total);
    const t0 = nowMs() + 50;
    for (let n = 0; n < total; n++) {
      await sleepUntil(t0 + (n * 1000) / rate);
      sends[n] = nowMs();
      await client.enqueue(TASK_TYPE, payload(n), { queue: queues[n % queues.length], ...(delayed(n) ? { delay: 200 } : {}) });
    }
    worker.send({ type: 'report' });
    const rep = await worker.waitFor('report', 15_000);
    const lat: number[] = [];
    const lag: number[] = [];
    let missing = 0;
    const startsByN = new Map((rep.starts as [number, number][]).map(([n, t]) => [n, t]));
    for (let n = 0; n < total; n++) {
      const s = startsByN.get(n);
      if (s === undefined) missing++;
      else if (delayed(n)) lag.push(s - sends[n] - 200);
      else lat.push(s - sends[n]);
    }
    const l = latencySummary(lat);
    const g = latencySummary(lag);
    return { p50: l.p50, p99: l.p99, max: l.max, delayedLagP50: g.p50, delayedLagP99: g.p99, missing };
  } finally {
    await client.close();
    await worker.stop();
    await ctx.redis.clean(prefix);
  }
}

async function backlog(ctx: Ctx, round: number, kind: 'equal' | 'weighted', size: number) {
  const prefix = prefixFor(ctx, `w11-${kind}-r${round}`);
  const queues = names(size);
  const weights = queues.map((_, i) => (kind === 'equal' ? 1 : 1 + (i % 3)));
  const client = new QueueClient({ connection: ctx.redis.url, namespace: prefix, tracing: false });
  try {
    for (let k = 0; k < BACKLOG_PER_QUEUE; k += 10) {
      const batch = [];
      for (let j = k; j < k + 10; j++) for (const queue of queues) batch.push({ type: TASK_TYPE, payload: payload(j), options: { queue } });
      await client.enqueueBulk(batch);
    }
  } finally {
    await client.close();
  }
  const child = await BenchChild.start(
    'many-queues',
    `w11-${kind}-r${round}`,
    { lib: 'chronos', url: ctx.redis.url, prefix, queues, weights, n: BACKLOG_TASKS, concurrency: BACKLOG_CONCURRENCY, mode: 'backlog' },
    { cpuProfDir: ctx.cpuProfDir },
  );
  try {
    const s0 = await ctx.redis.snapshot();
    child.send({ type: 'go' });
    const done = await child.waitFor('done', 120_000);
    const s1 = await ctx.redis.snapshot();
    const delta = ctx.redis.delta(s0, s1);
    const order = done.order as number[];
    const counts = new Array<number>(size).fill(0);
    const first = new Array<number>(size).fill(Infinity);
    order.forEach((q, i) => {
      counts[q]++;
      if (first[q] === Infinity) first[q] = i + 1;
    });
    for (let q = 0; q < size; q++) if (first[q] === Infinity) first[q] = order.length + 1; // never served in the window
    const total = weights.reduce((a, b) => a + b, 0);
    const err = Math.max(...counts.map((c, i) => Math.abs(c / ((order.length * weights[i]) / total) - 1)));
    return {
      metrics: {
        shareErrPct: err * 100,
        firstTurnMax: Math.max(...first),
        cmdsPerTask: delta.commands / BACKLOG_TASKS,
        redisUsPerTask: delta.cpuUs / BACKLOG_TASKS,
        nodeUsPerTask: (done.cpuUs as number) / BACKLOG_TASKS,
      },
      byCommand: delta.byCommand,
    };
  } finally {
    await child.stop();
    await ctx.redis.clean(prefix);
  }
}
