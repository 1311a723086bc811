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
import { costTable, mainTable, toJson } from './lib/report.js';
import { judge } from './lib/targets.js';
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
import { schedulesDataWorkload } from './workloads/schedules-data.js';
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
