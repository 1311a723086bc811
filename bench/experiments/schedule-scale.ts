// Experiment (not part of `npm run bench`): the Node side of many schedules (issue 15 target 5). One
// Scheduler process declares N schedules (mixed crons in 5 zones, intervals 1 s – 1 day, over 10 queues),
// leads, loads and fires them on a private Redis; no worker runs. It reports:
//   - parse: the time to register() the N definitions (validation + spec parsing), ms;
//   - heap per schedule after GC, leader loaded (heapUsed delta from before register ÷ N), bytes;
//   - the time from start() to the first fire (boot registration + the leader's load), ms;
//   - the longest event-loop block (perf_hooks.monitorEventLoopDelay max, and the part of it this process
//     spent on the CPU: the machine may be shared) during register (the caller's synchronous loop),
//     during start + load, and during the firing window, ms;
//   - in the window: fires, the leader's Node CPU % (process.cpuUsage), Redis commands/s.
// `--mode idle` declares schedules that do not come due in the window (yearly crons, @every 1d):
// the leader's idle cost. `--mode distinct`: every schedule a distinct cron expression (nothing shared). Run with --expose-gc (the heap figure needs it):
//   node --expose-gc dist/bench/experiments/schedule-scale.js --n 10000 [--mode active|idle] [--seconds 12]
// Each N in its own process (a clean heap): for n in 1000 10000 50000; do node --expose-gc ... --n $n; done
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { Scheduler, EventBus, type ScheduleDefinition } from '../../lib/core/index.js';
import { BenchRedis } from '../lib/redis.js';
import { sleep } from '../lib/time.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};
const n = Number(arg('n', '10000'));
const mode = arg('mode', 'active');
const seconds = Number(arg('seconds', '12'));
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const ZONES = ['UTC', 'Europe/Budapest', 'America/New_York', 'Asia/Kolkata', 'Australia/Sydney'];
const EVERY = ['1s', '10s', '30s', '1m', '5m', '15m', '1h', '6h', '1d'];

/** Schedule i of the mix: 60% crons (5 shapes × 5 zones, many distinct expressions), 40% intervals. */
function definition(i: number): ScheduleDefinition {
  const base = { name: `s${i}`, queue: `q${i % 10}`, type: 'report', payload: { n: i, to: 'ops@example.com' } };
  if (mode === 'distinct') {
    // the worst case for sharing: every cron expression distinct (not due in the window)
    return {
      ...base,
      spec: `${i % 60} ${Math.floor(i / 60) % 24} ${1 + (Math.floor(i / 1440) % 28)} ${1 + (i % 12)} *`,
      timeZone: ZONES[i % 5],
    };
  }
  if (mode === 'idle') {
    return i % 5 < 3
      ? { ...base, spec: `${i % 60} ${i % 24} 1 1 *`, timeZone: ZONES[i % 5] }
      : { ...base, spec: { every: '1d', offset: ((i % 20) + 1) * 3_600_000 } };
  }
  if (i % 5 < 3) {
    const k = Math.floor(i / 5);
    const shapes = [
      `${k % 60} ${(k * 7) % 24} * * *`,
      `${k % 60} */${1 + (k % 6)} * * *`,
      `${k % 60} ${k % 24} * * ${1 + (k % 5)}`,
      `0 ${k % 24} ${1 + (k % 28)} * *`,
      `*/${[5, 10, 15, 30][k % 4]} * * * *`,
    ];
    return { ...base, spec: shapes[k % 5]!, timeZone: ZONES[i % 5] };
  }
  // intervals: 1 s for 1 in 50 schedules, 10 s (the aligned burst) for 1 in 10, the rest 30 s – 1 day
  const every = i % 50 === 3 ? '1s' : i % 10 === 4 ? '10s' : EVERY[2 + (i % 7)]!;
  return { ...base, spec: `@every ${every}` };
}

