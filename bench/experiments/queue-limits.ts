// Experiment (run by `npm run bench` as workload w12, bench/workloads/limits.ts; also on its own): fleet-wide limits and groups (issue 21), Chronos beside
// BullMQ where BullMQ has the feature, on a private redis-server (so INFO commandstats counts only this
// run), every worker a child process (bench/experiments/limits-worker.ts):
// - none / nobind: 100,000 empty tasks, 1 worker of c=50, without a limit and with a concurrency limit far
//   above the load (BullMQ: setGlobalConcurrency(1e6)); tasks/s and Redis commands per task;
// - conc: concurrency 5, 3 workers of c=50, 300 tasks of 100 ms (ideal 50/s); peak running (from every
//   handler's start/end, one clock) and tasks/s from the first start to the last end;
// - rate: rate 100 per 1000 ms, 3 workers of c=50, 600 empty tasks backlogged (BullMQ: the worker
//   limiter, which is global); the most starts in any 1 s window, starts per second over 5 whole windows;
// - groups (Chronos only: groups are BullMQ Pro's): 1,000 groups × 100 empty tasks backlogged, 3 workers of
//   c=50; once 2,000 have started, a fresh group of 10 tasks is enqueued at once: each one's start minus
//   its enqueue (p50 / p99 / max); the backlogged groups' shares of the first 10,000 starts (and the
//   fresh group's count there), and every group's share of the 10,000 starts after the fresh group came
//   (1,001 groups), against an equal share.
//   node dist/bench/experiments/queue-limits.js [--only chronos|bullmq] [--modes none,nobind,conc,rate,groups] [--redis-url URL]
import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/index.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { readSnapshot, type Snapshot } from '../lib/redis.js';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
};
const only = arg('only', 'chronos,bullmq').split(',');
/** Scales the task counts (a quick look: --scale 0.1). */
const scale = Number(arg('scale', '1'));
const sized = (n: number) => Math.max(10, Math.round(n * scale));
const log = (m: string) => void process.stderr.write(`${new Date().toISOString()} ${m}\n`);
type Mode = 'none' | 'nobind' | 'conc' | 'rate' | 'groups';
const modes = arg('modes', 'none,nobind,conc,rate,groups').split(',') as Mode[];
const WORKER = fileURLToPath(new URL('./limits-worker.js', import.meta.url));
const now = () => performance.timeOrigin + performance.now();

interface Rec {
  start: number;
  end: number;
  group?: string;
  at: number;
  /** Hand-out order (Chronos: from the stream entry id), 0 when unknown. */
  order: number;
}

interface Result {
  round?: number;
  contender: string;
  mode: Mode;
  tasks: number;
  perSecond: number;
  commandsPerTask: number;
  [k: string]: unknown;
}

/** Every child this run started (workers and the private Redis), killed if the run ends early. */
const started = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of started) c.kill('SIGKILL');
});

let redisUrl = arg('redis-url', '');
let privateRedis: ChildProcess | undefined;
if (!redisUrl) {
  const util = (await import(new URL('../../../scripts/redis-util.mjs', import.meta.url).href)) as {
    startRedisServer(): Promise<{ url: string; child: ChildProcess }>;
  };
  const r = await util.startRedisServer();
  redisUrl = r.url;
  privateRedis = r.child;
  started.add(r.child);
}
const admin = new Redis(redisUrl);

function commands(a: Snapshot, b: Snapshot): number {
  let n = 0;
  for (const [cmd, calls] of Object.entries(b.calls)) if (cmd !== 'info') n += calls - (a.calls[cmd] ?? 0);
  return n;
}

