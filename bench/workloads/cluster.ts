// Workload 8: the same processing on a 3-master Redis Cluster and on one standalone Redis, side by
// side in one run: 3 queues whose streams hash to the 3 masters, one worker process serving all
// three (concurrency 50), pre-enqueued tasks split evenly. Both Redis setups are private (started
// here on free loopback ports, same settings); every reading is per node.
import { TASK_TYPE, payload } from '../lib/common.js';
import { BenchServers, type NodeSnapshots } from '../lib/cluster.js';
import { BenchChild } from '../lib/children.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { fmt, fmtInt, prefixFor, type Ctx, type RunRecord, type WorkloadResult } from './common.js';

const CONCURRENCY = 50;
const MASTERS = 3;

/** Three queue names whose streams (in namespace `ns`) hash to three different masters of `cluster`. */
function queuesOnMasters(cluster: BenchServers, ns: string): string[] {
  const found = new Map<number, string>();
  for (let i = 0; found.size < cluster.nodes.length && i < 10_000; i++) {
    const name = `q${i}`;
    const node = cluster.nodeOf(new QueueKeys(ns, name).stream);
    if (!found.has(node)) found.set(node, name);
  }
  return [...found.entries()].sort((a, b) => a[0] - b[0]).map(([, q]) => q);
}

/** Per node: commands (minus the INFO of the reading) and Redis CPU µs between two readings. */
function perNode(before: NodeSnapshots, after: NodeSnapshots): { commands: number; cpuUs: number; byCommand: Record<string, number> }[] {
  return after.map((a, i) => {
    const b = before[i];
    const byCommand: Record<string, number> = {};
    let commands = 0;
    for (const [name, calls] of Object.entries(a.calls)) {
      const d = calls - (b.calls[name] ?? 0) - (name === 'info' ? 1 : 0);
      if (d > 0) {
        byCommand[name] = d;
        commands += d;
      }
    }
    return { commands, cpuUs: Math.max(0, (a.cpuSec - b.cpuSec) * 1e6), byCommand };
  });
}

