// Workload 13: schedules as data (issue 25). At N runtime schedules (--w13-schedules; 100,000, --quick 2,000):
//   1. the plain-Redis limit loop (bench/children/sd-limit.ts: a ZSET by next due, batches of 500 due members, one
//      small Lua fire each, pipelined): fires/s and bytes per schedule at rest; beside it the Chronos leader's burst
//      of N due at one instant (triggers enqueued per second, bench/workloads/schedules-data-burst.ts);
//   2. bulk add and unchanged upsert from one process (bench/children/sd-admin.ts), beside addSchedule with 64 in
//      flight and BullMQ's upsertJobScheduler;
//   3. the leader's heap per schedule at 10,000 and N (sd-leader.ts, --expose-gc), Redis bytes per schedule;
//   4. N due at one instant with 3 worker processes, and 10,000 with jitter 60 s (schedules-data-burst.ts);
//   5. the leader's idle commands/s with N schedules and none due (INFO commandstats over 10 s);
//   6. Inspector.schedulePage of 100 by one and by two labels, when the library has it (p50/p99 over 50 calls each).
import { BenchChild } from '../lib/children.js';
import type { Target } from '../lib/targets.js';
import { digest, labelsSupported } from '../lib/schedules-data.js';
import { latencySummary } from '../lib/stats.js';
import { nowMs, sleep } from '../lib/time.js';
import { fmt, fmtInt, prefixFor, type Ctx, type RowSpec, type RunRecord, type WorkloadResult } from './common.js';
import { WORKERS, jitterBurst, leaderBurst, workersBurst } from './schedules-data-burst.js';

const INFLIGHT = 64;
const LIMIT_BATCH = 500;
const PAGE_CALLS = 50;
/** BullMQ's upsertJobScheduler runs at a few hundred per second here: measured on the first 10,000. */
const BULLMQ_MAX = 10_000;

async function usedMemory(ctx: Ctx): Promise<number> {
  return Number(/^used_memory:(\d+)/m.exec(await ctx.redis.client.info('memory'))![1]);
}

/** 1: the limit loop — bytes per schedule at rest (used_memory delta of the setup ÷ N), then fires/s. */
async function limitLoop(ctx: Ctx, round: number, n: number): Promise<Record<string, number>> {
  const prefix = prefixFor(ctx, `w13-r${round}-limit`);
  let child: BenchChild | undefined;
  try {
    const m0 = await usedMemory(ctx);
    child = await BenchChild.start(
      'sd-limit',
      `w13-limit-r${round}`,
      { url: ctx.redis.url, prefix, schedules: n, batch: LIMIT_BATCH },
      { readyTimeoutMs: 120_000 },
    );
    const bytes = ((await usedMemory(ctx)) - m0) / n;
    child.send({ type: 'go' });
    const done = await child.waitFor('done', 300_000);
    return { burstRate: (done.fires as number) / ((done.ms as number) / 1000), bytes, fires: done.fires as number };
  } finally {
    await child?.stop();
    await ctx.redis.clean(prefix);
  }
}

/** Seeds `count` digests in `prefix` from the parent (setup, not measured). */
async function seedDigests(ctx: Ctx, prefix: string, count: number, labels: boolean): Promise<void> {
  const { Scheduler } = await import('../../lib/core/index.js');
  const s = new Scheduler({
    connection: ctx.redis.url,
    namespace: prefix,
    eligible: false,
    logger: { log() {}, warn() {}, error() {} },
    compactSchedules: true,
  });
  await s.start();
  try {
    const defs = Array.from({ length: count }, (_, i) => digest(i, labels));
    for (let i = 0; i < count; i += 10_000) await s.addSchedules(defs.slice(i, i + 10_000));
  } finally {
    await s.stop();
  }
}

