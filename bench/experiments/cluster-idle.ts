// Experiment (not part of `npm run bench`): the idle cost of one ChronosServer on Q queues on a private
// 3-master Redis Cluster (per-queue blocking readers, the due-time index in its own slot): Redis
// commands/s summed over the masters, by command, with recovery on (default) and off (recoverInterval 1 h).
//   node dist/bench/experiments/cluster-idle.js [--queues 100] [--seconds 10]
import { ChronosServer } from '../../lib/core/index.js';
import { BenchServers } from '../lib/cluster.js';
import type { Snapshot } from '../lib/redis.js';
import { sleep } from '../lib/time.js';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const queues = arg('queues', 100);
const seconds = arg('seconds', 10);
const servers = await BenchServers.cluster(3);
const quiet = { log: () => {}, warn: () => {}, error: (m: string) => console.error(m) };

function sum(a: Snapshot[], b: Snapshot[]): Record<string, number> {
  const out: Record<string, number> = {};
  a.forEach((s0, i) => {
    for (const [k, v] of Object.entries(b[i].calls)) {
      const d = v - (s0.calls[k] ?? 0) - (k === 'info' ? 1 : 0);
      if (d > 0) out[k] = (out[k] ?? 0) + d;
    }
  });
  return out;
}

try {
  for (const recover of [true, false]) {
    const server = new ChronosServer({
      connection: servers.connection,
      namespace: `ci-${recover ? 'r' : 'n'}`,
      queues: Array.from({ length: queues }, (_, i) => `q${i}`),
      logger: quiet,
      ...(recover ? {} : { recoverInterval: 3_600_000 }),
    });
    await server.start();
    await sleep(2000);
    const s0 = await servers.snapshot();
    await sleep(seconds * 1000);
    const s1 = await servers.snapshot();
    await server.shutdown();
    const by = sum(s0, s1);
    const total = Object.values(by).reduce((x, y) => x + y, 0);
    const top = Object.entries(by)
      .sort((x, y) => y[1] - x[1])
      .map(([k, v]) => `${k} ${(v / seconds).toFixed(1)}`)
      .join(', ');
    console.log(`cluster, ${queues} queues, recovery ${recover ? 'on' : 'off'}: ${(total / seconds).toFixed(1)} cmd/s (${top})`);
  }
} finally {
  await servers.close();
}
