// Workload 13 (issue 25, "schedules as data"), its bursts: N runtime schedules due at one instant, fired by one
// leader (bench/children/sd-leader.ts), alone (triggers enqueued per second) or with 3 worker processes
// (bench/children/sd-worker.ts: none early, each once, start − instant), and the same with a jitter (starts per
// bucket of jitter / 10 against the mean, as bench/experiments/jitter-spread.ts does in one process).
import { BenchChild } from '../lib/children.js';
import { burst } from '../lib/schedules-data.js';
import { latencySummary } from '../lib/stats.js';
import { nowMs, sleep } from '../lib/time.js';
import { fmt, fmtInt, prefixFor, type Ctx } from './common.js';

export const WORKERS = 3;
const WORKER_CONCURRENCY = 100;
const BUCKETS = 10;

/** Time from seeding to the instant, ms: the bulk add, the children's start and the leader's table load. */
function leadFor(n: number): number {
  return 2_000 + n * 0.18;
}

/** Adds the burst schedules from the parent (setup, not measured); returns their instant. */
async function seed(ctx: Ctx, prefix: string, n: number, jitter: number): Promise<number> {
  const instant = Math.ceil((nowMs() + leadFor(n)) / 1000) * 1000;
  const { Scheduler } = await import('../../lib/core/index.js');
  const s = new Scheduler({ connection: ctx.redis.url, namespace: prefix, eligible: false, logger: { log() {}, warn() {}, error() {} } });
  await s.start();
  try {
    const defs = Array.from({ length: n }, (_, i) => burst(i, instant, jitter));
    for (let i = 0; i < n; i += 10_000) await s.addSchedules(defs.slice(i, i + 10_000));
  } finally {
    await s.stop();
  }
  return instant;
}

function startLeader(ctx: Ctx, prefix: string, tag: string, instant: number, expect: number): Promise<BenchChild> {
  return BenchChild.start(
    'sd-leader',
    tag,
    { url: ctx.redis.url, prefix, instant, expect },
    { cpuProfDir: ctx.cpuProfDir, nodeArgs: ['--expose-gc'] },
  );
}

/**
 * One leader alone, N due at one instant: triggers enqueued per second (N ÷ first-to-last fire), the last fire
 * − the instant, and when its table was loaded (− the instant: negative = before, as it should be).
 */
export async function leaderBurst(ctx: Ctx, round: number, n: number): Promise<{ metrics: Record<string, number>; line: string }> {
  const prefix = prefixFor(ctx, `w13-r${round}-burst`);
  let leader: BenchChild | undefined;
  try {
    const instant = await seed(ctx, prefix, n, 0);
    leader = await startLeader(ctx, prefix, `w13-leader-burst-r${round}`, instant, n);
    const loaded = await leader.waitFor('loaded', 120_000);
    const b = await leader.waitFor('burst', Math.max(60_000, instant - nowMs() + 60_000));
    const first = b.first as number;
    const last = b.last as number;
    const metrics = {
      burstRate: n / ((last - first) / 1000),
      burstLastMs: last - instant,
      burstFirstMs: first - instant,
      burstLoadedMs: (loaded.t as number) - instant,
      burstLeaderLost: b.lost as number,
    };
    const line =
      `leader alone, ${fmtInt(n)} due at one instant: ${fmtInt(metrics.burstRate)} triggers/s ` +
      `(first ${fmtInt(metrics.burstFirstMs)} ms, last ${fmtInt(metrics.burstLastMs)} ms after the instant; table loaded ${fmtInt(metrics.burstLoadedMs)} ms; leadership lost ${metrics.burstLeaderLost}×)`;
    return { metrics, line };
  } finally {
    await leader?.stop();
    await ctx.redis.clean(prefix);
  }
}

interface Start {
  schedule: string;
  triggerAt: number;
  at: number;
}