/** 3 + 5 (+ 6): a leader over `prefix`'s schedules: heap per schedule once loaded, idle commands/s, label pages. */
async function leaderAt(ctx: Ctx, prefix: string, tag: string, n: number, idleMs: number): Promise<Record<string, number>> {
  const leader = await BenchChild.start(
    'sd-leader',
    tag,
    { url: ctx.redis.url, prefix },
    { cpuProfDir: ctx.cpuProfDir, nodeArgs: ['--expose-gc'] },
  );
  try {
    await leader.waitFor('loaded', 120_000);
    const out: Record<string, number> = {};
    if (idleMs > 0) {
      // planning the schedules just added (each is marked "look now" in its shard's due index: a negative score) is
      // not idleness: the sentinel's shard may be done long before the others
      const keysModule = (await import('../../lib/core/redis/keys.js')) as { shardKeysOf?: (ns: string) => readonly { due: string }[] };
      if (keysModule.shardKeysOf !== undefined) {
        const dues = keysModule.shardKeysOf(prefix).map((k) => k.due);
        const lookNow = async () =>
          (await Promise.all(dues.map((d) => ctx.redis.client.zcount(d, '-inf', '(0')))).reduce((a, b) => a + b, 0);
        const t0 = nowMs();
        while ((await lookNow()) > 0 && nowMs() - t0 < 180_000) await sleep(100);
        out.planMs = nowMs() - t0;
      }
      // the leader's one-time backfill of the registry's indexes (at its first acquisition over this registry) is not idleness
      const { SchedulerKeys } = await import('../../lib/core/redis/keys.js');
      const stateKey = (new SchedulerKeys(prefix) as unknown as { indexState?: string }).indexState;
      if (stateKey !== undefined) {
        const b0 = await ctx.redis.snapshot();
        const t0 = nowMs();
        while ((await ctx.redis.client.hget(stateKey, 'phase')) !== 'ready' && nowMs() - t0 < 180_000) await sleep(100);
        const b = ctx.redis.delta(b0, await ctx.redis.snapshot());
        out.backfillMs = nowMs() - t0;
        out.backfillCmds = b.commands - (b.byCommand.hget ?? 0);
      }
      await sleep(1000); // the sentinel's fire and its task settle
      const s0 = await ctx.redis.snapshot();
      leader.send({ type: 'mark' });
      await sleep(idleMs);
      const s1 = await ctx.redis.snapshot();
      const d = ctx.redis.delta(s0, s1);
      out.idleCmdsPerSec = d.commands / (idleMs / 1000);
    }
    leader.send({ type: 'end' });
    const stats = await leader.waitFor('stats', 60_000);
    out.heapPerSchedule = (stats.heapDelta as number) / n;
    if (idleMs > 0) out.idleFires = stats.fires as number;
    return out;
  } finally {
    await leader.stop();
  }
}

/** 6: `Inspector.schedulePage({ labels, limit: 100 })`, 50 calls, when this build has it (else {}). */
async function labelPages(ctx: Ctx, prefix: string): Promise<Record<string, number>> {
  const { Inspector } = await import('../../lib/core/index.js');
  const inspector = new Inspector({ connection: ctx.redis.url, namespace: prefix });
  const page = (inspector as unknown as { schedulePage?: (q: Record<string, unknown>) => Promise<{ items?: unknown[] }> }).schedulePage;
  if (typeof page !== 'function') {
    await inspector.close();
    return {};
  }
  try {
    await inspector.check();
    const t0 = nowMs();
    await page.call(inspector, { labels: { plan: 'pro' }, limit: 100 }); // the first: builds the indexes if missing
    const out: Record<string, number> = { pageFirstMs: nowMs() - t0 };
    const query = async (labels: Record<string, string>, tag: string) => {
      const ms: number[] = [];
      let got = NaN;
      for (let i = 0; i < PAGE_CALLS; i++) {
        const t = nowMs();
        const r = await page.call(inspector, { labels, limit: 100 });
        ms.push(nowMs() - t);
        got = Array.isArray(r.items) ? r.items.length : NaN;
      }
      const l = latencySummary(ms);
      Object.assign(out, { [`${tag}P50`]: l.p50, [`${tag}P99`]: l.p99, [`${tag}Items`]: got });
    };
    await query({ plan: 'pro' }, 'page'); // a third of the schedules
    await query({ plan: 'pro', region: 'us' }, 'page2'); // a sixth: both labels checked
    return out;
  } finally {
    await inspector.close();
  }
}

