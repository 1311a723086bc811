// node dist/bench/experiments/schedule-bulk.js [--n 100000] [--single 100000] [--inflight 64] [--labels] [--compact]
//
// The bulk runtime schedules API (issue 25 item 3) from one process on a fresh private Redis: N
// per-tenant digests (a cron at 03:00 in one of 5 zones, a small payload, 10 queues) written by
//   - before: `Scheduler.addSchedule` one at a time, `--inflight` calls in flight (the single path);
//   - after: one `addSchedules(N)` call, then `upsertSchedules` of the same N (unchanged: nothing is
//     written), of N changed definitions (a new payload: new generation + fence each), and
//     `removeSchedules` of the N names.
// Each reports schedules/s (wall time of the call, validation included), this process's CPU per schedule
// (process.cpuUsage: validation, fingerprints, JSON, the client; GC included), Redis's CPU per schedule, the
// duration of each script call in Redis by script (SLOWLOG with a threshold of 0.1 ms, reset before
// each phase: p50, p99, max, calls over 10 ms; wall time, so a preempted Redis stretches a call), and for the adds the Redis memory per schedule: MEMORY USAGE of the registry
// hash ÷ N and the used_memory delta ÷ N. The Node-side validation of N definitions is timed alone.
// The machine may be shared: the load average is printed first (a busy core stretches a call).
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { Scheduler, type ScheduleDefinition } from '../../lib/core/index.js';
import { validateDefinitions } from '../../lib/core/admin/schedule-bulk.js';
import { finishStored } from '../../lib/core/scheduler/definition-check.js';
import { shardKeysOf } from '../../lib/core/redis/keys.js';
import { expandedSource, SCRIPT_NAMES } from '../../lib/core/redis/scripts.js';
import { BenchRedis } from '../lib/redis.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const n = arg('n', 100_000);
const single = arg('single', 100_000);
const inflight = arg('inflight', 64);
/** Two labels per definition (plan and region), as w13's digests carry them. */
const labels = process.argv.includes('--labels');
/** `compactSchedules: true`, as w13's writers (bench/children/sd-admin.ts) run. */
const compact = process.argv.includes('--compact');
const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Sydney'];

function digest(i: number, version = 1): ScheduleDefinition {
  return {
    name: `tenant.${i}.digest`,
    spec: `${i % 60} 3 * * *`,
    timeZone: ZONES[i % 5],
    queue: `digests-${i % 10}`,
    type: 'digest.send',
    payload: { tenant: `t-${i}`, version },
    ...(labels ? { labels: { plan: ['free', 'pro', 'team'][i % 3], region: `r${i % 8}` } } : {}),
  };
}

const redis = await BenchRedis.open(process.argv.includes('--redis-url') ? process.env.REDIS_URL : undefined);
const admin = redis.client;
const quiet = { log() {}, warn() {}, error() {} };
const scriptOf = new Map(SCRIPT_NAMES.map((s) => [createHash('sha1').update(expandedSource(s)).digest('hex'), s]));
const SLOWLOG_LEN = 100_000;
await admin.config('SET', 'slowlog-max-len', String(SLOWLOG_LEN));
// every command of 0.1 ms or more: every bulk script call, not the microsecond commands scripts run inside
await admin.config('SET', 'slowlog-log-slower-than', '100');

const used = async () => Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))![1]);

/**
 * The script calls of 0.1 ms or more since the last reset, by script: count, p50, p99 and max (ms)
 * from SLOWLOG; then a reset. The commands a script runs are logged too (after it) and left out here.
 */
async function scriptCalls(): Promise<string> {
  const entries = (await admin.call('SLOWLOG', 'GET', '-1')) as [number, number, number, string[]][];
  await admin.call('SLOWLOG', 'RESET');
  const by = new Map<string, number[]>();
  for (const [, , us, args] of entries) {
    if (!args[0].toLowerCase().startsWith('eval')) continue;
    const name = scriptOf.get(args[1]) ?? 'a script (EVAL)';
    by.set(name, [...(by.get(name) ?? []), us / 1000]);
  }
  const parts: string[] = [];
  for (const [name, ms] of by) {
    ms.sort((x, y) => x - y);
    const q = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))].toFixed(2);
    const over = ms.filter((v) => v > 10).length;
    parts.push(`${name} ×${ms.length}: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms, ${over} over 10 ms`);
  }
  return parts.join('; ') + (entries.length >= SLOWLOG_LEN ? ` (the last ${SLOWLOG_LEN} commands only)` : '');
}

