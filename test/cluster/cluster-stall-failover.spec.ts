// A stalled master on Redis Cluster (3 masters, 1 replica each, started here on loopback): SIGSTOP
// keeps its connections open and answers nothing, so no error tells a client to read the slot table
// again. Before, a cluster client Chronos creates kept sending the stalled node's slots to it after
// its replica was promoted, and every such command hung until the node resumed (a scheduler without
// a leader and enqueues stuck for the whole stall); now the slot table is read again every
// CLUSTER_SLOTS_REFRESH_MS (ioredis `slotsRefreshInterval`), and new commands reach the promoted master.
import { spawnSync } from 'node:child_process';
import { jest } from '@jest/globals';
import { QueueClient } from '../../lib/core/queue/client.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { RedisCluster, queuesOnEachMaster, type Node } from '../helpers/redis-cluster.js';
import { newNamespace } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(120_000);

let cluster: RedisCluster | undefined;
let stopped: Node | undefined;
afterEach(async () => {
  stopped?.child.kill('SIGCONT');
  await cluster?.stop();
  cluster = undefined;
});

function cli(port: number, ...args: string[]): string {
  return spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', timeout: 2000 }).stdout ?? '';
}

/** XLEN of `stream` read on a replica (READONLY first: a replica otherwise answers MOVED). */
function replicaLength(port: number, stream: string): string {
  const out =
    spawnSync('redis-cli', ['-p', String(port)], { input: `READONLY\nXLEN ${stream}\n`, encoding: 'utf8', timeout: 2000 }).stdout ?? '';
  return out.trim().split('\n').at(-1) ?? '';
}

test('SIGSTOP the master of a queue: once its replica is promoted, an enqueue reaches it while the old master is still stopped', async () => {
  cluster = await RedisCluster.start({ masters: 3, replicas: 1, nodeTimeoutMs: 2000 });
  const ns = newNamespace('csf');
  const [queue] = queuesOnEachMaster(cluster, ns, 'stall');
  const stream = new QueueKeys(ns, queue).stream;
  const client = new QueueClient({ connection: { cluster: cluster.seeds }, namespace: ns });
  try {
    await client.enqueue('before', null, { queue }); // the client knows the slot map and the queue
    const master = cluster.masterOf(stream);
    const replica = cluster.nodes.find((n) => cli(n.port, 'INFO', 'replication').includes(`master_port:${master.port}`))!;
    // replication is asynchronous: a master stopped before its replica holds the first task takes
    // that task with it (Redis Cluster loses such writes on a failover), and the count below would be 1
    await waitFor(() => replicaLength(replica.port, stream) === '1', 'the first task on the replica', 30_000, 50);
    stopped = master;
    master.child.kill('SIGSTOP');
    await waitFor(() => /role:master/.test(cli(replica.port, 'INFO', 'replication')), 'the replica promoted', 30_000, 100);
    // every other node serves again (cluster_state:ok), the stalled one still stopped
    const others = cluster.nodes.filter((n) => n !== master);
    await waitFor(() => others.every((n) => /cluster_state:ok/.test(cli(n.port, 'CLUSTER', 'INFO'))), 'cluster_state:ok', 30_000, 100);
    let done: unknown;
    client.enqueue('after', null, { queue }).then(
      (r) => (done = r),
      (e: unknown) => (done = e),
    );
    await waitFor(() => done, 'the enqueue after the promotion');
    expect(done).toMatchObject({ queue, deduplicated: false });
    expect(cli(replica.port, 'XLEN', stream).trim()).toBe('2');
  } finally {
    stopped?.child.kill('SIGCONT');
    await client.close();
  }
});
