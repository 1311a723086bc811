// Experiment (not part of `npm run bench`): where each master's Redis CPU goes in workload 8 (issue 22
// target 5). The w8 run (3 queues hashed to the 3 masters, one worker child at concurrency 50, N tasks
// pre-enqueued, window = `go` → every stream empty), per node of a private 3-master cluster and of a
// private standalone Redis, alternated by round: per command calls and µs per task, socket reads and
// writes per task (INFO stats), Redis CPU per task; then the same worker's start-up alone (1 task) and
// 1 s of it idle after the drain, so the per-task figures can be told from the fixed and time-based ones.
//   node dist/bench/experiments/cluster-cost.js [--n 30000] [--rounds 3] [--detail] [--pin]
// --pin: the worker on CPU 0 and every redis-server on CPU 1 (taskset), cluster and standalone alike: the
// masters then take turns on one core instead of preempting the worker at each wake-up (what the CPU per
// call is worth without that contention; the other processes of the machine still run on both).
import { spawnSync } from 'node:child_process';
import { TASK_TYPE, payload } from '../lib/common.js';
import { BenchServers, type NodeSnapshots } from '../lib/cluster.js';
import { BenchChild } from '../lib/children.js';
import type { Snapshot } from '../lib/redis.js';
import { sleep } from '../lib/time.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const N = arg('n', 30_000);
const ROUNDS = arg('rounds', 3);
const DETAIL = process.argv.includes('--detail');
const PIN = process.argv.includes('--pin');

function pin(pid: number | undefined, cpu: number): void {
  if (PIN && pid !== undefined) spawnSync('taskset', ['-pc', String(cpu), String(pid)], { stdio: 'ignore' });
}
const CONCURRENCY = 50;

interface NodeDelta {
  cpuUs: number;
  calls: Record<string, number>;
  usec: Record<string, number>;
  reads: number;
  writes: number;
  /** error replies by prefix (MOVED, ASK, NOSCRIPT…) */
  errors: Record<string, number>;
}

function delta(a: Snapshot, b: Snapshot): NodeDelta {
  const calls: Record<string, number> = {};
  const usec: Record<string, number> = {};
  for (const [k, v] of Object.entries(b.calls)) {
    const d = v - (a.calls[k] ?? 0) - (k === 'info' ? 1 : 0);
    if (d > 0) {
      calls[k] = d;
      usec[k] = b.usec[k] - (a.usec[k] ?? 0);
    }
  }
  const errors: Record<string, number> = {};
  for (const [k, v] of Object.entries(b.io.errors)) if (v > (a.io.errors[k] ?? 0)) errors[k] = v - (a.io.errors[k] ?? 0);
  // which commands failed (–ERR…, MOVED…): `failed <command>` counts
  for (const [k, v] of Object.entries(b.failed)) if (v > (a.failed[k] ?? 0)) errors[`failed ${k}`] = v - (a.failed[k] ?? 0);
  // the INFO of the reading: one read and one write
  return {
    errors,
    cpuUs: (b.cpuSec - a.cpuSec) * 1e6,
    calls,
    usec,
    reads: b.io.reads - a.io.reads - 1,
    writes: b.io.writes - a.io.writes - 1,
  };
}

const deltas = (a: NodeSnapshots, b: NodeSnapshots) => a.map((s, i) => delta(s, b[i]));

function queuesOnMasters(cluster: BenchServers, ns: string): string[] {
  const found = new Map<number, string>();
  for (let i = 0; found.size < cluster.nodes.length && i < 10_000; i++) {
    const node = cluster.nodeOf(new QueueKeys(ns, `q${i}`).stream);
    if (!found.has(node)) found.set(node, `q${i}`);
  }
  return [...found.entries()].sort((a, b) => a[0] - b[0]).map(([, q]) => q);
}