/** Runs the leader and 3 workers over N burst schedules (with `jitter`), until every start is in or `waitMs` after the instant. */
async function withWorkers(
  ctx: Ctx,
  tag: string,
  n: number,
  jitter: number,
  waitMs: number,
): Promise<{ instant: number; starts: Start[]; last: number }> {
  const prefix = prefixFor(ctx, tag);
  const children: BenchChild[] = [];
  try {
    const instant = await seed(ctx, prefix, n, jitter);
    const counts = new Array<number>(WORKERS).fill(0);
    const workers = await Promise.all(
      Array.from({ length: WORKERS }, async (_, i) => {
        const w = await BenchChild.start(
          'sd-worker',
          `${tag}-w${i + 1}`,
          { url: ctx.redis.url, prefix, name: `w${i + 1}`, concurrency: WORKER_CONCURRENCY },
          { cpuProfDir: ctx.cpuProfDir },
        );
        children.push(w);
        w.listen((m) => {
          if (m.type === 'count') counts[i] = m.n as number;
        });
        return w;
      }),
    );
    const leader = await startLeader(ctx, prefix, `${tag}-leader`, instant, n);
    children.push(leader);
    const fired = leader.waitFor('burst', instant - nowMs() + waitMs).then(
      (m) => m.last as number,
      () => NaN,
    );
    const deadline = instant + waitMs;
    while (counts.reduce((a, b) => a + b, 0) < n && nowMs() < deadline) await sleep(250);
    await sleep(500); // a duplicate would show now
    const starts: Start[] = [];
    for (const w of workers) {
      w.send({ type: 'report' });
      for (;;) {
        const m = await w.waitFor('starts', 30_000);
        for (const [schedule, triggerAt, at] of m.part as [string, number, number][]) starts.push({ schedule, triggerAt, at });
        if (m.last) break;
      }
    }
    return { instant, starts, last: await Promise.race([fired, sleep(1000).then(() => NaN)]) };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await ctx.redis.clean(prefix);
  }
}

/** N due at one instant, 3 workers: early (before the instant), once / missing / duplicated, start − instant. */
export async function workersBurst(ctx: Ctx, round: number, n: number): Promise<{ metrics: Record<string, number>; line: string }> {
  const { instant, starts, last } = await withWorkers(ctx, `w13-r${round}-workers`, n, 0, ctx.quick ? 20_000 : 60_000);
  const of = starts.filter((s) => s.triggerAt === instant);
  const names = new Map<string, number>();
  for (const s of of) names.set(s.schedule, (names.get(s.schedule) ?? 0) + 1);
  const lag = latencySummary(of.map((s) => s.at - instant));
  const metrics = {
    wEarly: of.filter((s) => s.at < instant).length,
    wMissing: n - names.size,
    wDuplicated: [...names.values()].filter((c) => c > 1).length,
    wEnqueuedByMs: last - instant,
    wLagP50: lag.p50,
    wLagP99: lag.p99,
    wLagMax: lag.max,
    wOnceViolations: 0,
  };
  metrics.wOnceViolations = metrics.wEarly + metrics.wMissing + metrics.wDuplicated;
  const line =
    `${fmtInt(n)} due at one instant, ${WORKERS} workers (c=${WORKER_CONCURRENCY}): ${fmtInt(of.length)} started, ${metrics.wEarly} early, ` +
    `${metrics.wMissing} missing, ${metrics.wDuplicated} duplicated; all enqueued ${fmtInt(metrics.wEnqueuedByMs)} ms after the instant; ` +
    `start − instant p50 ${fmtInt(lag.p50)} ms, p99 ${fmtInt(lag.p99)} ms, max ${fmtInt(lag.max)} ms`;
  return { metrics, line };
}

/** K due at one instant with `jitter`, 3 workers: starts per bucket of jitter / 10 against the mean, early vs the shifted instant. */
export async function jitterBurst(
  ctx: Ctx,
  round: number,
  k: number,
  jitter: number,
): Promise<{ metrics: Record<string, number>; line: string }> {
  const { jitterShiftMs } = await import('../../lib/core/scheduler/schedule-bounds.js');
  const { instant, starts } = await withWorkers(ctx, `w13-r${round}-jitter`, k, jitter, jitter + (ctx.quick ? 10_000 : 30_000));
  const of = starts.filter((s) => s.triggerAt === instant);
  const size = jitter / BUCKETS;
  const buckets = new Array<number>(BUCKETS).fill(0);
  let early = 0;
  const lags: number[] = [];
  for (const s of of) {
    const due = instant + jitterShiftMs(s.schedule, instant, jitter);
    if (s.at < due) early++;
    lags.push(s.at - due);
    buckets[Math.min(BUCKETS - 1, Math.max(0, Math.floor((s.at - instant) / size)))]++;
  }
  const mean = k / BUCKETS;
  const worst = Math.max(...buckets.map((b) => Math.abs(b - mean) / mean));
  const lag = latencySummary(lags);
  const metrics = { jStarted: of.length, jEarly: early, jWorstBucketPct: worst * 100, jLagP99: lag.p99 };
  const line =
    `${fmtInt(k)} with jitter ${fmtInt(jitter)} ms, ${WORKERS} workers: ${fmtInt(of.length)} started, ${early} before their shifted instant; ` +
    `per ${fmt(size / 1000, 1)} s bucket ${buckets.join('/')} (worst ${fmt(worst * 100, 1)} % from the mean ${fmtInt(mean)}); ` +
    `lag behind the shifted instant p50 ${fmtInt(lag.p50)} ms, p99 ${fmtInt(lag.p99)} ms`;
  return { metrics, line };
}
