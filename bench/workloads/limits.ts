// Workload 12: fleet-wide limits and groups (issue 21), Chronos beside BullMQ where BullMQ has the
// feature. It runs bench/experiments/queue-limits.ts as a child process (its own private redis-server,
// so INFO commandstats counts only its work; every worker a child process of its own) and turns its
// results (bench/results/queue-limits.json) into this run's records, one per round and contender:
// - a limit that does not bind (concurrency 10⁶) against none: the throughput cost (%) and the Redis
//   commands per task of each;
// - `concurrency: 5` over 3 workers of c=50, 100 ms tasks: the peak running and tasks/s (ideal 50);
// - `rate: 100 / 1000 ms` over 3 workers: the most hand-outs (Chronos: by Redis time, from the rate
//   log; BullMQ: handler starts) in any 1 s window and hand-outs per second while backlogged;
// - groups (Chronos only; BullMQ has them in Pro): a fresh group of 10 behind 1,000 backlogged groups,
//   start − enqueue p99, and the worst group's share of 10,000 hand-outs off equal (%).
// --quick runs the first three at a tenth of the counts (a smoke: the rate and groups parts need their
// full size to mean anything).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pick, type Ctx, type RunRecord, type WorkloadResult } from './common.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXPERIMENT = join(HERE, '../experiments/queue-limits.js');
const RESULTS = resolve(HERE, '../../../bench/results/queue-limits.json');

interface Share {
  maxErrPct: number;
}

interface ExperimentResult {
  round: number;
  contender: string;
  mode: 'none' | 'nobind' | 'conc' | 'rate' | 'groups';
  perSecond: number;
  commandsPerTask: number;
  peak?: number;
  maxIn1s?: number;
  startsPerSec?: number;
  maxHandOutsIn1s?: number;
  handOutsPerSec?: number;
  freshP99Ms?: number;
  handOutShareFirst10k?: Share;
}

function runExperiment(args: string[], log: (line: string) => void): Promise<void> {
  return new Promise((done, fail) => {
    const child = execFile(process.execPath, [EXPERIMENT, ...args], { maxBuffer: 64 * 1024 * 1024 }, (err) => (err ? fail(err) : done()));
    child.stderr?.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n')) if (line.trim()) log(`  [limits] ${line.trim()}`);
    });
  });
}

/** One round's record of one contender from the experiment's results (undefined when it ran nothing). */
function record(all: ExperimentResult[], round: number, contender: string): RunRecord | undefined {
  const of = (mode: ExperimentResult['mode']) => all.find((r) => r.round === round && r.contender === contender && r.mode === mode);
  const m: Record<string, number> = {};
  const none = of('none');
  const nobind = of('nobind');
  if (none && nobind) {
    m.rateNone = none.perSecond;
    m.rateNobind = nobind.perSecond;
    m.nobindRatio = nobind.perSecond / none.perSecond;
    m.cmdsNone = none.commandsPerTask;
    m.cmdsNobind = nobind.commandsPerTask;
  }
  const conc = of('conc');
  if (conc) {
    m.concPeak = conc.peak ?? NaN;
    m.concRate = conc.perSecond;
  }
  const rate = of('rate');
  if (rate) {
    m.rateMaxIn1s = rate.maxHandOutsIn1s ?? rate.maxIn1s ?? NaN;
    m.ratePerSec = rate.handOutsPerSec ?? rate.startsPerSec ?? NaN;
  }
  const groups = of('groups');
  if (groups) {
    m.freshP99Ms = groups.freshP99Ms ?? NaN;
    m.shareErrPct = groups.handOutShareFirst10k?.maxErrPct ?? NaN;
  }
  return Object.keys(m).length > 0 ? { round, contender, metrics: m } : undefined;
}

export async function limitsWorkload(ctx: Ctx): Promise<WorkloadResult> {
  const contenders = pick(ctx, ['chronos', 'bullmq']);
  const modes = ctx.quick ? 'none,nobind,conc' : 'none,nobind,conc,rate,groups';
  const scale = ctx.quick ? '0.1' : '1';
  const args = ['--rounds', String(ctx.rounds), '--modes', modes, '--scale', scale, '--only', contenders.join(',')];
  await runExperiment(args, ctx.log);
  const all = JSON.parse(readFileSync(RESULTS, 'utf8')) as ExperimentResult[];
  const runs: RunRecord[] = [];
  for (let round = 1; round <= ctx.rounds; round++)
    for (const c of contenders) {
      const r = record(all, round, c);
      if (r) runs.push(r);
    }
  return {
    id: 'w12',
    title: 'fleet-wide limits and groups (issue 21)',
    params: { modes, scale: Number(scale), rounds: ctx.rounds },
    settings: { chronos: { concurrency: 50, workers: '1 (none/nobind), 3 (conc, rate, groups)' }, bullmq: { concurrency: 50 } },
    contenders,
    runs,
    rows: [
      {
        label: 'no limit: tasks/s (1 worker, c=50)',
        metric: 'rateNone',
        unit: '/s',
        higherIsBetter: true,
        a: 'chronos',
        b: 'bullmq',
        decimals: 0,
      },
      {
        label: 'non-binding limit: tasks/s',
        metric: 'rateNobind',
        unit: '/s',
        higherIsBetter: true,
        a: 'chronos',
        b: 'bullmq',
        decimals: 0,
      },
      { label: 'non-binding ÷ none (paired by round)', metric: 'nobindRatio', unit: '×', higherIsBetter: true, a: 'chronos', b: 'bullmq' },
      { label: 'no limit: commands/task', metric: 'cmdsNone', unit: 'cmd', higherIsBetter: false, a: 'chronos', b: 'bullmq' },
      { label: 'non-binding limit: commands/task', metric: 'cmdsNobind', unit: 'cmd', higherIsBetter: false, a: 'chronos', b: 'bullmq' },
      {
        label: 'concurrency 5: peak running',
        metric: 'concPeak',
        unit: 'tasks',
        higherIsBetter: false,
        a: 'chronos',
        b: 'bullmq',
        decimals: 0,
      },
      {
        label: 'concurrency 5: tasks/s (ideal 50)',
        metric: 'concRate',
        unit: '/s',
        higherIsBetter: true,
        a: 'chronos',
        b: 'bullmq',
        decimals: 1,
      },
      {
        label: 'rate 100/s: most in a 1 s window',
        metric: 'rateMaxIn1s',
        unit: 'tasks',
        higherIsBetter: false,
        a: 'chronos',
        b: 'bullmq',
        decimals: 0,
      },
      {
        label: 'rate 100/s: per second backlogged',
        metric: 'ratePerSec',
        unit: '/s',
        higherIsBetter: true,
        a: 'chronos',
        b: 'bullmq',
        decimals: 1,
      },
      { label: 'fresh group behind 1,000: start p99', metric: 'freshP99Ms', unit: 'ms', higherIsBetter: false, a: 'chronos', decimals: 1 },
      { label: 'groups: worst share off equal', metric: 'shareErrPct', unit: '%', higherIsBetter: false, a: 'chronos', decimals: 1 },
    ],
    notes: [
      'Rate: Chronos counts hand-outs on Redis time (its rate log); BullMQ counts handler starts on the machine clock.',
      'Commands per task with a non-binding limit: one fetch script (~4 commands) per fetch instead of one XREADGROUP.',
    ],
  };
}
