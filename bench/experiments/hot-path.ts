// node dist/bench/experiments/hot-path.js [--tasks 100000] [--warm 10000] [--concurrency 50] [--runs 1] [--limit] [--redis-url URL]
// Issue 22 target 1: the worker's Node CPU per task on its hot path. Pre-enqueues `tasks` tasks on a
// fresh namespace (a private redis-server by default, so INFO commandstats counts only this run), runs
// one ChronosServer at `concurrency` with a no-op handler in this process, and reports, from the
// `warm`-th handled task (start-up and JIT left out) until the last one is acknowledged (the stream is
// empty): Node CPU µs per task (process.cpuUsage, user + system), Redis commands per task (INFO
// commandstats delta, script-inner calls included, the harness's own INFO/XLEN taken out) and tasks/s.
// Nothing else runs in this process during the window. `--profile FILE.cpuprofile`: a V8 CPU profile
// of that window only (node:inspector, 100 µs sampling; summarise it with bench/profile-summary.ts).
// `--limit`: the same window for w3's read-only limit loop instead (bench/children/processor.ts: XREADGROUP
// COUNT c, XACK + XDEL of the batch pipelined with the next read, JSON.parse of each payload) on the same
// Chronos-filled stream, so the two compare warm, where the bench's w3-c50 counts from start-up.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { BenchRedis, type Snapshot } from '../lib/redis.js';
import { LIMIT_GROUP, TASK_TYPE, payload } from '../lib/common.js';
import { nowMs, sleep } from '../lib/time.js';

const args = process.argv.slice(2);
function num(name: string, def: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
}
const url = args.includes('--redis-url') ? args[args.indexOf('--redis-url') + 1] : undefined;
const tasks = num('tasks', 100_000);
const warm = num('warm', 10_000);
const concurrency = num('concurrency', 50);
const runs = num('runs', 1);
const profile = args.includes('--profile') ? args[args.indexOf('--profile') + 1] : undefined;
const limit = args.includes('--limit');
const session = profile ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
}

interface RunResult {
  cpuUsPerTask: number;
  /** of which system (kernel: socket writes and reads), µs per task */
  sysUsPerTask: number;
  cmdsPerTask: number;
  rate: number;
  byCommand: Record<string, number>;
}

async function runOnce(redis: BenchRedis, round: number): Promise<RunResult> {
  const { ChronosServer, QueueKeys } = await import('../../lib/core/internal.js');
  const { QueueClient } = await import('../../lib/core/index.js');
  const { Redis } = await import('ioredis');
  const namespace = `hot-${process.pid}-${round}`;
  const client = new QueueClient({ connection: redis.url, namespace });
  for (let i = 0; i < tasks; i += 1000) {
    const batch = [];
    for (let j = i; j < Math.min(tasks, i + 1000); j++) batch.push({ type: TASK_TYPE, payload: payload(j) });
    await client.enqueueBulk(batch);
  }
  await client.close();
  const probe = new Redis(redis.url);
  const stream = new QueueKeys(namespace, 'default').stream;
  let handled = 0;
  let s0!: Promise<Snapshot>;
  let cpu0!: NodeJS.CpuUsage;
  let t0 = 0;
  let resolveAll!: () => void;
  const all = new Promise<void>((r) => (resolveAll = r));
  const onTask = (): void => {
    if (++handled === warm) {
      cpu0 = process.cpuUsage();
      t0 = nowMs();
      s0 = redis.snapshot();
      if (session) void session.post('Profiler.start');
    }
    if (handled === tasks) resolveAll();
  };
  let stop: () => Promise<void>;
  if (limit) {
    const conn = new Redis(redis.url);
    await conn.xgroup('CREATE', stream, LIMIT_GROUP, '0', 'MKSTREAM');
    await probe.ping();
    void limitLoop(conn, stream, onTask).catch(() => undefined); // its last read, blocked on the empty stream, ends at the disconnect
    stop = async () => conn.disconnect();
  } else {
    const server = new ChronosServer({ connection: redis.url, namespace, concurrency });
    server.handle<{ n: number }>(TASK_TYPE, onTask);
    await server.redis.ping();
    await probe.ping();
    await server.start();
    stop = () => server.shutdown();
  }
  await all;
  // acks are batched: the stream is empty once the last one is written
  let xlen = 0;
  for (;;) {
    xlen++;
    if ((await probe.xlen(stream)) === 0) break;
    await sleep(1);
  }
  const cpu = process.cpuUsage(cpu0);
  const cpuUs = cpu.user + cpu.system;
  const ms = nowMs() - t0;
  if (session && profile) writeFileSync(profile, JSON.stringify((await session.post('Profiler.stop')).profile));
  const s1 = await redis.snapshot();
  const delta = redis.delta(await s0, s1, { xlen });
  await stop();
  probe.disconnect();
  await redis.clean(namespace);
  const counted = tasks - warm;
  return {
    cpuUsPerTask: cpuUs / counted,
    sysUsPerTask: cpu.system / counted,
    cmdsPerTask: delta.commands / counted,
    rate: counted / (ms / 1000),
    byCommand: delta.byCommand,
  };
}

/** w3's read-only limit loop (bench/children/processor.ts), until the stream is drained: the last batch's acks are written with a read that finds nothing. */
async function limitLoop(conn: import('ioredis').Redis, stream: string, onTask: () => void): Promise<void> {
  type Reply = [string, [string, string[]][]][] | null;
  let ids: string[] = [];
  let read = 0;
  while (read < tasks || ids.length > 0) {
    const p = conn.pipeline();
    if (ids.length) {
      p.xack(stream, LIMIT_GROUP, ...ids);
      p.xdel(stream, ...ids);
    }
    p.call('XREADGROUP', 'GROUP', LIMIT_GROUP, 'c', 'COUNT', concurrency, 'BLOCK', 1000, 'STREAMS', stream, '>');
    const res = (await p.exec()) ?? [];
    const reply = res[res.length - 1][1] as Reply;
    ids = [];
    for (const [, entries] of reply ?? []) {
      for (const [id, fields] of entries) {
        ids.push(id);
        read++;
        JSON.parse(fields[fields.indexOf('payload') + 1]);
        onTask();
      }
    }
  }
}

const redis = await BenchRedis.open(url);
try {
  const us: number[] = [];
  for (let r = 1; r <= runs; r++) {
    const res = await runOnce(redis, r);
    us.push(res.cpuUsPerTask);
    const cmds = Object.entries(res.byCommand)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${(v / (tasks - warm)).toFixed(3)}`)
      .join(', ');
    console.log(
      `run ${r}: ${res.cpuUsPerTask.toFixed(2)} µs/task Node CPU (${res.sysUsPerTask.toFixed(2)} sys), ${res.cmdsPerTask.toFixed(3)} commands/task, ${Math.round(res.rate)} tasks/s  [${cmds}]`,
    );
  }
  // on a shared machine CPU time only grows with contention: the least of several runs is the steadiest figure
  if (runs > 1) {
    const sorted = [...us].sort((a, b) => a - b);
    console.log(`µs/task over ${runs} runs: min ${sorted[0].toFixed(2)}, median ${sorted[Math.floor(runs / 2)].toFixed(2)}`);
  }
} finally {
  await redis.close();
}