export async function schedulesDataWorkload(ctx: Ctx): Promise<WorkloadResult> {
  const n = ctx.knobs['w13-schedules'] ?? (ctx.quick ? 1_000 : 100_000);
  const bullCount = Math.min(n, BULLMQ_MAX);
  const small = Math.min(10_000, n);
  const jitterCount = Math.min(10_000, n);
  const jitter = ctx.quick ? 2_000 : 60_000;
  const idleMs = ctx.quick ? 2_000 : 10_000;
  const rounds = ctx.knobs['w13-rounds'] ?? 1;
  const labels = await labelsSupported();
  const runs: RunRecord[] = [];
  for (let round = 1; round <= rounds; round++) {
    const log = (line: string) => ctx.log(`  w13 round ${round}/${rounds}: ${line}`);
    // 1. the limit loop
    const limit = await limitLoop(ctx, round, n);
    log(`limit loop: ${fmtInt(limit.burstRate)} fires/s over ${fmtInt(limit.fires)}, ${fmtInt(limit.bytes)} B per schedule at rest`);
    const chronos: Record<string, number> = {};
    const lb = await leaderBurst(ctx, round, n);
    Object.assign(chronos, lb.metrics);
    chronos.burstVsLimit = chronos.burstRate / limit.burstRate;
    log(`${lb.line}; ${fmt(chronos.burstVsLimit)}× the limit loop`);
    // 2. writes from one process (the bulk namespace stays for 3 and 5)
    const prefix = prefixFor(ctx, `w13-r${round}-admin`);
    try {
      const admin = await BenchChild.start('sd-admin', `w13-admin-r${round}`, {
        url: ctx.redis.url,
        prefix,
        schedules: n,
        inflight: INFLIGHT,
        labels,
        bullmqSchedules: bullCount,
        phases: ['single', 'bulk', 'bullmq'],
      });
      admin.send({ type: 'go' });
      const w = await admin.waitFor('done', 600_000);
      await admin.stop();
      await ctx.redis.clean(`${prefix}-single`);
      await ctx.redis.clean(`${prefix}-bull`);
      Object.assign(chronos, {
        addRate: w.bulkRate,
        upsertRate: w.upsertRate,
        singleRate: w.singleRate,
        bytes: w.bulkBytes,
        singleBytes: w.singleBytes,
      });
      const parts = Object.entries(w)
        .filter(([k]) => k.startsWith('bulkBytes_'))
        .map(([k, v]) => [k.slice('bulkBytes_'.length), v as number] as const);
      for (const [g, v] of parts) chronos[`bytes_${g.replace(':*', 's').replace(/[^A-Za-z0-9]+/g, '_')}`] = v;
      runs.push({ round, contender: 'bullmq', metrics: { singleRate: w.bullmqRate as number, bytes: w.bullmqBytes as number } });
      log(
        `writes of ${fmtInt(n)}: addSchedules ${fmtInt(chronos.addRate)}/s, upsertSchedules unchanged ${fmtInt(chronos.upsertRate)}/s, ` +
          `addSchedule ×${INFLIGHT} in flight ${fmtInt(chronos.singleRate)}/s, BullMQ upsertJobScheduler ×${INFLIGHT} ${fmtInt(w.bullmqRate as number)}/s (of ${fmtInt(bullCount)}); ` +
          `Redis bytes per schedule ${fmtInt(chronos.bytes)} (single path ${fmtInt(chronos.singleBytes)}, BullMQ ${fmtInt(w.bullmqBytes as number)})${labels ? ', two labels each' : ', no labels (not in this build)'}` +
          (parts.length > 0 ? `; by MEMORY USAGE: ${parts.map(([g, v]) => `${g} ${fmtInt(v)}`).join(', ')}` : ''),
      );
      // 3 + 5: the leader at N (heap, idle), then 6
      const big = await leaderAt(ctx, prefix, `w13-leader-n-r${round}`, n, idleMs);
      Object.assign(chronos, {
        heapPerSchedule: big.heapPerSchedule,
        idleCmdsPerSec: big.idleCmdsPerSec,
        planMs: big.planMs,
        backfillMs: big.backfillMs,
        backfillCmds: big.backfillCmds,
      });
      const pages = await labelPages(ctx, prefix);
      Object.assign(chronos, pages);
      log(
        `leader over ${fmtInt(n)}: heap ${fmtInt(big.heapPerSchedule)} B per schedule; idle ${fmt(big.idleCmdsPerSec, 1)} commands/s over ${idleMs / 1000} s (${big.idleFires} fires)` +
          (big.planMs !== undefined ? `, once every schedule was planned (${fmtInt(big.planMs)} ms after the sentinel's fire)` : '') +
          (big.backfillMs !== undefined
            ? ` after its one-time index backfill (${fmtInt(big.backfillMs)} ms from the table's load, ${fmtInt(big.backfillCmds)} commands)`
            : '') +
          (pages.pageP50 !== undefined
            ? `; schedulePage of 100 by one label (plan=pro) p50 ${fmt(pages.pageP50, 1)} ms, p99 ${fmt(pages.pageP99, 1)} ms (${pages.pageItems} items), ` +
              `by two labels p50 ${fmt(pages.page2P50, 1)} ms, p99 ${fmt(pages.page2P99, 1)} ms (${pages.page2Items} items), first call ${fmt(pages.pageFirstMs, 1)} ms`
            : '; no Inspector.schedulePage in this build'),
      );
    } finally {
      await ctx.redis.clean(prefix);
    }
    if (small < n) {
      const p = prefixFor(ctx, `w13-r${round}-small`);
      try {
        await seedDigests(ctx, p, small, labels);
        const s = await leaderAt(ctx, p, `w13-leader-small-r${round}`, small, 0);
        chronos.heapPerScheduleSmall = s.heapPerSchedule;
        log(`leader over ${fmtInt(small)}: heap ${fmtInt(s.heapPerSchedule)} B per schedule`);
      } finally {
        await ctx.redis.clean(p);
      }
    }
    // 4. with workers
    const wb = await workersBurst(ctx, round, n);
    Object.assign(chronos, wb.metrics);
    log(wb.line);
    const jb = await jitterBurst(ctx, round, jitterCount, jitter);
    Object.assign(chronos, jb.metrics);
    log(jb.line);
    runs.push(
      { round, contender: 'chronos', metrics: chronos },
      { round, contender: 'limit', metrics: { burstRate: limit.burstRate, bytes: limit.bytes } },
    );
  }
  const N = fmtInt(n);
  const row = (label: string, metric: string, unit: string, higherIsBetter: boolean, more: Partial<RowSpec> = {}): RowSpec => ({
    label,
    metric,
    unit,
    higherIsBetter,
    a: 'chronos',
    ...more,
  });
  const rows: RowSpec[] = [
    row(`${N} due at one instant, leader alone: triggers enqueued/s`, 'burstRate', '/s', true, { limit: 'limit', decimals: 0 }),
    row(`addSchedules(${N}) from one process`, 'addRate', '/s', true, { decimals: 0 }),
    row(`upsertSchedules(${N}), unchanged`, 'upsertRate', '/s', true, { decimals: 0 }),
    row(`addSchedule, ${INFLIGHT} in flight (BullMQ: upsertJobScheduler)`, 'singleRate', '/s', true, { b: 'bullmq', decimals: 0 }),
    row(`Redis bytes per schedule at rest`, 'bytes', 'B', false, { b: 'bullmq', limit: 'limit', decimals: 0 }),
    row(`leader heap per schedule at ${N}`, 'heapPerSchedule', 'B', false, { decimals: 0 }),
    ...(small < n ? [row(`leader heap per schedule at ${fmtInt(small)}`, 'heapPerScheduleSmall', 'B', false, { decimals: 0 })] : []),
    row(`leader idle with ${N}, none due: commands/s`, 'idleCmdsPerSec', 'cmd/s', false, { decimals: 1 }),
    row(`leader's first acquisition over ${N}: index backfill`, 'backfillMs', 'ms', false, { decimals: 0 }),
    row(`${N} due, ${WORKERS} workers: start − instant p50`, 'wLagP50', 'ms', false, { decimals: 0 }),
    row(`${N} due, ${WORKERS} workers: start − instant p99`, 'wLagP99', 'ms', false, { decimals: 0 }),
    row(`${N} due, ${WORKERS} workers: all enqueued − instant`, 'wEnqueuedByMs', 'ms', false, { decimals: 0 }),
    row(`${fmtInt(jitterCount)}, jitter ${fmtInt(jitter)} ms: worst bucket vs the mean`, 'jWorstBucketPct', '%', false, { decimals: 1 }),
    row(`Inspector.schedulePage of 100 by one label at ${N}: p99`, 'pageP99', 'ms', false, { decimals: 1 }),
    row(`Inspector.schedulePage of 100 by two labels at ${N}: p99`, 'page2P99', 'ms', false, { decimals: 1 }),
  ];
  return {
    id: 'w13',
    title: `13. Schedules as data (issue 25): ${N} runtime schedules`,
    params: {
      schedules: n,
      small,
      jitterCount,
      jitterMs: jitter,
      idleMs,
      inflight: INFLIGHT,
      limitBatch: LIMIT_BATCH,
      workers: WORKERS,
      labels,
      rounds,
    },
    settings: {
      chronos: `runtime schedules (Scheduler.addSchedules, defaults); one leader Scheduler (defaults); ${WORKERS} ChronosServer workers (concurrency 100) for the bursts with workers`,
      bullmq: `Queue.upsertJobScheduler(name, { pattern, tz }, …) of the first ${fmtInt(bullCount)}, ${INFLIGHT} in flight (its bytes include each scheduler's next delayed job)`,
      limit: `ZSET by next due + a hash of definition JSON (two labels); ZRANGEBYSCORE … LIMIT 0 ${LIMIT_BATCH}, then ${LIMIT_BATCH} pipelined EVALSHA of SET NX PX + XADD + ZADD + HSET`,
    },
    contenders: ['chronos', 'bullmq', 'limit'],
    runs,
    rows,
    notes: [
      `Digests: a cron at minute i % 60 of 03:00 on the 1st of the month in one of 5 zones, payload { tenant, version }, 10 queues${labels ? ', labels { plan, region }' : ''}; none comes due in a run.`,
      "Bursts: every-specs of period 1 h all due at one instant, added by the parent before the leader starts (its table is loaded before the instant). Rate = N ÷ (last fire − first fire) by the leader's schedule.fired events.",
      'Heap = heapUsed after gc in the leader process minus its baseline before the Scheduler was made, ÷ N. Bytes = used_memory delta of the add ÷ N, definitions stored compact (compactSchedules: true).',
    ],
  };
}

