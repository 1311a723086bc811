// Private Redis servers for workload 8: a 3-master Redis Cluster and one standalone Redis with the
// same settings, each on free loopback ports, started and stopped by pid. Every reading of Redis CPU
// and commands is per node (INFO cpu commandstats on a direct connection to each master).
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { keySlot } from '../../lib/core/redis/cluster.js';
import { readSnapshot, type Snapshot } from './redis.js';

interface RedisUtil {
  startRedisServer(extraArgs?: string[]): Promise<{ url: string; port: number; child: ChildProcess }>;
}

async function util(): Promise<RedisUtil> {
  return (await import(new URL('../../../scripts/redis-util.mjs', import.meta.url).href)) as RedisUtil;
}

/** One private redis-server and a direct admin connection to it. */
export interface BenchNode {
  port: number;
  child: ChildProcess;
  admin: Redis;
  /** slot ranges it serves as master (cluster only) */
  ranges: [number, number][];
}

/** Per-node readings of `INFO cpu commandstats`, in node order. */
export type NodeSnapshots = Snapshot[];

/** A set of private servers read node by node: one standalone, or the masters of a cluster. */
export class BenchServers {
  private constructor(
    readonly kind: 'standalone' | 'cluster',
    readonly nodes: BenchNode[],
    private readonly dir?: string,
  ) {}

  /** A standalone redis-server with the benchmark's default settings. */
  static async standalone(): Promise<BenchServers> {
    const s = await (await util()).startRedisServer();
    return new BenchServers('standalone', [{ port: s.port, child: s.child, admin: new Redis(s.url), ranges: [[0, 16383]] }]);
  }

  /** `masters` cluster-enabled redis-servers (no replicas), joined with `redis-cli --cluster create`. */
  static async cluster(masters = 3): Promise<BenchServers> {
    const dir = mkdtempSync(join(tmpdir(), 'chronos-bench-cluster-'));
    const u = await util();
    const nodes: BenchNode[] = [];
    try {
      for (let i = 0; i < masters; i++) {
        const s = await u.startRedisServer([
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${i}.conf`),
          '--dir',
          dir,
        ]);
        nodes.push({ port: s.port, child: s.child, admin: new Redis(s.url), ranges: [] });
      }
      const r = spawnSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-yes'], {
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(`redis-cli --cluster create: ${r.stderr || r.stdout}`);
      const servers = new BenchServers('cluster', nodes, dir);
      for (let i = 0; i < 200; i++) {
        const infos = await Promise.all(nodes.map((n) => n.admin.cluster('INFO') as Promise<string>));
        if (infos.every((x) => /cluster_state:ok/.test(x))) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      const slots = (await nodes[0].admin.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
      for (const [a, b, [, port]] of slots) nodes.find((n) => n.port === port)?.ranges.push([a, b]);
      return servers;
    } catch (err) {
      await new BenchServers('cluster', nodes, dir).close();
      throw err;
    }
  }

  /** The `connection` Chronos is given: a URL, or `{ cluster: seeds }`. */
  get connection(): string | { cluster: { host: string; port: number }[] } {
    return this.kind === 'standalone'
      ? `redis://127.0.0.1:${this.nodes[0].port}`
      : { cluster: this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })) };
  }

  /** Index of the node serving `key`'s slot. */
  nodeOf(key: string): number {
    const slot = keySlot(key);
    return this.nodes.findIndex((n) => n.ranges.some(([a, b]) => slot >= a && slot <= b));
  }

  async snapshot(): Promise<NodeSnapshots> {
    return Promise.all(this.nodes.map((n) => readSnapshot(n.admin, true)));
  }

  async close(): Promise<void> {
    for (const n of this.nodes) n.admin.disconnect();
    await Promise.all(
      this.nodes.map(
        (n) =>
          new Promise<void>((resolve) => {
            if (n.child.exitCode !== null || n.child.signalCode !== null) return resolve();
            n.child.once('exit', () => resolve());
            n.child.kill('SIGKILL');
          }),
      ),
    );
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  killSync(): void {
    for (const n of this.nodes) if (n.child.exitCode === null) n.child.kill('SIGKILL');
  }
}