async function workers(lib: string, ns: string, n: number, concurrency: number, env: Record<string, string> = {}) {
  const children = await Promise.all(
    Array.from({ length: n }, async () => {
      const c = fork(WORKER, [lib, redisUrl, ns, String(concurrency)], { env: { ...process.env, ...env } });
      started.add(c);
      c.once('exit', () => started.delete(c));
      await new Promise<void>((resolve) => c.once('message', () => resolve()));
      return c;
    }),
  );
  return {
    go: () => children.forEach((c) => c.send({ go: true })),
    stop: async (): Promise<Rec[]> => {
      const parts = await Promise.all(
        children.map(
          (c) =>
            new Promise<Rec[]>((resolve) => {
              c.once('message', (m: { records: number[]; groups: string[] }) => {
                const out: Rec[] = [];
                for (let i = 0; i < m.records.length; i += 5) {
                  const [start, end, g, at, order] = m.records.slice(i, i + 5);
                  out.push({ start, end, group: g >= 0 ? m.groups[g] : undefined, at, order });
                }
                resolve(out);
              });
              c.send({ stop: true });
            }),
        ),
      );
      return parts.flat().sort((a, b) => a.start - b.start);
    },
  };
}

/** Resolves when `done()` is true (polled every 20 ms; an error, e.g. NOGROUP before the first fetch, is "not yet"). */
async function until(done: () => Promise<boolean>): Promise<void> {
  while (!(await done().catch(() => false))) await new Promise((r) => setTimeout(r, 20));
}

function peak(recs: Rec[]): number {
  const events = recs.flatMap((r) => [
    [r.start, 1],
    [r.end, -1],
  ]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]); // an end before a start at the same instant
  let running = 0;
  let max = 0;
  for (const [, d] of events) max = Math.max(max, (running += d));
  return max;
}

