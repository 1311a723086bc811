// node --expose-gc dist/bench/experiments/burst-block.js [--n 200000] [--late 0] [--lead 0]
//
// Issue 25 ("schedules as data"), the leader's event loop in a burst: N runtime schedules all due at one
// instant (bench/lib/schedules-data.ts `burst`, one trigger an hour) on a fresh private Redis, fired by one
// leader (a Scheduler in this process, every shard led here, no worker: the trigger tasks stay in the
// stream). It reports, for the window from just before the instant to the last fire of the instant:
//   - fires/s (N ÷ first-to-last fire), and the last fire − the instant;
//   - the longest event-loop block: perf_hooks.monitorEventLoopDelay max (1 ms resolution), a 5 ms
//     setInterval drift probe (the longest gap − 5 ms) and the part of that gap this process spent on the
//     CPU (the machine may be shared), and the longest GC pause;
//   - the slowest Redis calls: SLOWLOG of the private Redis (threshold 1 ms) by script, max and the count
//     over 10 ms (wall time in Redis: a preempted Redis stretches a call);
//   - the leader's heap: the highest heapUsed sampled every 50 ms in the window, and heapUsed after GC
//     once the burst is fired (both minus the baseline after GC before the leader started).
// `--late MS`: the leader starts MS after the instant (a fleet outage: the burst is a catch-up, planned by
// the catch-up policy). `--lead MS`: the seeding's margin before the instant (default from N).
// The load average is printed first: a busy machine stretches every number.
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { EventBus, Scheduler } from '../../lib/core/index.js';
import { expandedSource, SCRIPT_NAMES } from '../../lib/core/redis/scripts.js';
import { burst } from '../lib/schedules-data.js';
import { BenchRedis } from '../lib/redis.js';
import { nowMs, sleep } from '../lib/time.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const n = arg('n', 200_000);
const late = arg('late', 0);
const lead = arg('lead', 3_000 + n * 0.1);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const quiet = { log() {}, warn() {}, error() {} };
const prefix = `burst-block-${process.pid}`;

const redis = await BenchRedis.open();
const admin = redis.client;
const scriptOf = new Map(SCRIPT_NAMES.map((s) => [createHash('sha1').update(expandedSource(s)).digest('hex'), s]));
await admin.config('SET', 'slowlog-max-len', '100000');
await admin.config('SET', 'slowlog-log-slower-than', '1000');

