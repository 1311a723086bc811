import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { freePort, ping } from '../../scripts/redis-util.mjs';
import { keySlot } from '../../lib/core/redis/cluster.js';
import { waitFor } from './wait.js';

/** One redis-server process started by a test helper (stopped by its pid only). */
export class Node {
  constructor(
    readonly port: number,
    readonly child: ChildProcess,
  ) {}

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** SIGKILL (no shutdown, no last write) and wait for the exit. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGKILL');
    await exited;
  }
}

async function startNode(dir: string, args: string[]): Promise<Node> {
  const port = await freePort();
  const child = spawn('redis-server', [...args.map((a) => a.replace('%PORT%', String(port))), '--port', String(port)], {
    stdio: 'ignore',
    cwd: dir,
  });
  await waitFor(() => ping('127.0.0.1', port, 200), { what: `redis-server on port ${port}`, timeoutMs: 10_000 });
  return new Node(port, child);
}

const BASE = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];

function cli(port: number, ...args: string[]): string {
  const r = spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** redis-cli without blocking the event loop (a reshard takes seconds: the clients under test go on meanwhile). */
function runCli(port: number, args: string[], tail: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('redis-cli', ['-p', String(port), ...args, ...tail], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`redis-cli ${args.join(' ')}: ${out.slice(-2000)}`))));
  });
}

/**
 * A private Redis Cluster on free loopback ports: `masters` masters with `replicas` replicas each,
 * created with `redis-cli --cluster create … --cluster-yes`, non-persistent, files in a temp dir.
 */
export class RedisCluster {
  private constructor(
    readonly nodes: Node[],
    private readonly dir: string,
    readonly nodeTimeoutMs: number,
    private readonly args: string[] = [],
  ) {}