async function fill(servers: BenchServers, prefix: string, queues: string[], n: number): Promise<void> {
  const { QueueClient } = await import('../../lib/core/index.js');
  const client = new QueueClient({ connection: servers.connection, namespace: prefix });
  try {
    for (let i = 0; i < n; i += 999) {
      const batch = [];
      for (let j = i; j < Math.min(n, i + 999); j++)
        batch.push({ type: TASK_TYPE, payload: payload(j), options: { queue: queues[j % queues.length] } });
      await client.enqueueBulk(batch);
    }
  } finally {
    await client.close();
  }
}

// "commandstats": the µs INFO commandstats gives, summed: wall time inside commands (longer when Redis is
// preempted in one), a script's inner calls counted in it and again under their own names.

/** One worker child over `n` tasks: the drain window and, after it, 1 s idle. */
async function run(servers: BenchServers, queues: string[], prefix: string, n: number) {
  await fill(servers, prefix, queues, n);
  const config = { lib: 'chronos', url: '', connection: servers.connection, queues, prefix, n, concurrency: CONCURRENCY, mode: 'drain' };
  const child = await BenchChild.start('processor', prefix, config);
  pin(child.pid, 0);
  for (const nd of servers.nodes) pin(nd.child.pid, 1);
  try {
    const s0 = await servers.snapshot();
    child.send({ type: 'go' });
    const done = await child.waitFor('done', 120_000 + n * 10);
    const s1 = await servers.snapshot();
    await sleep(1000);
    const s2 = await servers.snapshot();
    return { ms: done.ms as number, nodeUs: done.cpuUs as number, drain: deltas(s0, s1), idle: deltas(s1, s2) };
  } finally {
    await child.stop();
  }
}

const f = (x: number, d = 2) => x.toFixed(d);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function describe(label: string, nodes: NodeDelta[], n: number, ms: number): void {
  const line = nodes.map((nd) => {
    const cmds = sum(Object.values(nd.calls));
    const cmdUs = sum(Object.values(nd.usec));
    const errs = Object.entries(nd.errors).map(([k, v]) => `${k} ${v}`);
    return `cpu ${f(nd.cpuUs / n, 2)} µs (commandstats ${f(cmdUs / n, 2)}), ${f(cmds / n, 3)} cmd, ${f(nd.reads / n, 3)} reads, ${f(nd.writes / n, 3)} writes, error replies: ${errs.join(', ') || 'none'}`;
  });
  console.log(`  ${label} (${Math.round(ms)} ms), per task, node by node:`);
  for (const l of line) console.log(`    ${l}`);
  if (!DETAIL) return;
  nodes.forEach((nd, i) => {
    const rows = Object.keys(nd.calls)
      .sort((a, b) => nd.usec[b] - nd.usec[a])
      .map((k) => `${k} ${f(nd.calls[k] / n, 4)}×${f(nd.usec[k] / Math.max(1, nd.calls[k]), 1)}µs`);
    console.log(`    node ${i}: ${rows.join(', ')}`);
  });
}

const cluster = await BenchServers.cluster(3);
const standalone = await BenchServers.standalone();
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of ['cluster', 'standalone'] as const) {
      const servers = kind === 'cluster' ? cluster : standalone;
      const prefix = `cc-${process.pid}-r${round}-${kind}`;
      const queues = queuesOnMasters(cluster, prefix);
      const r = await run(servers, queues, prefix, N);
      const cpu = sum(r.drain.map((d) => d.cpuUs)) / N;
      console.log(
        `round ${round} ${kind}: ${Math.round(N / (r.ms / 1000))}/s, Redis ${f(cpu, 2)} µs/task, Node ${f(r.nodeUs / N, 1)} µs/task`,
      );
      describe('drain', r.drain, N, r.ms);
      describe('idle 1 s after (per 1,000 tasks: ÷ 1000)', r.idle, 1000, 1000);
      const s = await run(servers, queues, `${prefix}-start`, 1);
      describe('start-up, 1 task (whole window)', s.drain, 1, s.ms);
    }
  }
} finally {
  await cluster.close();
  await standalone.close();
}
