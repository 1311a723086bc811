// node dist/bench/experiments/burst-redis.js [--n 100000] [--lead MS] [--split 1] [--perf FILE] [--redis-url URL --callgrind PID]
//
// Issue 25 ("schedules as data"), where Redis's time goes in a burst: N runtime schedules all due at one instant
// (bench/lib/schedules-data.ts `burst`, as workload 13's leader-alone burst) on a fresh private Redis, fired by one
// leader (a Scheduler in this process, every shard led here, no worker). For the window from 300 ms before the
// instant to the last fire of the instant it reports: triggers/s (N ÷ first-to-last fire), the leader's Node CPU
// µs per trigger (process.cpuUsage), Redis CPU µs per trigger (INFO cpu), and where Redis's command time went:
// per script (SLOWLOG of the calls of 50 µs or more, `--split 1`, the default: each script call mapped to its script
// by SHA; a script's own calls are listed apart; the small top-level calls are left out) and per inner command (INFO commandstats usec and
// calls). `--callgrind PID`: the redis-server at --redis-url runs under `valgrind --tool=callgrind --instr-atstart=no
// --callgrind-out-file=/tmp/b25b/cg.%p` (PID is valgrind's): Redis instructions per trigger over the window, a count
// the machine's load does not change (bench/experiments/fire-lua-cost.ts). `--perf FILE`: a `perf record` of the redis-server (user mode, flat: the binary is stripped, its dynamic symbols name the functions) over the window.
// CPU per trigger on a shared machine grows with contention: compare builds interleaved (bench/README.md).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { EventBus, Scheduler } from '../../lib/core/index.js';
import { expandedSource, SCRIPT_NAMES } from '../../lib/core/redis/scripts.js';
import { FIRE_LEAD } from '../../lib/core/redis/protocol.js';
import { burst } from '../lib/schedules-data.js';
import { BenchRedis } from '../lib/redis.js';
import { callgrindInstructions } from '../lib/callgrind.js';
import { nowMs, sleep } from '../lib/time.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const n = arg('n', 100_000);
const lead = arg('lead', 8_000 + n * 0.1);
const split = arg('split', 1) === 1;
const perfFile = process.argv.includes('--perf') ? process.argv[process.argv.indexOf('--perf') + 1] : undefined;
const quiet = { log() {}, warn() {}, error() {} };
const prefix = `burst-redis-${process.pid}`;

const url = process.argv.includes('--redis-url') ? process.argv[process.argv.indexOf('--redis-url') + 1] : undefined;
const callgrind = arg('callgrind', 0);
const instructions = (): number => callgrindInstructions(callgrind);
const redis = await BenchRedis.open(url);
const admin = redis.client;
const scriptOf = new Map(SCRIPT_NAMES.map((s) => [createHash('sha1').update(expandedSource(s)).digest('hex'), s]));
if (split) {
  await admin.config('SET', 'slowlog-max-len', '200000');
  await admin.config('SET', 'slowlog-log-slower-than', '50');
}

