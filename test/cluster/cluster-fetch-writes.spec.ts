// A worker's fetch round on a cluster (issue 22 target 5): the reads' replies are read by the reply tap
// on the masters' sockets (as on a standalone's blocking connection), and what a round sends to one
// master leaves in one socket write, so that master is woken once for it (`corked`, redis/cluster.ts).
import { jest } from '@jest/globals';
import { Redis, type Cluster } from 'ioredis';
import { corked } from '../../lib/core/redis/cluster.js';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { Consumer } from '../../lib/core/fetch/consumer.js';
import { RedisCluster, queuesOnEachMaster } from '../helpers/redis-cluster.js';
import { newNamespace } from '../helpers/redis.js';

jest.setTimeout(60_000);

let cluster: RedisCluster;
let cl: Cluster;
beforeAll(async () => {
  cluster = await RedisCluster.start({ masters: 3 });
  cl = cluster.connect();
});
afterAll(async () => {
  cl?.disconnect();
  await cluster?.stop();
});

/** Socket reads a node made so far (INFO stats; the INFO itself is one). */
async function readsOf(node: Redis): Promise<number> {
  return Number(/total_reads_processed:(\d+)/.exec(String(await node.info('stats')))![1]);
}

test('a read on a cluster client is read by the reply tap of its master: its fields come as strings', async () => {
  const ns = newNamespace('clfw');
  const [qa, qb] = queuesOnEachMaster(cluster, ns);
  const queues = [qa, qb].map((name) => ({ name, weight: 1, keys: new QueueKeys(ns, name) }));
  for (const q of queues) {
    await cl.xgroup('CREATE', q.keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM');
    await cl.xadd(q.keys.stream, '*', 'payload', `{"q":"${q.name}"}`);
  }
  const consumer = new Consumer({ client: cl, name: 'c1' });
  for (const q of queues) {
    const got = await consumer.read(cl, [q], 10);
    expect(got.map((f) => f.queue.name)).toEqual([q.name]);
    // ioredis's own parser gives a read sent as a buffer command Buffers; the tap gives strings
    expect(got[0].fields).toEqual(['payload', `{"q":"${q.name}"}`]);
  }
});

test('commands sent to one master inside corked() reach it in one socket read', async () => {
  const ns = newNamespace('clfw');
  const [qa] = queuesOnEachMaster(cluster, ns);
  const stream = new QueueKeys(ns, qa).stream;
  const master = new Redis(cluster.masterOf(stream).port, '127.0.0.1');
  try {
    await cl.xlen(stream); // connected, slots known
    const before = await readsOf(master);
    const sent = corked(cl, () => [cl.xlen(stream), cl.exists(stream), cl.type(stream)]);
    expect(await Promise.all(sent)).toEqual([0, 0, 'none']);
    // the INFO that reads the count after is one read; the three commands, one more
    expect((await readsOf(master)) - before).toBe(2);
  } finally {
    master.disconnect();
  }
});
