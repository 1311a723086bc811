// Parent side: what every workload shares (context, result records, pre-filling a queue).
import { BenchChild } from '../lib/children.js';
import type { ChildMessage } from '../lib/protocol.js';
import type { BenchRedis, Delta } from '../lib/redis.js';
import { BULL_QUEUE, LIMIT_GROUP, TASK_TYPE, bullConnection, limitKeys, payload } from '../lib/common.js';

export interface Ctx {
  redis: BenchRedis;
  quick: boolean;
  rounds: number;
  runId: string;
  cpuProfDir?: string;
  /** Only these contenders (--contenders), e.g. for profiling one side. */
  contenders?: string[];
  /** Workload knobs from the command line (--w5-concurrency, --w5-schedules). */
  knobs: Record<string, number>;
  log(line: string): void;
}

/** The contenders of a workload that this run measures. */
export function pick(ctx: Ctx, all: string[]): string[] {
  return ctx.contenders ? all.filter((c) => ctx.contenders!.includes(c)) : all;
}

/** " C/B 2.05×" for a round's metric, or "" when one side did not run. */
export function roundRatio(runs: RunRecord[], round: number, metric: string): string {
  const c = runs.find((r) => r.round === round && r.contender === 'chronos')?.metrics[metric];
  const b = runs.find((r) => r.round === round && r.contender === 'bullmq')?.metrics[metric];
  return c !== undefined && b !== undefined ? `  C/B ${fmt(c / b)}×` : '';
}

/** One measured run of one contender in one round. */
export interface RunRecord {
  round: number;
  contender: string;
  metrics: Record<string, number>;
  /** Redis commands in the window by name (script-inner calls included), for the cost breakdown. */
  byCommand?: Record<string, number>;
  /** What the per-command counts are divided by (tasks or fires). */
  units?: number;
}

/** A row of the main table: one metric, Chronos vs BullMQ, and the limit. */
export interface RowSpec {
  label: string;
  metric: string;
  unit: string;
  higherIsBetter: boolean;
  a: string;
  b?: string;
  limit?: string;
  decimals?: number;
}

export interface WorkloadResult {
  id: string;
  title: string;
  params: Record<string, unknown>;
  /** Settings of each contender, as used. */
  settings: Record<string, unknown>;
  contenders: string[];
  runs: RunRecord[];
  rows: RowSpec[];
  /** Per-task cost metrics shown in the cost table, and what a "task" is here. */
  cost?: { per: string; contenders: string[] };
  notes?: string[];
  error?: string;
  seconds?: number;
}

export function prefixFor(ctx: Ctx, tag: string): string {
  return `bench-${ctx.runId}-${tag}`;
}

/**
 * Starts a child, takes a Redis snapshot, sends `go`, waits for `done`, takes the second snapshot.
 * The child is stopped afterwards whatever happens.
 */
export async function measureChild(
  ctx: Ctx,
  file: string,
  name: string,
  config: Record<string, unknown>,
  doneTimeoutMs: number,
): Promise<{ done: ChildMessage; delta: Delta }> {
  const child = await BenchChild.start(file, name, config, { cpuProfDir: ctx.cpuProfDir });
  try {
    const s0 = await ctx.redis.snapshot();
    child.send({ type: 'go' });
    const done = await child.waitFor('done', doneTimeoutMs);
    const s1 = await ctx.redis.snapshot();
    return { done, delta: ctx.redis.delta(s0, s1, (done.harness as Record<string, number>) ?? {}) };
  } finally {
    await child.stop();
  }
}

/** Puts `n` tasks in a contender's queue with its own bulk API (setup, not measured). */
export async function fill(ctx: Ctx, lib: string, prefix: string, n: number, first = 0): Promise<void> {
  const url = ctx.redis.url;
  if (lib === 'chronos') {
    const { QueueClient } = await import('../../lib/core/index.js');
    const client = new QueueClient({ connection: url, namespace: prefix });
    try {
      for (let i = first; i < first + n; i += 1000) {
        const batch = [];
        for (let j = i; j < Math.min(first + n, i + 1000); j++) batch.push({ type: TASK_TYPE, payload: payload(j) });
        await client.enqueueBulk(batch);
      }
    } finally {
      await client.close();
    }
  } else if (lib === 'bullmq') {
    const { Queue } = await import('bullmq');
    const queue = new Queue(BULL_QUEUE, { connection: bullConnection(url), prefix, defaultJobOptions: { removeOnComplete: true } });
    try {
      for (let i = first; i < first + n; i += 1000) {
        const jobs = [];
        for (let j = i; j < Math.min(first + n, i + 1000); j++) jobs.push({ name: TASK_TYPE, data: payload(j) });
        await queue.addBulk(jobs);
      }
    } finally {
      await queue.close();
    }
  } else {
    const r = ctx.redis.client;
    const { stream } = limitKeys(prefix);
    await r.xgroup('CREATE', stream, LIMIT_GROUP, '0', 'MKSTREAM');
    for (let i = first; i < first + n; i += 1000) {
      const p = r.pipeline();
      for (let j = i; j < Math.min(first + n, i + 1000); j++) p.xadd(stream, '*', 'type', TASK_TYPE, 'payload', JSON.stringify(payload(j)));
      await p.exec();
    }
  }
}

export function fmtInt(v: number): string {
  return Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—';
}

export function fmt(v: number, decimals = 2): string {
  if (!Number.isFinite(v)) return '—';
  return v.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}