const redis = await BenchRedis.open(process.argv.includes('--redis-url') ? process.env.REDIS_URL : undefined);
const quiet = { log() {}, warn() {}, error() {} };
const events = new EventBus();
let fires = 0;
let firstFire: (() => void) | undefined;
const firstFired = new Promise<void>((resolve) => (firstFire = resolve));
let lostLeadership = 0;
events.subscribe((e) => {
  if (e.type === 'schedule.fired') {
    fires++;
    firstFire?.();
  } else if (e.type === 'leader.lost') lostLeadership++;
});
const h = monitorEventLoopDelay({ resolution: 5 });
// The machine is shared: a delay can be another process holding the core. A probe every 5 ms also
// takes this process's CPU time over each gap; min(gap, own CPU) is the part this process spent.
let ownMax = 0;
let last = performance.now();
let lastCpu = process.cpuUsage();
const probe = setInterval(() => {
  const at = performance.now();
  const cpu = process.cpuUsage(lastCpu);
  ownMax = Math.max(ownMax, Math.min(at - last - 5, (cpu.user + cpu.system) / 1000));
  last = at;
  lastCpu = process.cpuUsage();
}, 5);
let gcMax = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    // the experiment's own gc() calls (for the heap figure) are not the scheduler's pauses
    const flags = (e as { detail?: { flags?: number } }).detail?.flags ?? 0;
    if ((flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) === 0) gcMax = Math.max(gcMax, e.duration);
  }
}).observe({ entryTypes: ['gc'] });
/** The longest event-loop delay since the last call, ms: as monitored, the CPU this process used meanwhile, and the longest GC pause. */
const blockMs = (): { delay: number; ownCpu: number; gc: number } => {
  const r = { delay: Math.round(h.max / 1e6), ownCpu: Math.round(ownMax), gc: Math.round(gcMax) };
  h.reset();
  ownMax = 0;
  gcMax = 0;
  return r;
};

gc();
const heap0 = process.memoryUsage().heapUsed;
h.enable();
const scheduler = new Scheduler({ connection: redis.url, namespace: `sched-scale-${process.pid}`, events, logger: quiet });
let t = performance.now();
for (let i = 0; i < n; i++) scheduler.register(definition(i));
const parseMs = performance.now() - t;
await sleep(20); // let the monitor record the register loop (one synchronous block)
const parseBlock = blockMs();
t = performance.now();
await scheduler.start();
const startMs = performance.now() - t;
const startBlock = blockMs();
if (mode === 'active') await firstFired;
else await sleep(3000);
const loadMs = performance.now() - t;
const loadBlock = blockMs(); // from the end of start() to the first fire
gc();
const heapPerSchedule = Math.round((process.memoryUsage().heapUsed - heap0) / n);

const fires0 = fires;
const snap0 = await redis.snapshot();
const cpu0 = process.cpuUsage();
const w0 = performance.now();
h.reset();
await sleep(seconds * 1000);
const wallMs = performance.now() - w0;
const cpu = process.cpuUsage(cpu0);
const windowBlock = blockMs();
const redisDelta = redis.delta(snap0, await redis.snapshot());
await scheduler.stop();
clearInterval(probe);
const result = {
  n,
  mode,
  parseMs: Math.round(parseMs),
  parseUsPerSchedule: Number(((parseMs * 1000) / n).toFixed(1)),
  startMs: Math.round(startMs),
  startToFirstFireMs: Math.round(loadMs),
  heapBytesPerSchedule: heapPerSchedule,
  maxBlockMs: { register: parseBlock, start: startBlock, load: loadBlock, window: windowBlock },
  window: {
    seconds: Number((wallMs / 1000).toFixed(1)),
    fires: fires - fires0,
    leaderCpuPercent: Number((((cpu.user + cpu.system) / 1000 / wallMs) * 100).toFixed(2)),
    redisCommandsPerS: Math.round((redisDelta.commands / wallMs) * 1000),
    redisCpuPercent: Number(((redisDelta.cpuUs / 1000 / wallMs) * 100).toFixed(2)),
  },
  lostLeadership,
};
console.log(JSON.stringify(result));
await redis.close();
process.exit(0);