async function fillQueues(servers: BenchServers, prefix: string, queues: string[], n: number): Promise<void> {
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

export async function clusterWorkload(ctx: Ctx): Promise<WorkloadResult> {
  const id = 'w8';
  const n = ctx.quick ? 3_000 : 30_000;
  const runs: RunRecord[] = [];
  const contenders = ['cluster', 'standalone'];
  const cluster = await BenchServers.cluster(MASTERS);
  const standalone = await BenchServers.standalone();
  let queues: string[];
  try {
    for (let round = 1; round <= ctx.rounds; round++) {
      const line: string[] = [];
      for (const kind of contenders) {
        const servers = kind === 'cluster' ? cluster : standalone;
        const prefix = prefixFor(ctx, `${id}-r${round}-${kind}`);
        queues = queuesOnMasters(cluster, prefix);
        await fillQueues(servers, prefix, queues, n);
        const config = {
          lib: 'chronos',
          url: '',
          connection: servers.connection,
          queues,
          prefix,
          n,
          concurrency: CONCURRENCY,
          mode: 'drain',
        };
        const child = await BenchChild.start('processor', `${id}-${kind}-r${round}`, config, { cpuProfDir: ctx.cpuProfDir });
        let done;
        let nodes;
        try {
          const s0 = await servers.snapshot();
          child.send({ type: 'go' });
          done = await child.waitFor('done', 120_000 + n * 10);
          nodes = perNode(s0, await servers.snapshot());
        } finally {
          await child.stop();
        }
        const harness = (done.harness as Record<string, number>) ?? {};
        const byCommand: Record<string, number> = {};
        for (const nd of nodes) for (const [k, v] of Object.entries(nd.byCommand)) byCommand[k] = (byCommand[k] ?? 0) + v;
        for (const [k, v] of Object.entries(harness)) byCommand[k] = Math.max(0, (byCommand[k] ?? 0) - v);
        const commands = Object.values(byCommand).reduce((a, b) => a + b, 0);
        const cpuUs = nodes.reduce((a, nd) => a + nd.cpuUs, 0);
        const ms = done.ms as number;
        const metrics: Record<string, number> = {
          rate: n / (ms / 1000),
          cmdsPerTask: commands / n,
          redisUsPerTask: cpuUs / n,
          nodeUsPerTask: (done.cpuUs as number) / n,
        };
        nodes.forEach((nd, i) => {
          metrics[`redisUsPerTaskNode${i}`] = nd.cpuUs / n;
          metrics[`cmdsPerTaskNode${i}`] = nd.commands / n;
        });
        runs.push({ round, contender: kind, metrics, byCommand, units: n });
        const perMaster = kind === 'cluster' ? ` [per master ${nodes.map((nd) => fmt(nd.cpuUs / n, 1)).join(' / ')} µs]` : '';
        line.push(
          `${kind} ${fmtInt(metrics.rate)}/s (${fmt(metrics.cmdsPerTask)} cmd/task, Redis ${fmt(metrics.redisUsPerTask, 1)} µs/task${perMaster})`,
        );
      }
      const c = runs.find((r) => r.round === round && r.contender === 'cluster')!.metrics.rate;
      const s = runs.find((r) => r.round === round && r.contender === 'standalone')!.metrics.rate;
      ctx.log(`  ${id} round ${round}/${ctx.rounds}: ${line.join('  ')}  cluster/standalone ${fmt(c / s)}×`);
    }
    // each master's Redis CPU per task as a share of the standalone's, paired by round
    for (const r of runs.filter((x) => x.contender === 'cluster')) {
      const base = runs.find((x) => x.round === r.round && x.contender === 'standalone')!.metrics.redisUsPerTask;
      for (let i = 0; i < MASTERS; i++) r.metrics[`shareNode${i}`] = r.metrics[`redisUsPerTaskNode${i}`] / base;
    }
    // the per-master rows compare each master with the standalone's one node (its whole Redis CPU)
    for (const r of runs.filter((x) => x.contender === 'standalone')) {
      for (let i = 1; i < MASTERS; i++) r.metrics[`redisUsPerTaskNode${i}`] = r.metrics.redisUsPerTask;
    }
  } finally {
    await cluster.close();
    await standalone.close();
  }
  const what = `process ${fmtInt(n)} on 3 queues, concurrency ${CONCURRENCY}`;
  const setup = 'private redis-servers, same settings (no persistence, defaults); one worker process';
  return {
    id,
    title: `8. ${what}: 3-master cluster vs one Redis`,
    params: { tasks: n, concurrency: CONCURRENCY, masters: MASTERS, queues: 'one per master (names vary by run prefix)' },
    settings: {
      cluster: `ChronosServer { connection: { cluster: seeds }, queues: [3 queues, one per master], concurrency: ${CONCURRENCY} } — ${setup}`,
      standalone: `ChronosServer { connection: url, same queues, concurrency: ${CONCURRENCY} } — ${setup}`,
    },
    contenders,
    runs,
    rows: [
      {
        label: `8. ${what} (cluster ÷ one Redis)`,
        metric: 'rate',
        unit: 'tasks/s',
        higherIsBetter: true,
        a: 'cluster',
        b: 'standalone',
        decimals: 0,
      },
      {
        label: '  commands per task (cluster ÷ one Redis)',
        metric: 'cmdsPerTask',
        unit: 'cmd/task',
        higherIsBetter: false,
        a: 'cluster',
        b: 'standalone',
      },
      {
        label: '  Redis CPU per task, all nodes',
        metric: 'redisUsPerTask',
        unit: 'µs/task',
        higherIsBetter: false,
        a: 'cluster',
        b: 'standalone',
        decimals: 1,
      },
      ...Array.from({ length: MASTERS }, (_, i) => ({
        label: `  Redis CPU per task, master ${i + 1} (÷ one Redis)`,
        metric: `redisUsPerTaskNode${i}`,
        unit: 'µs/task',
        higherIsBetter: false,
        a: 'cluster',
        b: 'standalone',
        decimals: 1,
      })),
    ],
    cost: { per: 'task', contenders },
    notes: [
      'Columns: "Chronos" = the cluster, "BullMQ" = one standalone Redis; the ratio is cluster ÷ standalone, paired by round.',
      "Master rows: that master's Redis CPU per task; its ratio is its share of the standalone's (about 1/3 each when the load spreads evenly).",
    ],
  };
}