/** SLOWLOG since the last reset, by command (a script by its name): count, max ms, count over 10 ms. */
async function slowCalls(): Promise<{ maxMs: number; over10: number; text: string }> {
  const entries = (await admin.call('SLOWLOG', 'GET', '-1')) as [number, number, number, string[]][];
  const by = new Map<string, number[]>();
  for (const [, , us, args] of entries) {
    const cmd = args[0].toLowerCase();
    const name = cmd.startsWith('eval') ? (scriptOf.get(args[1]) ?? 'a script (EVAL)') : cmd;
    by.set(name, [...(by.get(name) ?? []), us / 1000]);
  }
  let maxMs = 0;
  let over10 = 0;
  const parts: string[] = [];
  for (const [name, ms] of [...by].sort((a, b) => Math.max(...b[1]) - Math.max(...a[1]))) {
    const max = Math.max(...ms);
    const over = ms.filter((v) => v > 10).length;
    maxMs = Math.max(maxMs, max);
    over10 += over;
    parts.push(`${name} ×${ms.length} ≥1 ms, max ${max.toFixed(2)} ms, ${over} over 10 ms`);
  }
  return { maxMs, over10, text: parts.join('; ') || 'no call of 1 ms or more' };
}

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; Redis ${redis.version} (private); N ${n}; leader starts ${late > 0 ? `${late} ms after` : 'before'} the instant`,
);
try {
  // seeding (not measured): N burst schedules due at `instant`
  const instant = Math.ceil((nowMs() + lead) / 1000) * 1000;
  const seeder = new Scheduler({ connection: redis.url, namespace: prefix, eligible: false, logger: quiet });
  await seeder.start();
  const t0 = nowMs();
  for (let i = 0; i < n; i += 10_000) {
    await seeder.addSchedules(Array.from({ length: Math.min(10_000, n - i) }, (_, k) => burst(i + k, instant)));
  }
  await seeder.stop();
  console.log(`seeded ${n} in ${Math.round(nowMs() - t0)} ms; the instant is ${Math.round(instant - nowMs())} ms ahead`);
  if (nowMs() > instant - 500 && late === 0) throw new Error('seeding ran past the instant: raise --lead');
  if (late > 0) await sleep(instant + late - nowMs());

  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const events = new EventBus();
  let fires = 0;
  let first = NaN;
  let lastFire = NaN;
  let lost = 0;
  let done: (() => void) | undefined;
  const allFired = new Promise<void>((resolve) => (done = resolve));
  events.subscribe((e) => {
    if (e.type === 'leader.lost' && fires < n) {
      lost++;
      console.log(`leader.lost at ${Math.round(nowMs() - instant)} ms from the instant: shards ${e.shards.join(',')} (${e.reason})`);
    }
    if (e.type !== 'schedule.fired' || e.triggerAt !== instant) return;
    const t = nowMs();
    if (fires++ === 0) first = t;
    lastFire = t;
    if (fires === n) done?.();
  });
  const leader = new Scheduler({ connection: redis.url, namespace: prefix, events, logger: quiet });
  await leader.start();
  while (leader.shards.length < 16) await sleep(50);
  if (late === 0) await sleep(instant - 300 - nowMs());

  // the window: from here (300 ms before the instant, or the leader's start when late) to the last fire
  const h = monitorEventLoopDelay({ resolution: 1 });
  let probeMax = 0;
  let probeAt = NaN;
  let ownMax = 0;
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  const probe = setInterval(() => {
    const at = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    if (at - last - 5 > probeMax) {
      probeMax = at - last - 5;
      probeAt = nowMs() - instant;
    }
    ownMax = Math.max(ownMax, Math.min(at - last - 5, (cpu.user + cpu.system) / 1000));
    last = at;
    lastCpu = process.cpuUsage();
  }, 5);
  let heapMax = 0;
  const heapProbe = setInterval(() => (heapMax = Math.max(heapMax, process.memoryUsage().heapUsed)), 50);
  let gcMax = 0;
  const gcs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const flags = (e as { detail?: { flags?: number } }).detail?.flags ?? 0;
      if ((flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) === 0) gcMax = Math.max(gcMax, e.duration);
    }
  });
  gcs.observe({ entryTypes: ['gc'] });
  await admin.call('SLOWLOG', 'RESET');
  h.enable();
  const cpu0 = process.cpuUsage();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('timeout'), Math.max(120_000, n * 2))));
  const outcome = await Promise.race([allFired.then(() => 'fired'), timeout]);
  clearTimeout(timer);
  h.disable();
  const cpu = process.cpuUsage(cpu0);
  clearInterval(probe);
  clearInterval(heapProbe);
  gcs.disconnect();
  const slow = await slowCalls();
  gc();
  const heapAfter = process.memoryUsage().heapUsed;
  await leader.stop();

  const rate = fires / ((lastFire - first) / 1000);
  const result = {
    n,
    late,
    outcome,
    fires,
    firesPerSec: Math.round(rate),
    firstMs: Math.round(first - instant),
    lastMs: Math.round(lastFire - instant),
    maxBlockMs: {
      monitor: Math.round(h.max / 1e6),
      monitorP99: Math.round(h.percentile(99) / 1e6),
      probe: Math.round(probeMax),
      probeEndedAtMs: Math.round(probeAt),
      probeOwnCpu: Math.round(ownMax),
      gc: Math.round(gcMax),
    },
    slowestRedisMs: Number(slow.maxMs.toFixed(2)),
    redisCallsOver10ms: slow.over10,
    leaderCpuMs: Math.round((cpu.user + cpu.system) / 1000),
    heapMb: { windowMax: Math.round((heapMax - heap0) / 1e6), afterGc: Math.round((heapAfter - heap0) / 1e6) },
    leaderLost: lost,
    loadAvg: loadavg().map((l) => Number(l.toFixed(2))),
  };
  console.log(
    `${outcome}: ${fires} of ${n} fires, ${result.firesPerSec.toLocaleString('en')} fires/s (first ${result.firstMs} ms, last ${result.lastMs} ms after the instant); ` +
      `max block: monitor ${result.maxBlockMs.monitor} ms (p99 ${result.maxBlockMs.monitorP99}), probe ${result.maxBlockMs.probe} ms ` +
      `(ended ${result.maxBlockMs.probeEndedAtMs} ms from the instant) ` +
      `(own CPU ${result.maxBlockMs.probeOwnCpu} ms), GC ${result.maxBlockMs.gc} ms; leader CPU ${result.leaderCpuMs} ms; ` +
      `heap +${result.heapMb.windowMax} MB max in the window, +${result.heapMb.afterGc} MB after GC; leadership lost ${lost}×`,
  );
  console.log(`Redis calls ≥ 1 ms: ${slow.text}`);
  console.log(JSON.stringify(result));
} finally {
  await redis.clean(prefix);
  await redis.close();
}