function maxInWindow(starts: number[], ms: number): number {
  let max = 0;
  for (let i = 0, j = 0; i < starts.length; i++) {
    while (starts[i] - starts[j] >= ms) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

function shares(recs: Rec[], groups: number): { min: number; max: number; maxErrPct: number } {
  const count = new Map<string, number>();
  for (const r of recs) count.set(r.group!, (count.get(r.group!) ?? 0) + 1);
  const equal = recs.length / groups;
  const values = [...count.values()];
  while (values.length < groups) values.push(0);
  const min = Math.min(...values);
  const max = Math.max(...values);
  return { min, max, maxErrPct: +((Math.max(max - equal, equal - min) / equal) * 100).toFixed(1) };
}

async function chronos(mode: Mode): Promise<Result> {
  const ns = `xlim-${Math.random().toString(36).slice(2, 8)}`;
  const client = new QueueClient({ connection: redisUrl, namespace: ns });
  const keys = new QueueKeys(ns, 'default');
  if (mode === 'conc') await client.setQueueLimits('default', { concurrency: 5 });
  if (mode === 'rate') await client.setQueueLimits('default', { rate: { max: 100, duration: 1000 } });
  if (mode === 'nobind') await client.setQueueLimits('default', { concurrency: 1_000_000 });
  const [n, procs, conc, ms] =
    mode === 'conc'
      ? [300, 3, 50, 100]
      : mode === 'rate'
        ? [600, 3, 50, 0]
        : mode === 'groups'
          ? [sized(100_000), 3, 50, 0]
          : [sized(100_000), 1, 50, 0];
  log(`chronos ${mode}: enqueueing ${n}`);
  for (let i = 0; i < n; i += 10_000) {
    const size = Math.min(10_000, n - i);
    await client.enqueueBulk(
      Array.from({ length: size }, (_, j) => ({
        type: 't',
        payload: ms ? { ms } : {},
        options: mode === 'groups' ? { group: `g${String((i + j) % 1000).padStart(4, '0')}` } : undefined,
      })),
    );
  }
  const w = await workers('chronos', ns, procs, conc);
  log(`chronos ${mode}: ${procs} workers ready`);
  const before = await readSnapshot(admin, true);
  // the rate log holds each hand-out's Redis time for a window: read every 200 ms, it gives them all
  const handedAt = new Map<string, number>();
  const sampler =
    mode === 'rate'
      ? setInterval(() => {
          void admin.zrange(keys.rateLog, 0, -1, 'WITHSCORES').then((r) => {
            for (let i = 0; i < r.length; i += 2) handedAt.set(r[i], Number(r[i + 1]));
          });
        }, 200)
      : undefined;
  w.go();
  const extra: Record<string, unknown> = {};
  let fresh = 0;
  if (mode === 'groups') {
    // once 20,000 have started, a fresh group of 10 at once, each noting its enqueue instant
    await until(async () => Number(await admin.hget(keys.limits, 'gwaiting')) <= n - n / 50);
    const at = now();
    await client.enqueueBulk(Array.from({ length: 10 }, () => ({ type: 't', payload: { at }, options: { group: 'fresh' } })));
    fresh = 10;
  }
  const total = n + fresh;
  await until(async () => {
    const [len, waiting, pending] = await Promise.all([
      admin.xlen(keys.stream),
      admin.hget(keys.limits, 'gwaiting'),
      admin.call('XPENDING', keys.stream, 'chronos') as Promise<[number]>,
    ]);
    return len === 0 && Number(waiting ?? 0) === 0 && pending[0] === 0;
  });
  const after = await readSnapshot(admin, true);
  clearInterval(sampler);
  if (sampler) {
    const r = await admin.zrange(keys.rateLog, 0, -1, 'WITHSCORES'); // the last window's
    for (let i = 0; i < r.length; i += 2) handedAt.set(r[i], Number(r[i + 1]));
  }
  const recs = await w.stop();
  const first = recs[0].start;
  const last = Math.max(...recs.map((r) => r.end));
  if (recs.length !== total) throw new Error(`chronos ${mode}: ${recs.length} runs for ${total} tasks`);
  if (mode === 'conc') extra.peak = peak(recs);
  if (mode === 'rate') {
    const starts = recs.map((r) => r.start);
    extra.maxIn1s = maxInWindow(starts, 1000);
    extra.startsPerSec = starts.filter((s) => s < first + 5000).length / 5;
    // on Redis time: the hand-outs, as the rate log recorded them
    const handed = [...handedAt.values()].sort((a, b) => a - b);
    extra.handOuts = handed.length;
    extra.maxHandOutsIn1s = maxInWindow(handed, 1000);
    extra.handOutsPerSec = handed.filter((t) => t < handed[0] + 5000).length / 5;
  }
  if (mode === 'groups') {
    const freshRecs = recs.filter((r) => r.group === 'fresh');
    const lat = freshRecs.map((r) => r.start - r.at).sort((a, b) => a - b);
    extra.freshP50Ms = +lat[Math.floor(lat.length / 2)].toFixed(1);
    extra.freshP99Ms = +lat[Math.min(lat.length - 1, Math.ceil(lat.length * 0.99) - 1)].toFixed(1);
    extra.freshMaxMs = +lat[lat.length - 1].toFixed(1);
    // the first 10,000 starts (the fresh group came after about 2,000): the backlogged groups' shares, and the fresh group's count
    const first10k = recs.slice(0, 10_000);
    extra.freshIn10k = first10k.filter((r) => r.group === 'fresh').length;
    extra.shareFirst10k = shares(
      first10k.filter((r) => r.group !== 'fresh'),
      1000,
    );
    const from = recs.findIndex((r) => r.start >= freshRecs[0].at);
    extra.shareAfterFresh10k = shares(recs.slice(from, from + 10_000), 1001);
    // the same by hand-out order (the order the script served the groups; starts across 3 processes may swap neighbours)
    const handed = [...recs].sort((a, b) => a.order - b.order);
    extra.handOutShareFirst10k = shares(
      handed.slice(0, 10_000).filter((r) => r.group !== 'fresh'),
      1000,
    );
    const hFrom = handed.findIndex((r) => r.group === 'fresh');
    extra.handOutShareAfterFresh10k = shares(handed.slice(hFrom, hFrom + 10_000), 1001);
  }
  await unlink(`${ns}:*`);
  await client.close();
  return {
    contender: 'chronos',
    mode,
    tasks: total,
    perSecond: +((total / (last - first)) * 1000).toFixed(1),
    commandsPerTask: +(commands(before, after) / total).toFixed(2),
    ...extra,
  };
}

async function bullmq(mode: Mode): Promise<Result | undefined> {
  if (mode === 'groups') return undefined; // BullMQ Pro only
  const prefix = `xlimb-${Math.random().toString(36).slice(2, 8)}`;
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('q', { connection, prefix });
  if (mode === 'conc') await queue.setGlobalConcurrency(5);
  if (mode === 'nobind') await queue.setGlobalConcurrency(1_000_000);
  const [n, procs, conc, ms] = mode === 'conc' ? [300, 3, 50, 100] : mode === 'rate' ? [600, 3, 50, 0] : [sized(100_000), 1, 50, 0];
  log(`bullmq ${mode}: adding ${n}`);
  for (let i = 0; i < n; i += 10_000) {
    const size = Math.min(10_000, n - i);
    await queue.addBulk(Array.from({ length: size }, () => ({ name: 't', data: ms ? { ms } : {}, opts: { removeOnComplete: true } })));
  }
  const env: Record<string, string> = mode === 'rate' ? { LIMITER: JSON.stringify({ max: 100, duration: 1000 }) } : {};
  const w = await workers('bullmq', prefix, procs, conc, env);
  const before = await readSnapshot(admin, true);
  w.go();
  await until(async () => {
    const c = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
    return Object.values(c).every((v) => v === 0);
  });
  const after = await readSnapshot(admin, true);
  const recs = await w.stop();
  if (recs.length !== n) throw new Error(`bullmq ${mode}: ${recs.length} runs for ${n} jobs`);
  const first = recs[0].start;
  const last = Math.max(...recs.map((r) => r.end));
  const extra: Record<string, unknown> = {};
  if (mode === 'conc') extra.peak = peak(recs);
  if (mode === 'rate') {
    const starts = recs.map((r) => r.start);
    extra.maxIn1s = maxInWindow(starts, 1000);
    extra.startsPerSec = starts.filter((s) => s < first + 5000).length / 5;
  }
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  return {
    contender: 'bullmq',
    mode,
    tasks: n,
    perSecond: +((n / (last - first)) * 1000).toFixed(1),
    commandsPerTask: +(commands(before, after) / n).toFixed(2),
    ...extra,
  };
}

async function unlink(match: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', match, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await admin.unlink(...keys);
  } while (cursor !== '0');
}

const rounds = Number(arg('rounds', '1'));
const results: Result[] = [];
for (let round = 1; round <= rounds; round++) {
  for (const mode of modes) {
    if (only.includes('chronos')) results.push({ round, ...(await chronos(mode)) });
    if (only.includes('bullmq')) {
      const r = await bullmq(mode);
      if (r) results.push({ round, ...r });
    }
    console.log(JSON.stringify(results[results.length - 1]));
  }
}
const SHARES = ['shareFirst10k', 'shareAfterFresh10k', 'handOutShareFirst10k', 'handOutShareAfterFresh10k'];
console.table(results.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !SHARES.includes(k)))));
// medians over rounds, and nobind ÷ none paired by round
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const c of ['chronos', 'bullmq']) {
  const of = (mode: Mode) => results.filter((r) => r.contender === c && r.mode === mode);
  const none = of('none');
  const nobind = of('nobind');
  if (none.length === 0 || nobind.length !== none.length) continue;
  const ratios = none.map((r, i) => nobind[i].perSecond / r.perSecond);
  console.log(
    `${c}: none ${median(none.map((r) => r.perSecond))}/s, nobind ${median(nobind.map((r) => r.perSecond))}/s, ` +
      `nobind/none median ${median(ratios).toFixed(3)} (min ${Math.min(...ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)}); ` +
      `commands/task none ${median(none.map((r) => r.commandsPerTask))}, nobind ${median(nobind.map((r) => r.commandsPerTask))}`,
  );
}
for (const r of results.filter((x) => x.mode === 'groups')) console.log('groups shares', r.shareFirst10k, r.shareAfterFresh10k);
mkdirSync(new URL('../../../bench/results/', import.meta.url), { recursive: true });
writeFileSync(new URL('../../../bench/results/queue-limits.json', import.meta.url), JSON.stringify(results, null, 2));
admin.disconnect();
privateRedis?.kill();
process.exit(0);