/** The targets of issue 25 ("schedules as data") on workload 13's median round; never asserted. */
export function schedulesDataTargets(w: WorkloadResult | undefined): Target[] {
  if (!w) return [];
  const chronos = w.runs.filter((r) => r.contender === 'chronos').map((r) => r.metrics);
  const med = (m: string) => {
    const v = chronos
      .map((x) => x[m])
      .filter((x) => Number.isFinite(x))
      .sort((a, b) => a - b);
    return v.length ? v[Math.floor((v.length - 1) / 2)] : NaN;
  };
  const n = Number(w.params.schedules).toLocaleString('en-US');
  const out: Target[] = [];
  const check = (id: string, text: string, metric: string, unit: string, ok: (v: number) => boolean, digits = 2) => {
    const v = med(metric);
    if (!Number.isFinite(v)) return out.push({ id, text, workload: 'w13', unit });
    out.push({ id, text, workload: 'w13', unit, value: v, met: ok(v), detail: `${v.toFixed(digits)} ${unit}` });
  };
  check('sd-burst', `${n} due at one instant: leader enqueues ≥ 0.5× the plain-Redis limit loop`, 'burstVsLimit', '×', (v) => v >= 0.5);
  check('sd-add', `addSchedules(${n}) from one process ≥ 50,000/s`, 'addRate', '/s', (v) => v >= 50_000, 0);
  check('sd-upsert', `upsertSchedules(${n}) unchanged ≥ 50,000/s`, 'upsertRate', '/s', (v) => v >= 50_000, 0);
  check('sd-once', `${n} due, ${WORKERS} workers: none early, each exactly once`, 'wOnceViolations', 'triggers', (v) => v === 0, 0);
  check('sd-p99', `${n} due, ${WORKERS} workers: start − instant p99 ≤ 3 s`, 'wLagP99', 'ms', (v) => v <= 3000, 0);
  check(
    'sd-jitter',
    `jitter ${Number(w.params.jitterMs).toLocaleString('en-US')} ms: every bucket within 20 % of the mean`,
    'jWorstBucketPct',
    '%',
    (v) => v <= 20,
    1,
  );
  check('sd-idle', `leader idle with ${n} schedules, none due: ≤ 20 commands/s`, 'idleCmdsPerSec', 'cmd/s', (v) => v <= 20, 1);
  check('sd-page', `Inspector.schedulePage of 100 by label at ${n}: p99 ≤ 50 ms`, 'pageP99', 'ms', (v) => v <= 50, 1);
  return out;
}
