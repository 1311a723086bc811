// node dist/bench/experiments/schedule-bulk.js [--n 100000] [--single 100000] [--inflight 64]
//
// The bulk runtime schedules API (issue 25 item 3) from one process on a fresh private Redis: N
// per-tenant digests (a cron at 03:00 in one of 5 zones, a small payload, 10 queues) written by
//   - before: `Scheduler.addSchedule` one at a time, `--inflight` calls in flight (the single path);
//   - after: one `addSchedules(N)` call, then `upsertSchedules` of the same N (unchanged: nothing is
//     written), of N changed definitions (a new payload: new generation + fence each), and
//     `removeSchedules` of the N names.
// Each reports schedules/s (wall time of the call, validation included), the slowest Redis command of
// the phase (SLOWLOG with a threshold of 0 µs, reset before each phase; the slowest script call is
// named by its sha), and for the adds the Redis memory per schedule: MEMORY USAGE of the registry
// hash ÷ N and the used_memory delta ÷ N. The Node-side validation of N definitions is timed alone.
import { createHash } from 'node:crypto';
import { Scheduler, type ScheduleDefinition } from '../../lib/core/index.js';
import { validateDefinitions } from '../../lib/core/admin/schedule-bulk.js';
import { SchedulerKeys } from '../../lib/core/redis/keys.js';
import { expandedSource, SCRIPT_NAMES } from '../../lib/core/redis/scripts.js';
import { BenchRedis } from '../lib/redis.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const n = arg('n', 100_000);
const single = arg('single', 100_000);
const inflight = arg('inflight', 64);
const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Sydney'];

function digest(i: number, version = 1): ScheduleDefinition {
  return {
    name: `tenant.${i}.digest`,
    spec: `${i % 60} 3 * * *`,
    timeZone: ZONES[i % 5],
    queue: `digests-${i % 10}`,
    type: 'digest.send',
    payload: { tenant: `t-${i}`, version },
  };
}

const redis = await BenchRedis.open(process.argv.includes('--redis-url') ? process.env.REDIS_URL : undefined);
const admin = redis.client;
const quiet = { log() {}, warn() {}, error() {} };
const scriptOf = new Map(SCRIPT_NAMES.map((s) => [createHash('sha1').update(expandedSource(s)).digest('hex'), s]));
await admin.config('SET', 'slowlog-max-len', '100000');
await admin.config('SET', 'slowlog-log-slower-than', '1000'); // 1 ms: logging every command would slow each script (its inner commands are logged too)

const used = async () => Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))![1]);

/** The slowest command since the last reset (µs), named (a script by its name), then a reset. */
async function slowest(): Promise<string> {
  const entries = (await admin.call('SLOWLOG', 'GET', '-1')) as [number, number, number, string[]][];
  await admin.call('SLOWLOG', 'RESET');
  const scripts = entries.filter(([, , , args]) => args[0].toLowerCase().startsWith('eval')).map(([, , us]) => us);
  const over10 = scripts.filter((us) => us > 10_000).length;
  const stats = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await admin.info('commandstats'));
  await admin.config('RESETSTAT');
  const perCall = stats ? `${stats[1]} script calls, ${(Number(stats[2]) / Number(stats[1]) / 1000).toFixed(2)} ms each on average, ` : '';
  let worst: [number, string] = [0, 'none'];
  let worstScript: [number, string] = [0, 'none'];
  for (const [, , us, args] of entries) {
    const cmd = args[0].toLowerCase();
    if (cmd === 'slowlog' || cmd === 'info' || cmd === 'memory') continue;
    const name = cmd.startsWith('eval') ? (scriptOf.get(args[1]) ?? 'a script') : cmd;
    if (us > worst[0]) worst = [us, name];
    if (cmd.startsWith('eval') && us > worstScript[0]) worstScript = [us, name];
  }
  return `${perCall}${over10} over 10 ms, slowest script call ${(worstScript[0] / 1000).toFixed(2)} ms (${worstScript[1]}), slowest command ${(worst[0] / 1000).toFixed(2)} ms (${worst[1]}), ${entries.length} commands`;
}

async function timed<T>(what: string, count: number, f: () => Promise<T>): Promise<T> {
  await admin.call('SLOWLOG', 'RESET');
  await admin.config('RESETSTAT');
  const t0 = performance.now();
  const r = await f();
  const ms = performance.now() - t0;
  console.log(
    `${what}: ${Math.round(count / (ms / 1000)).toLocaleString('en')} schedules/s (${count} in ${ms.toFixed(0)} ms); ${await slowest()}`,
  );
  return r;
}

async function memory(ns: string, count: number, before: number): Promise<void> {
  const hash = Number(await admin.call('MEMORY', 'USAGE', new SchedulerKeys(ns).schedules, 'SAMPLES', '0'));
  const delta = (await used()) - before;
  console.log(
    `  memory: registry hash ${(hash / count).toFixed(0)} B per schedule, used_memory delta ${(delta / count).toFixed(0)} B per schedule`,
  );
}

function scheduler(namespace: string): Scheduler {
  return new Scheduler({ connection: redis.url, namespace, eligible: false, logger: quiet });
}

console.log(
  `Redis ${redis.version}; ${n} schedules (bulk), ${single} (single, ${inflight} in flight); definitions like ${JSON.stringify(digest(7))}`,
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
  validateDefinitions(defs, 'UTC', 'bench');
  const vms = performance.now() - t0;
  console.log(`validation alone: ${Math.round(n / (vms / 1000)).toLocaleString('en')} definitions/s (${vms.toFixed(0)} ms)`);

  const s = scheduler('bulk');
  await s.start();
  const before = await used();
  const added = await timed(`after: addSchedules(${n})`, n, () => s.addSchedules(defs));
  if (added.added !== n) throw new Error(`added ${added.added} of ${n}`);
  await memory('bulk', n, before);
  const version = await admin.get(new SchedulerKeys('bulk').version);
  const same = await timed(`after: upsertSchedules(${n}) unchanged`, n, () => s.upsertSchedules(defs));
  if (same.unchanged !== n || (await admin.get(new SchedulerKeys('bulk').version)) !== version)
    throw new Error('an unchanged upsert wrote');
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
