// node dist/bench/experiments/leader-fire.js [--schedules 1000] [--warm 3] [--seconds 20] [--runs 1] [--profile FILE] [--alloc FILE] [--redis-url URL]
// Issue 22 target 4: the leader's Node CPU per fire, alone. One Scheduler in this process declares
// `schedules` schedules '@every 1s' (as workload 5's) on a fresh namespace of a private redis-server
// (by default), leads every shard, and nothing else runs here (no worker: the tasks stay in the
// stream; fire.lua's path is the same, as overlap 'allow' never looks at them). After `warm` seconds,
// from a whole second on for `seconds` seconds: Node CPU µs per fire (process.cpuUsage, user +
// system; a fire = a schedule.fired event), Redis commands per fire (INFO commandstats delta) and the
// Redis CPU µs per fire. `--alloc FILE.heapprofile`: a sampling heap profile of the window (1 KiB
// sampling; every allocation, collected or not; `--alloc-live`: only what is still live at its end)
// and the bytes allocated per fire (the garbage collector's work grows with them). `--profile FILE.cpuprofile`: a V8 CPU profile of that window only
// (node:inspector, 1 ms sampling; summarise it with bench/profile-summary.ts). CPU time on a shared
// machine only grows with contention: compare builds interleaved, by the least of several runs.
// The default 3 s warm-up leaves the JIT still compiling the leader's per-tick code for about a
// minute: `--warm 45` (or runs 2+ of `--runs`) measures a warm leader (bench/README.md, 2026-12-07).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { BenchRedis } from '../lib/redis.js';
import { TASK_TYPE, payload } from '../lib/common.js';
import { nowMs, sleep, sleepUntil } from '../lib/time.js';

const args = process.argv.slice(2);
function num(name: string, def: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
}
const url = args.includes('--redis-url') ? args[args.indexOf('--redis-url') + 1] : undefined;
const schedules = num('schedules', 1000);
const warmS = num('warm', 3);
const seconds = num('seconds', 20);
const runs = num('runs', 1);
const profile = args.includes('--profile') ? args[args.indexOf('--profile') + 1] : undefined;
const alloc = args.includes('--alloc') ? args[args.indexOf('--alloc') + 1] : undefined;
const session = profile || alloc ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
}

interface RunResult {
  usPerFire: number;
  sysUsPerFire: number;
  fires: number;
  cmdsPerFire: number;
  redisUsPerFire: number;
  /** With --alloc: bytes allocated per fire (the sampling heap profile's total). */
  allocatedPerFire?: number;
}

interface HeapNode {
  selfSize: number;
  children: HeapNode[];
}
function sampledBytes(n: HeapNode): number {
  return n.children.reduce((sum, c) => sum + sampledBytes(c), n.selfSize);
}

async function runOnce(redis: BenchRedis, round: number): Promise<RunResult> {
  const { Scheduler, EventBus } = await import('../../lib/core/index.js');
  const namespace = `leader-fire-${process.pid}-${round}`;
  const events = new EventBus();
  const quiet = { log() {}, warn() {}, error() {} };
  const scheduler = new Scheduler({ connection: redis.url, namespace, events, logger: quiet });
  for (let i = 0; i < schedules; i++) scheduler.register({ name: `s${i}`, spec: '@every 1s', type: TASK_TYPE, payload: payload(i) });
  let measuring = false;
  let fires = 0;
  events.subscribe((e) => {
    if (measuring && e.type === 'schedule.fired') fires++;
  });
  await scheduler.start();
  await sleep(warmS * 1000);
  // the triggers of an instant are fired about 500 ms ahead of it (their lead): a window of whole seconds from
  // a whole second holds `seconds` bursts wholly
  await sleepUntil(Math.ceil(nowMs() / 1000) * 1000);
  const s0 = await redis.snapshot();
  if (session && profile) await session.post('Profiler.start');
  if (session && alloc) {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: !args.includes('--alloc-live'),
      includeObjectsCollectedByMinorGC: !args.includes('--alloc-live'),
    } as never);
  }
  const cpu0 = process.cpuUsage();
  measuring = true;
  await sleep(seconds * 1000);
  measuring = false;
  const cpu = process.cpuUsage(cpu0);
  let allocated: number | undefined;
  if (session && profile) {
    const file = runs > 1 ? profile.replace(/(\.cpuprofile)?$/, `-${round}.cpuprofile`) : profile;
    writeFileSync(file, JSON.stringify((await session.post('Profiler.stop')).profile));
  }
  if (session && alloc) {
    const file = runs > 1 ? alloc.replace(/(\.heapprofile)?$/, `-${round}.heapprofile`) : alloc;
    const { profile: heap } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(file, JSON.stringify(heap));
    allocated = sampledBytes(heap.head);
  }
  const s1 = await redis.snapshot();
  const delta = redis.delta(s0, s1);
  await scheduler.stop();
  await redis.clean(namespace);
  return {
    usPerFire: (cpu.user + cpu.system) / fires,
    sysUsPerFire: cpu.system / fires,
    fires,
    cmdsPerFire: delta.commands / fires,
    redisUsPerFire: delta.cpuUs / fires,
    allocatedPerFire: allocated === undefined ? undefined : allocated / fires,
  };
}

const redis = await BenchRedis.open(url);
try {
  const us: number[] = [];
  for (let r = 1; r <= runs; r++) {
    const res = await runOnce(redis, r);
    us.push(res.usPerFire);
    console.log(
      `run ${r}: ${res.usPerFire.toFixed(2)} µs/fire Node CPU (${res.sysUsPerFire.toFixed(2)} sys), ${res.fires} fires, ` +
        `${res.cmdsPerFire.toFixed(2)} commands/fire, ${res.redisUsPerFire.toFixed(2)} µs/fire Redis CPU` +
        (res.allocatedPerFire === undefined ? '' : `, ${Math.round(res.allocatedPerFire)} B/fire allocated`),
    );
  }
  if (runs > 1) {
    const sorted = [...us].sort((a, b) => a - b);
    console.log(`µs/fire over ${runs} runs: min ${sorted[0].toFixed(2)}, median ${sorted[Math.floor(runs / 2)].toFixed(2)}`);
  }
} finally {
  await redis.close();
}
process.exit(0);
