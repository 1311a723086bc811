// npm run bench [-- --quick] [--rounds N] [--only w1,w3-c50,w5] [--contenders chronos,limit] [--redis-url [URL]] [--cpu-prof] [--out FILE] [--w5-concurrency N] [--w5-schedules N] [--w10-schedules N] [--w10-eligible 0] [--w13-schedules N] [--w13-rounds N]
//
// Runs each workload for Chronos and BullMQ alternately (plus the plain-Redis limit), prints a table
// of medians with min–max and Chronos/BullMQ ratios, checks the targets of issue #5, and writes the
// same as JSON to bench/results/latest.json. See bench/README.md.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import { killAllChildren, killAllChildrenSync } from './lib/children.js';
import { BenchRedis } from './lib/redis.js';
import { costTable, mainTable, metricSpread, ratioSpread, toJson } from './lib/report.js';
import type { Ctx, WorkloadResult } from './workloads/common.js';
import { enqueueWorkload } from './workloads/enqueue.js';
import { processWorkload } from './workloads/process.js';
import { latencyWorkload } from './workloads/latency.js';
import { schedulesWorkload } from './workloads/schedules.js';
import { recoveryWorkload } from './workloads/recovery.js';
import { handoverWorkload } from './workloads/handover.js';
import { clusterWorkload } from './workloads/cluster.js';
import { memoryWorkload } from './workloads/memory.js';
import { manySchedulesWorkload } from './workloads/many-schedules.js';
import { schedulesDataTargets, schedulesDataWorkload } from './workloads/schedules-data.js';
import { manyQueuesWorkload } from './workloads/many-queues.js';
import { delayedLatenessWorkload } from './workloads/delayed-lateness.js';
import { limitsWorkload } from './workloads/limits.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface Args {
  quick: boolean;
  rounds?: number;
  only?: string[];
  redisUrl?: string;
  cpuProf: boolean;
  out: string;
  contenders?: string[];
  knobs: Record<string, number>;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { quick: false, cpuProf: false, out: join(ROOT, 'bench/results/latest.json'), knobs: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const eq = a.indexOf('=');
      if (eq >= 0) return a.slice(eq + 1);
      const v = argv[i + 1];
      if (v === undefined || v.startsWith('--')) return undefined;
      i++;
      return v;
    };
    const name = a.split('=')[0];
    if (name === '--quick') args.quick = true;
    else if (name === '--rounds') args.rounds = Number(value());
    else if (name === '--only')
      args.only = (value() ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    else if (name === '--redis-url') {
      args.redisUrl = value() ?? process.env.REDIS_URL;
      if (!args.redisUrl) throw new Error('--redis-url needs a URL (or REDIS_URL set)');
    } else if (name === '--cpu-prof') args.cpuProf = true;
    else if (name === '--contenders')
      args.contenders = (value() ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    else if (
      name === '--w5-concurrency' ||
      name === '--w5-schedules' ||
      name === '--w10-schedules' ||
      name === '--w10-eligible' ||
      name === '--w13-schedules' ||
      name === '--w13-rounds'
    ) {
      const v = Number(value());
      if (!Number.isInteger(v) || v < (name === '--w10-eligible' ? 0 : 1)) throw new Error(`${name}: expected an integer >= 1`);
      args.knobs[name.slice(2)] = v;
    } else if (name === '--out') args.out = resolve(value() ?? args.out);
    else if (name === '--help' || name === '-h') {
      console.log(
        readFileSync(fileURLToPath(import.meta.url), 'utf8')
          .split('\n')
          .slice(0, 1)
          .join('\n')
          .replace('// ', 'usage: '),
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (see bench/README.md)`);
  }
  if (args.rounds !== undefined && !(Number.isInteger(args.rounds) && args.rounds >= 1))
    throw new Error('--rounds: expected an integer >= 1');
  return args;
}

interface Workload {
  id: string;
  run(ctx: Ctx): Promise<WorkloadResult>;
}

const WORKLOADS: Workload[] = [
  { id: 'w1', run: (ctx) => enqueueWorkload(ctx, 'awaited') },
  { id: 'w2', run: (ctx) => enqueueWorkload(ctx, 'bulk') },
  { id: 'w3-c1', run: (ctx) => processWorkload(ctx, 1) },
  { id: 'w3-c10', run: (ctx) => processWorkload(ctx, 10) },
  { id: 'w3-c50', run: (ctx) => processWorkload(ctx, 50) },
  { id: 'w4', run: (ctx) => latencyWorkload(ctx) },
  { id: 'w5', run: (ctx) => schedulesWorkload(ctx) },
  { id: 'w6', run: (ctx) => recoveryWorkload(ctx) },
  { id: 'w7-term', run: (ctx) => handoverWorkload(ctx, 'SIGTERM') },
  { id: 'w7-kill', run: (ctx) => handoverWorkload(ctx, 'SIGKILL') },
  { id: 'w8', run: (ctx) => clusterWorkload(ctx) },
  { id: 'w9', run: (ctx) => memoryWorkload(ctx) },
  { id: 'w10', run: (ctx) => manySchedulesWorkload(ctx) },
  { id: 'w11', run: (ctx) => manyQueuesWorkload(ctx) },
  { id: 'w11-delayed', run: (ctx) => delayedLatenessWorkload(ctx) },
  { id: 'w12', run: (ctx) => limitsWorkload(ctx) },
  { id: 'w13', run: (ctx) => schedulesDataWorkload(ctx) },
];

interface Target {
  id: string;
  text: string;
  workload: string;
  value?: number;
  unit: string;
  met?: boolean;
  detail?: string;
}

/** The targets of issues #5, #13 and #15 (w10), judged on this run. */
function judge(results: WorkloadResult[], quick: boolean): Target[] {
  const get = (id: string) => results.find((w) => w.id === id && !w.error);
  const out: Target[] = [];
  const add = (t: Target) => out.push(t);
  const atLeast = (id: string, text: string, workload: string, metric: string, min: number) => {
    const w = get(workload);
    if (!w) return add({ id, text, workload, unit: '×' });
    const r = ratioSpread(w, metric, 'chronos', 'bullmq');
    if (r.n === 0) return add({ id, text, workload, unit: '×' });
    const met = r.median >= min;
    add({
      id,
      text,
      workload,
      unit: '×',
      value: r.median,
      met,
      detail: `${r.median.toFixed(2)}× (rounds ${r.min.toFixed(2)}–${r.max.toFixed(2)})${met ? '' : `: missed by ${(min / r.median).toFixed(2)}× (needs ${(min - r.median).toFixed(2)}× more)`}`,
    });
  };
  const atMost = (
    id: string,
    text: string,
    workload: string,
    metric: string,
    max: number,
    unit: string,
    use: 'median' | 'max',
    strict = false,
  ) => {
    const w = get(workload);
    if (!w) return add({ id, text, workload, unit });
    const s = metricSpread(w, 'chronos', metric);
    if (s.n === 0) return add({ id, text, workload, unit });
    const v = s[use];
    const met = strict ? v < max : v <= max;
    const digits = unit === 's' ? 3 : 2;
    add({
      id,
      text,
      workload,
      unit,
      value: v,
      met,
      detail: `${use} ${v.toFixed(digits)} ${unit} (rounds ${s.min.toFixed(digits)}–${s.max.toFixed(digits)})${met ? '' : `: missed by ${(v - max).toFixed(digits)} ${unit} (${(v / max).toFixed(2)}× the bound)`}`,
    });
  };
  atLeast('enqueue-awaited', 'enqueue one at a time, awaited: ≥ 1.5× BullMQ', 'w1', 'rate', 1.5);
  atLeast('enqueue-bulk', 'enqueue in bulk: ≥ 2× BullMQ', 'w2', 'rate', 2);
  atLeast('process-c50', 'process at concurrency 50: ≥ 2× BullMQ', 'w3-c50', 'rate', 2);
  atMost('process-c50-cmds', 'process at concurrency 50: ≤ 6 Redis commands per task', 'w3-c50', 'cmdsPerTask', 6, 'cmd/task', 'median');
  atMost('latency-p99', 'latency at 500/s: p99 ≤ 5 ms', 'w4', 'p99', 5, 'ms', 'median');
  atMost('schedules-cmds', '1,000 schedules every 1 s: ≤ 8 Redis commands per fire', 'w5', 'cmdsPerFire', 8, 'cmd/fire', 'median');
  atMost('schedules-lag', '1,000 schedules every 1 s: fire lag p99 ≤ 20 ms', 'w5', 'lagP99', 20, 'ms', 'median');
  const settings = quick ? 'quick settings' : 'default settings';
  atMost(
    'recovery',
    `worker SIGKILLed with 20 tasks in flight: all done elsewhere ≤ 5 s (${settings})`,
    'w6',
    'recoverySec',
    5,
    's',
    'max',
  );
  atMost('handover-term', 'leader SIGTERM: next trigger enqueued < 0.5 s', 'w7-term', 'handoverSec', 0.5, 's', 'max', true);
  const ttl = quick ? 2 : 5;
  atMost(
    'handover-kill',
    `leader SIGKILL: next trigger enqueued ≤ TTL + 1 s (${ttl + 1} s)`,
    'w7-kill',
    'handoverSec',
    ttl + 1,
    's',
    'max',
  );
  atMost(
    'queues-idle',
    'one worker on 100 idle queues (issue 15): ≤ 60 Redis commands/s, recovery included',
    'w11',
    'idleCmdsQ100',
    60,
    'cmd/s',
    'median',
  );
  atMost('idle-q1', 'one idle worker on 1 queue (issue 22): ≤ 3 Redis commands/s', 'w11', 'idleCmdsQ1', 3, 'cmd/s', 'median');
  atMost('idle-q100', 'one idle worker on 100 queues (issue 22): ≤ 40 Redis commands/s', 'w11', 'idleCmdsQ100', 40, 'cmd/s', 'median');
  atMost(
    'delayed-q1',
    'a delayed task from another process, 1 queue (issue 22): start − due p99 ≤ 10 ms',
    'w11-delayed',
    'lateP99Q1',
    10,
    'ms',
    'median',
  );
  atMost(
    'delayed-q100',
    'a delayed task from another process, 100 queues (issue 22): start − due p99 ≤ 10 ms',
    'w11-delayed',
    'lateP99Q100',
    10,
    'ms',
    'median',
  );
  const atLeastValue = (
    id: string,
    text: string,
    workload: string,
    metric: string,
    min: number,
    unit: string,
    use: 'min' | 'median' = 'min',
  ) => {
    const w = get(workload);
    if (!w) return add({ id, text, workload, unit });
    const s = metricSpread(w, 'chronos', metric);
    if (s.n === 0) return add({ id, text, workload, unit });
    const v = s[use];
    const met = v >= min;
    add({
      id,
      text,
      workload,
      unit,
      value: v,
      met,
      detail: `${use === 'min' ? 'worst round' : 'median'} ${v.toFixed(2)} ${unit} (rounds ${s.min.toFixed(2)}–${s.max.toFixed(2)})${met ? '' : `: missed by ${(min - v).toFixed(2)} ${unit}`}`,
    });
  };
  atLeastValue(
    'limits-nobind',
    'a limit that does not bind (issue 21): ≥ 0.9× the throughput without one at c=50',
    'w12',
    'nobindRatio',
    0.9,
    '×',
    'median',
  );
  atMost('limits-conc-peak', 'concurrency 5 over 3 workers (issue 21): peak exactly 5, never more', 'w12', 'concPeak', 5, 'tasks', 'max');
  atLeastValue('limits-conc-rate', 'concurrency 5, 100 ms tasks (issue 21): ≥ 47.5 tasks/s', 'w12', 'concRate', 47.5, '/s');
  atMost('limits-rate-window', 'rate 100/s over 3 workers (issue 21): no 1 s window over 100', 'w12', 'rateMaxIn1s', 100, 'tasks', 'max');
  atLeastValue('limits-rate-pace', 'rate 100/s while backlogged (issue 21): ≥ 95 per second', 'w12', 'ratePerSec', 95, '/s');
  atMost(
    'limits-fresh-group',
    'a fresh group behind 1,000 backlogged (issue 21): start p99 ≤ 50 ms',
    'w12',
    'freshP99Ms',
    50,
    'ms',
    'median',
  );
  atMost('limits-shares', '1,000 groups (issue 21): every share within 10% of equal', 'w12', 'shareErrPct', 10, '%', 'max');
  atMost('queues-idle-cpu', 'one worker on 100 idle queues (issue 15): Redis CPU ≤ 1%', 'w11', 'idleCpuQ100', 1, '%', 'median');
  atMost('queues-p99', '100 queues (issue 15): enqueue → start p99 ≤ 5 ms', 'w11', 'p99', 5, 'ms', 'median');
  atMost('queues-share', '100 backlogged queues, weights 1:2:3 (issue 15): shares within 5%', 'w11', 'weightedShareErrPct', 5, '%', 'max');
  atMost('queues-share-eq', '100 backlogged queues, equal weights (issue 15): shares within 5%', 'w11', 'equalShareErrPct', 5, '%', 'max');
  atMost(
    'queues-first',
    '100 backlogged queues (issue 15): first turn within queues × batch (5,000) tasks',
    'w11',
    'equalFirstTurnMax',
    5000,
    'task',
    'max',
  );
  for (const id of ['w7-term', 'w7-kill']) {
    const w = get(id);
    if (!w) continue;
    const lost = w.runs.reduce((a, r) => a + r.metrics.lostTriggers, 0);
    const dup = w.runs.reduce((a, r) => a + r.metrics.duplicateTriggers, 0);
    add({
      id: `${id}-once`,
      text: `${id === 'w7-term' ? 'SIGTERM' : 'SIGKILL'} hand-over: every trigger enqueued exactly once`,
      workload: id,
      unit: 'triggers',
      value: lost + dup,
      met: lost + dup === 0,
      detail: `lost ${lost}, duplicated ${dup}`,
    });
  }
  const w9 = get('w9');
  if (w9) {
    const r = ratioSpread(w9, 'pendingB', 'chronos', 'bullmq');
    if (r.n > 0) {
      const met = r.median <= 0.5;
      add({
        id: 'memory-pending',
        text: 'memory (issue 15): Redis used_memory per pending task ≤ 0.5× BullMQ',
        workload: 'w9',
        unit: '×',
        value: r.median,
        met,
        detail: `${r.median.toFixed(2)}× (rounds ${r.min.toFixed(2)}–${r.max.toFixed(2)})${met ? '' : `: missed by ${(r.median / 0.5).toFixed(2)}× the bound`}`,
      });
    }
  }
  const w10 = get('w10');
  if (w10) {
    const n = Number(w10.params.schedules);
    const small = Number(w10.params.small);
    const at = `${n.toLocaleString('en-US')} schedules × 3`;
    atMost('many-schedules-registration', `${at}: boot registration ≤ 1 s`, 'w10', 'registrationMsMax', 1000, 'ms', 'max');
    atMost('many-schedules-slowlog', `${at}: no Redis command or script over 10 ms (SLOWLOG)`, 'w10', 'slowMaxUs', 10_000, 'µs', 'max');
    atMost(
      'many-schedules-inspector',
      `${at}: Inspector.schedules() ≤ 200 ms (warm; cold in the table)`,
      'w10',
      'inspectWarmMs',
      200,
      'ms',
      'median',
    );
    const linear = n / small;
    atMost(
      'many-schedules-idle-cmds',
      `${at}: idle commands/s grow less than linearly (< ${linear}× from ${small})`,
      'w10',
      'idleCmdsGrowth',
      linear,
      '×',
      'median',
      true,
    );
    atMost(
      'many-schedules-idle-cpu',
      `${at}: leader idle CPU grows less than linearly (< ${linear}× from ${small})`,
      'w10',
      'leaderCpuGrowth',
      linear,
      '×',
      'median',
      true,
    );
    atMost('many-schedules-heap', `${at}: leader heap per schedule ≤ 4 KiB`, 'w10', 'leaderHeapPerSchedule', 4096, 'B', 'median');
    atMost('many-schedules-loop', `${at}: no event-loop block over 100 ms (leader)`, 'w10', 'loopMaxMsLeader', 100, 'ms', 'max');
  }
  out.push(...schedulesDataTargets(get('w13')));
  const w8 = get('w8');
  if (w8) {
    const r = ratioSpread(w8, 'cmdsPerTask', 'cluster', 'standalone');
    add({
      id: 'cluster-cmds',
      text: 'cluster (issue #13): commands per task ≤ 1.2× one Redis',
      workload: 'w8',
      unit: '×',
      value: r.median,
      met: r.median <= 1.2,
      detail: `${r.median.toFixed(2)}× (rounds ${r.min.toFixed(2)}–${r.max.toFixed(2)})`,
    });
    const shares = [0, 1, 2].map((i) => metricSpread(w8, 'cluster', `shareNode${i}`).median);
    const met = shares.every((x) => x >= 0.2 && x <= 0.5);
    add({
      id: 'cluster-spread',
      text: "cluster (issue #13): each master takes about a third of one Redis's CPU per task (0.2–0.5)",
      workload: 'w8',
      unit: '×',
      value: Math.max(...shares),
      met,
      detail: `shares ${shares.map((x) => x.toFixed(2)).join(' / ')}`,
    });
  }
  return out;
}

function version(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const rounds = args.rounds ?? (args.quick ? 1 : 3);
  const selected = WORKLOADS.filter((w) => !args.only || args.only.some((o) => w.id === o || w.id.startsWith(`${o}-`)));
  if (selected.length === 0)
    throw new Error(`--only ${args.only?.join(',')}: no such workload (ids: ${WORKLOADS.map((w) => w.id).join(', ')})`);
  const redis = await BenchRedis.open(args.redisUrl);
  const cleanup = () => {
    killAllChildrenSync();
    redis.killSync();
  };
  process.on('exit', cleanup);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      cleanup();
      process.exit(130);
    });
  }
  const runId = `${process.pid.toString(36)}${Date.now().toString(36).slice(-5)}`;
  const profDir = args.cpuProf ? join(ROOT, 'bench/results/profiles', runId) : undefined;
  const ctx: Ctx = {
    redis,
    quick: args.quick,
    rounds,
    runId,
    cpuProfDir: profDir,
    contenders: args.contenders,
    knobs: args.knobs,
    log: (l) => console.log(l),
  };
  let msgpackrNative: boolean | string = '?';
  try {
    msgpackrNative = ((await import('msgpackr')) as { isNativeAccelerationEnabled?: boolean }).isNativeAccelerationEnabled ?? false;
  } catch {
    /* not resolvable from here */
  }
  const hz = ((await redis.client.config('GET', 'hz')) as string[])[1];
  const meta = {
    date: new Date().toISOString(),
    mode: args.quick ? 'quick' : 'full',
    rounds,
    only: args.only,
    contenders: args.contenders,
    knobs: args.knobs,
    node: process.version,
    redis: { version: redis.version, private: redis.own, hz: Number(hz) },
    bullmq: version('bullmq'),
    ioredis: version('ioredis'),
    msgpackrNativeAcceleration: msgpackrNative,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    loadavgAtStart: loadavg(),
    commit: (() => {
      try {
        return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
          .toString()
          .trim();
      } catch {
        return undefined;
      }
    })(),
    cpuProfiles: profDir,
  };
  console.log(
    `Chronos benchmarks (${meta.mode}, ${rounds} round${rounds > 1 ? 's' : ''}) — Redis ${redis.version} ${redis.own ? 'private on ' + redis.url : 'EXTERNAL ' + redis.url + ' (counts include other clients)'}, hz ${hz}; ` +
      `Node ${process.version}, BullMQ ${meta.bullmq}, ${meta.cpus} CPUs, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  const results: WorkloadResult[] = [];
  for (const w of selected) {
    const t0 = Date.now();
    console.log(`${w.id}:`);
    try {
      const r = await w.run(ctx);
      r.seconds = (Date.now() - t0) / 1000;
      results.push(r);
    } catch (err) {
      console.error(`  ${w.id} FAILED: ${(err as Error).stack ?? String(err)}`);
      await killAllChildren();
      results.push({
        id: w.id,
        title: w.id,
        params: {},
        settings: {},
        contenders: [],
        runs: [],
        rows: [],
        error: String((err as Error).message ?? err),
      });
    }
  }
  const targets = judge(results, args.quick);
  console.log('\n' + mainTable(results));
  console.log(
    '\nCost per task (workload 5: per fire), medians over rounds (min–max); commands include the calls inside scripts:\n' +
      costTable(results),
  );
  console.log(
    `\nTargets (issues #5, #13, #15, #21, #22, 25)${args.quick ? ' — quick run: reduced sizes and timeouts, the verdicts below say nothing about the targets' : ''}:`,
  );
  for (const t of targets)
    console.log(
      `  [${t.met === undefined ? 'n/a   ' : t.met ? 'met   ' : 'MISSED'}] ${t.text}${t.detail ? ': ' + t.detail : ' (not measured in this run)'}`,
    );
  const seconds = (Date.now() - started) / 1000;
  mkdirSync(dirname(args.out), { recursive: true });
  writeFileSync(args.out, JSON.stringify(toJson({ ...meta, seconds }, results, targets), null, 2) + '\n');
  console.log(`\nWrote ${args.out} (${seconds.toFixed(1)} s)${profDir ? `; CPU profiles in ${profDir}` : ''}`);
  await redis.close();
  return results.some((r) => r.error) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error((err as Error).stack ?? String(err));
    killAllChildrenSync();
    process.exit(1);
  },
);