/** SLOWLOG since the last reset, by script name (or command): calls and total µs. */
async function perScript(): Promise<Map<string, { calls: number; us: number }>> {
  const entries = (await admin.call('SLOWLOG', 'GET', '-1')) as [number, number, number, string[], string][];
  const by = new Map<string, { calls: number; us: number }>();
  for (const [, , us, args, addr] of entries) {
    const cmd = args[0].toLowerCase();
    // Redis 7 logs a script's own calls too (with no client address): named apart, they are within their script's time
    const name = addr === '' ? `(in a script) ${cmd}` : cmd.startsWith('eval') ? (scriptOf.get(args[1]) ?? 'a script (EVAL)') : cmd;
    const s = by.get(name) ?? { calls: 0, us: 0 };
    s.calls++;
    s.us += us;
    by.set(name, s);
  }
  return by;
}

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; Redis ${redis.version} (private); N ${n}`,
);
try {
  const instant = Math.ceil((nowMs() + lead) / 1000) * 1000;
  const seeder = new Scheduler({ connection: redis.url, namespace: prefix, eligible: false, logger: quiet });
  await seeder.start();
  for (let i = 0; i < n; i += 10_000) {
    await seeder.addSchedules(Array.from({ length: Math.min(10_000, n - i) }, (_, k) => burst(i + k, instant)));
  }
  await seeder.stop();
  if (nowMs() > instant - 1500) throw new Error('seeding ran past the instant: raise --lead');

  const events = new EventBus();
  let fires = 0;
  let first = NaN;
  let lastFire = NaN;
  let done: (() => void) | undefined;
  const allFired = new Promise<void>((resolve) => (done = resolve));
  events.subscribe((e) => {
    if (e.type !== 'schedule.fired' || e.triggerAt !== instant) return;
    const t = nowMs();
    if (fires++ === 0) first = t;
    lastFire = t;
    if (fires === n) done?.();
  });
  const leader = new Scheduler({ connection: redis.url, namespace: prefix, events, logger: quiet });
  await leader.start();
  while (leader.shards.length < 16) await sleep(50);
  // the window starts before the first trigger may be fired: FIRE_LEAD.maxMs (5 s) ahead of the instant
  const from = instant - FIRE_LEAD.maxMs - 300;
  if (nowMs() > from) throw new Error('the leader started within 5 s of the instant: raise --lead');
  await sleep(from - nowMs());

  const perf = perfFile
    ? spawn('perf', ['record', '-e', 'cycles:u', '-F', '1999', '-p', String(redis.pid), '-o', perfFile], { stdio: 'ignore' })
    : undefined;
  if (split) await admin.call('SLOWLOG', 'RESET');
  const i0 = callgrind ? instructions() : 0;
  if (callgrind) spawnSync('callgrind_control', ['-i', 'on', String(callgrind)], { stdio: 'ignore' });
  const s0 = await redis.snapshot();
  const cpu0 = process.cpuUsage();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('timeout'), Math.max(120_000, n * 2))));
  const outcome = await Promise.race([allFired.then(() => 'fired'), timeout]);
  clearTimeout(timer);
  const cpu = process.cpuUsage(cpu0);
  const s1 = await redis.snapshot();
  if (callgrind) spawnSync('callgrind_control', ['-i', 'off', String(callgrind)], { stdio: 'ignore' });
  const irPerTrigger = callgrind ? (instructions() - i0) / fires : undefined;
  if (perf) {
    perf.kill('SIGINT');
    await new Promise((r) => perf.once('exit', r));
  }
  const scripts = split ? await perScript() : new Map<string, { calls: number; us: number }>();
  await leader.stop();

  const delta = redis.delta(s0, s1);
  const rate = fires / ((lastFire - first) / 1000);
  const nodeUs = (cpu.user + cpu.system) / fires;
  const redisUs = delta.cpuUs / fires;
  let topUs = 0;
  for (const [name, s] of scripts) if (!name.startsWith('(')) topUs += s.us;
  console.log(
    `${outcome}: ${fires} of ${n}, ${Math.round(rate).toLocaleString('en')} triggers/s (last ${Math.round(lastFire - instant)} ms after the instant); ` +
      `Node ${nodeUs.toFixed(2)} µs/trigger, Redis ${redisUs.toFixed(2)} µs/trigger` +
      (irPerTrigger === undefined ? '' : `, Redis ${Math.round(irPerTrigger)} instructions/trigger`) +
      (split ? ` (in commands ${(topUs / fires).toFixed(2)}, outside them ${((delta.cpuUs - topUs) / fires).toFixed(2)})` : ''),
  );
  for (const [name, s] of [...scripts].sort((a, b) => b[1].us - a[1].us)) {
    console.log(
      `  ${name.padEnd(22)} ${String(s.calls).padStart(7)} calls ${(s.us / fires).toFixed(2).padStart(7)} µs/trigger ${(s.us / s.calls).toFixed(1)} µs/call`,
    );
  }
  const inner: string[] = [];
  for (const [cmd, calls] of Object.entries(delta.byCommand).sort((a, b) => b[1] - a[1])) {
    const us = (s1.usec[cmd] ?? 0) - (s0.usec[cmd] ?? 0);
    inner.push(`${cmd} ${(calls / fires).toFixed(2)}/t ${(us / fires).toFixed(2)} µs/t`);
  }
  console.log(`  commandstats: ${inner.join('; ')}`);
  console.log(
    JSON.stringify({
      n,
      outcome,
      fires,
      triggersPerSec: Math.round(rate),
      nodeUsPerTrigger: Number(nodeUs.toFixed(2)),
      redisUsPerTrigger: Number(redisUs.toFixed(2)),
      redisInstructionsPerTrigger: irPerTrigger === undefined ? undefined : Math.round(irPerTrigger),
      loadAvg: loadavg().map((l) => Number(l.toFixed(2))),
    }),
  );
} finally {
  await redis.clean(prefix);
  await redis.close();
}
process.exit(0);