  static async start({ masters = 3, replicas = 0, nodeTimeoutMs = 2000 } = {}): Promise<RedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'chronos-cluster-'));
    const args = [...BASE, '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes-%PORT%.conf', '--dir', dir];
    args.push('--cluster-node-timeout', String(nodeTimeoutMs));
    // a replica must finish its first full sync before it may be promoted (a replica that never
    // synced has an unbounded data age, which cluster-replica-validity-factor refuses): start the
    // transfer at once instead of after the default 5 s diskless-sync delay
    args.push('--repl-diskless-sync-delay', '0');
    const nodes = await Promise.all(Array.from({ length: masters * (1 + replicas) }, () => startNode(dir, args)));
    const cluster = new RedisCluster(nodes, dir, nodeTimeoutMs, args);
    const addrs = nodes.map((n) => n.address);
    cli(nodes[0].port, '--cluster', 'create', ...addrs, '--cluster-replicas', String(replicas), '--cluster-yes');
    await cluster.waitOk(masters, replicas);
    if (replicas > 0) await cluster.waitReplicasInSync();
    return cluster;
  }

  /** The seed nodes, for `{ cluster: nodes }`. */
  get seeds(): { host: string; port: number }[] {
    return this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  }

  /** `host:port,…` of the seeds (the fixtures' REDIS_CLUSTER). */
  get seedList(): string {
    return this.nodes.map((n) => n.address).join(',');
  }

  /** An ioredis Cluster on these nodes (the caller closes it). */
  connect(): Cluster {
    return new Cluster(this.seeds, { redisOptions: { maxRetriesPerRequest: null } });
  }

  /** Waits until every live node says cluster_state:ok, sees `masters` masters, and every master has `replicas` replicas. */
  async waitOk(masters: number, replicas = 0, timeoutMs = 30_000): Promise<void> {
    await waitFor(
      () => {
        for (const n of this.nodes.filter((x) => x.alive)) {
          if (!/cluster_state:ok/.test(cli(n.port, 'CLUSTER', 'INFO'))) return false;
        }
        const live = this.liveNodes();
        return live.filter((l) => l.master).length === masters && live.filter((l) => !l.master).length >= masters * replicas;
      },
      { what: 'cluster_state:ok', timeoutMs, intervalMs: 200 },
    );
  }

  /**
   * Waits until every live replica of a live master has its link up (first sync done). Until then a
   * replica cannot be promoted: killing its master leaves the slots unserved and the cluster down.
   */
  async waitReplicasInSync(timeoutMs = 30_000): Promise<void> {
    const live = new Set(this.liveNodes().map((n) => n.port));
    await waitFor(
      () =>
        this.nodes
          .filter((n) => n.alive)
          .every((n) => {
            const info = cli(n.port, 'INFO', 'replication');
            if (!/role:slave/.test(info)) return true;
            const masterPort = Number(/master_port:(\d+)/.exec(info)?.[1]);
            return !live.has(masterPort) || /master_link_status:up/.test(info);
          }),
      { what: 'replicas in sync with their masters', timeoutMs, intervalMs: 200 },
    );
  }

  /**
   * Waits until a live master other than `dead` serves `key`'s slot (its replica was promoted) and
   * the cluster is ok again; resolves with that node.
   */
  async waitPromoted(key: string, dead: Node, masters: number, timeoutMs = 30_000): Promise<Node> {
    const node = await waitFor(
      () => {
        const m = this.masterOf(key);
        return m.port !== dead.port ? m : undefined;
      },
      { what: `a new master for ${key} after ${dead.address} died`, timeoutMs, intervalMs: 100 },
    );
    await this.waitOk(masters, 0, timeoutMs);
    return node;
  }

  /** Live nodes with their role and (for masters) slot ranges, from `CLUSTER NODES` on a live node. */
  liveNodes(): { port: number; master: boolean; ranges: [number, number][] }[] {
    const seed = this.nodes.find((n) => n.alive)!;
    const out: { port: number; master: boolean; ranges: [number, number][] }[] = [];
    for (const line of cli(seed.port, 'CLUSTER', 'NODES').trim().split('\n')) {
      const [, addr, flags, , , , , , ...slots] = line.split(' ');
      if (/fail|noaddr/.test(flags)) continue;
      const ranges = slots.filter((s) => !s.startsWith('[')).map((s) => s.split('-').map(Number) as [number, number]);
      out.push({
        port: Number(addr.split(':')[1].split('@')[0]),
        master: flags.includes('master'),
        ranges: ranges.map((r) => [r[0], r[1] ?? r[0]]),
      });
    }
    return out;
  }

  /** The node process serving `key`'s slot as master now. */
  masterOf(key: string): Node {
    const slot = keySlot(key);
    const m = this.liveNodes().find((n) => n.master && n.ranges.some(([a, b]) => slot >= a && slot <= b));
    if (!m) throw new Error(`no live master serves slot ${slot} of ${key}`);
    return this.nodes.find((n) => n.port === m.port)!;
  }

  /** The cluster node id of a node (`CLUSTER MYID`). */
  idOf(node: Node): string {
    return cli(node.port, 'CLUSTER', 'MYID').trim();
  }

  /**
   * Starts one more node and joins it as an empty master (`redis-cli --cluster add-node`); resolves
   * once every live node knows it. It serves no slot until slots are moved to it ({@link reshard}).
   */
  async addMaster(): Promise<Node> {
    const node = await startNode(this.dir, this.args);
    this.nodes.push(node);
    const seed = this.nodes.find((n) => n.alive && n !== node)!;
    cli(seed.port, '--cluster', 'add-node', node.address, seed.address);
    const id = this.idOf(node);
    // the new node answers CLUSTERDOWN (and refuses MIGRATE) until it has learnt every slot's owner
    const ok = (n: Node) => cli(n.port, 'CLUSTER', 'NODES').includes(id) && /cluster_state:ok/.test(cli(n.port, 'CLUSTER', 'INFO'));
    await waitFor(() => this.nodes.filter((n) => n.alive).every(ok), {
      what: `every node to know ${node.address}, and it the cluster`,
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    return node;
  }

  /**
   * Moves `slots` slots from `from` (a node, or every other master) to `to` with live slot
   * migration (`redis-cli --cluster reshard … --cluster-yes`: MIGRATING/IMPORTING, MIGRATE in
   * batches, SETSLOT NODE), while clients keep working; resolves when redis-cli is done.
   */
  async reshard(to: Node, slots: number, from: Node | 'all' = 'all'): Promise<void> {
    const seed = this.nodes.find((n) => n.alive)!;
    const source = from === 'all' ? 'all' : this.idOf(from);
    await runCli(
      seed.port,
      ['--cluster', 'reshard', seed.address, '--cluster-from', source, '--cluster-to', this.idOf(to)],
      ['--cluster-slots', String(slots), '--cluster-yes'],
    );
  }

  /**
   * Moves one slot to `to` by hand, as `redis-cli --cluster reshard` does (IMPORTING on `to`,
   * MIGRATING on the owner, MIGRATE the keys in batches of `batch`, then SETSLOT NODE on `to`, the
   * old owner and every other master), awaiting `during(moved)` while the slot is migrating: first
   * with no key moved yet (`moved` 0), then after each batch. A test holds the slot half-moved
   * there to run a command against it.
   */
  async moveSlot(
    slot: number,
    to: Node,
    { batch = 10, during }: { batch?: number; during?: (moved: number) => Promise<void> } = {},
  ): Promise<void> {
    const owner = this.liveNodes().find((n) => n.master && n.ranges.some(([a, b]) => slot >= a && slot <= b));
    if (!owner) throw new Error(`no live master serves slot ${slot}`);
    const from = this.nodes.find((n) => n.port === owner.port)!;
    if (from === to) return;
    const [fromId, toId] = [this.idOf(from), this.idOf(to)];
    cli(to.port, 'CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', fromId);
    cli(from.port, 'CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', toId);
    let moved = 0;
    await during?.(moved);
    for (;;) {
      const keys = cli(from.port, 'CLUSTER', 'GETKEYSINSLOT', String(slot), String(batch))
        .split('\n')
        .filter((k) => k !== '');
      if (keys.length === 0) break;
      cli(from.port, 'MIGRATE', '127.0.0.1', String(to.port), '', '0', '5000', 'KEYS', ...keys);
      moved += keys.length;
      await during?.(moved);
    }
    cli(to.port, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', toId);
    cli(from.port, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', toId);
    for (const m of this.liveNodes().filter((n) => n.master && n.port !== to.port && n.port !== from.port))
      cli(m.port, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', toId);
  }

  /** Kills every node and removes the temp dir. */
  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Queue names (with a prefix) whose streams in namespace `ns` hash to the masters of `cluster`, one per master. */
export function queuesOnEachMaster(cluster: RedisCluster, ns: string, prefix = 'q'): string[] {
  const masters = cluster.liveNodes().filter((n) => n.master);
  const found = new Map<number, string>();
  for (let i = 0; found.size < masters.length && i < 10_000; i++) {
    const name = `${prefix}${i}`;
    const slot = keySlot(`${ns}:{${ns}:${name}}:stream`);
    const m = masters.find((n) => n.ranges.some(([a, b]) => slot >= a && slot <= b))!;
    if (!found.has(m.port)) found.set(m.port, name);
  }
  return [...found.values()];
}

/**
 * A private Sentinel setup on free loopback ports: 1 primary, `replicas` replicas, `sentinels`
 * sentinels monitoring it as `name` (quorum 2), with short down-after and failover timeouts.
 */
export class RedisSentinel {
  private constructor(
    readonly primary: Node,
    readonly replicas: Node[],
    readonly sentinels: Node[],
    readonly name: string,
    private readonly dir: string,
  ) {}

  static async start({
    replicas = 1,
    sentinels = 3,
    name = 'm',
    downAfterMs = 1000,
    failoverTimeoutMs = 3000,
  } = {}): Promise<RedisSentinel> {
    const dir = mkdtempSync(join(tmpdir(), 'chronos-sentinel-'));
    const primary = await startNode(dir, BASE);
    const reps = await Promise.all(
      Array.from({ length: replicas }, () => startNode(dir, [...BASE, '--replicaof', '127.0.0.1', String(primary.port)])),
    );
    const sents: Node[] = [];
    for (let i = 0; i < sentinels; i++) {
      const conf = join(dir, `sentinel-${i}.conf`);
      const lines = [
        'bind 127.0.0.1',
        `sentinel monitor ${name} 127.0.0.1 ${primary.port} 2`,
        `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
        `sentinel failover-timeout ${name} ${failoverTimeoutMs}`,
        `sentinel parallel-syncs ${name} 1`,
      ];
      writeFileSync(conf, lines.join('\n') + '\n');
      sents.push(await startNode(dir, [conf, '--sentinel', '--dir', dir]));
    }
    const s = new RedisSentinel(primary, reps, sents, name, dir);
    await waitFor(() => s.replicas.every((r) => /master_link_status:up/.test(cli(r.port, 'INFO', 'replication'))), {
      what: 'replicas in sync',
      timeoutMs: 15_000,
    });
    await waitFor(() => sents.every((x) => /num-other-sentinels\s+2/.test(cli(x.port, 'SENTINEL', 'MASTER', name).replace(/\n/g, ' '))), {
      what: 'sentinels to see each other',
      timeoutMs: 20_000,
      intervalMs: 200,
    });
    return s;
  }

  /** ioredis Sentinel options for `connection`. */
  get connection(): { sentinels: { host: string; port: number }[]; name: string } {
    return { sentinels: this.sentinels.map((n) => ({ host: '127.0.0.1', port: n.port })), name: this.name };
  }

  /** The port the sentinels now name as primary. */
  primaryPort(): number {
    const out = cli(this.sentinels.find((n) => n.alive)!.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.name);
    return Number(out.trim().split('\n')[1]);
  }

  /** A plain client on a node (the caller closes it). */
  static direct(port: number): Redis {
    return new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null });
  }

  async stop(): Promise<void> {
    await Promise.all([this.primary, ...this.replicas, ...this.sentinels].map((n) => n.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