async function timed<T>(what: string, count: number, f: () => Promise<T>): Promise<T> {
  await admin.call('SLOWLOG', 'RESET');
  const cpu0 = await redis.snapshot();
  const node0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await f();
  const ms = performance.now() - t0;
  const node = process.cpuUsage(node0);
  const cpuUs = redis.delta(cpu0, await redis.snapshot()).cpuUs;
  console.log(`${what}: ${Math.round(count / (ms / 1000)).toLocaleString('en')} schedules/s (${count} in ${ms.toFixed(0)} ms)`);
  console.log(
    `  Node CPU ${((node.user + node.system) / count).toFixed(1)} µs per schedule (this process), ` +
      `Redis CPU ${(cpuUs / count).toFixed(1)} µs per schedule (used_cpu_user + sys); ${await scriptCalls()}`,
  );
  return r;
}

async function memory(ns: string, count: number, before: number): Promise<void> {
  let hash = 0;
  for (const k of shardKeysOf(ns)) hash += Number(await admin.call('MEMORY', 'USAGE', k.schedules, 'SAMPLES', '0'));
  const delta = (await used()) - before;
  console.log(
    `  memory: registry hash ${(hash / count).toFixed(0)} B per schedule, used_memory delta ${(delta / count).toFixed(0)} B per schedule`,
  );
}

function scheduler(namespace: string): Scheduler {
  return new Scheduler({ connection: redis.url, namespace, eligible: false, logger: quiet, compactSchedules: compact });
}

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(
      ' ',
    )}; Redis ${redis.version}; ${n} schedules (bulk), ${single} (single, ${inflight} in flight); definitions like ${JSON.stringify(digest(7))}`,
);
try {
  // before: the single path
  if (single > 0) {
    const s = scheduler('single');
    await s.start();
    const before = await used();
    await timed(`before: addSchedule ×${single}, ${inflight} in flight`, single, async () => {
      let next = 0;
      const lane = async () => {
        while (next < single) await s.addSchedule(digest(next++));
      };
      await Promise.all(Array.from({ length: inflight }, lane));
    });
    await memory('single', single, before);
    await s.stop();
    await redis.clean('single');
  }

  // Node-side validation alone (what every bulk call does first)
  const defs = Array.from({ length: n }, (_, i) => digest(i));
  const t0 = performance.now();
  const checked = validateDefinitions(defs, 'UTC', 'bench'); // the checks, then the registry forms (made chunk by chunk in a call)
  const t1 = performance.now();
  checked.forEach((c) => finishStored(c, compact));
  const vms = performance.now() - t0;
  console.log(
    `validation alone: ${Math.round(n / (vms / 1000)).toLocaleString('en')} definitions/s (${vms.toFixed(0)} ms: checks ` +
      `${(((t1 - t0) * 1000) / n).toFixed(1)} µs, registry forms ${(((performance.now() - t1) * 1000) / n).toFixed(1)} µs per definition)`,
  );

  const s = scheduler('bulk');
  await s.start();
  const before = await used();
  const added = await timed(`after: addSchedules(${n})`, n, () => s.addSchedules(defs));
  if (added.added !== n) throw new Error(`added ${added.added} of ${n}`);
  await memory('bulk', n, before);
  const versions = async (): Promise<string> => (await Promise.all(shardKeysOf('bulk').map((k) => admin.get(k.version)))).join(',');
  const version = await versions();
  const same = await timed(`after: upsertSchedules(${n}) unchanged`, n, () => s.upsertSchedules(defs));
  if (same.unchanged !== n || (await versions()) !== version) throw new Error('an unchanged upsert wrote');
  const changedDefs = defs.map((_, i) => digest(i, 2));
  const changed = await timed(`after: upsertSchedules(${n}) changed`, n, () => s.upsertSchedules(changedDefs));
  if (changed.changed !== n) throw new Error(`changed ${changed.changed} of ${n}`);
  const removed = await timed(`after: removeSchedules(${n})`, n, () => s.removeSchedules(defs.map((d) => d.name)));
  if (removed.removed !== n) throw new Error(`removed ${removed.removed} of ${n}`);
  await s.stop();
  await redis.clean('bulk');
} finally {
  await redis.close();
}
