// A worker on a Redis Cluster whose queues live on different masters blocks on one reader connection
// per queue (fetch/readers.ts). Stopped (SIGSTOP) past the read deadline while a task is delivered to
// one of those reads, it runs the task as soon as it is resumed, not after the visibility timeout (trial 4, F10).
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { readDeadlineMs } from '../../lib/core/fetch/readers.js';
import { killAllChildren, startChild } from '../helpers/children.js';
import { readRecords } from '../helpers/records.js';
import { RedisCluster, queuesOnEachMaster } from '../helpers/redis-cluster.js';
import { newNamespace, redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await RedisCluster.start({ masters: 3 });
});
afterAll(async () => {
  await killAllChildren();
  await cluster?.stop();
});

test('a task delivered to a stopped worker’s per-queue blocking read runs once it is resumed, delivered once', async () => {
  const ns = newNamespace('clrd');
  const [qa, qb] = queuesOnEachMaster(cluster, ns);
  const recordKey = `${ns}-records:calls`;
  const records = new Redis(redisUrl());
  const cl = cluster.connect();
  const client = new QueueClient({ connection: { cluster: cluster.seeds }, namespace: ns });
  const stream = new QueueKeys(ns, qb).stream;
  const master = new Redis(cluster.masterOf(stream).port, '127.0.0.1');
  const pending = async () => (await cl.xpending(stream, 'chronos', '-', '+', 10)) as [string, string, number, number][];
  try {
    const block = 1000;
    const w1 = await startChild('worker', 'W1', {
      REDIS_URL: redisUrl(),
      REDIS_CLUSTER: cluster.seedList,
      NS: ns,
      RECORD_KEY: recordKey,
      QUEUES: `${qa},${qb}`,
      BLOCK_MS: block,
      VISIBILITY_MS: 60_000,
    });
    // W1 idles: its reader of qb is blocked on qb's master
    await waitFor(
      async () => /flags=\w*b\w* .*cmd=xreadgroup/.test(String(await master.call('CLIENT', 'LIST'))),
      'the reader of qb blocked',
    );
    w1.kill('SIGSTOP');
    let id: string;
    try {
      ({ id } = await client.enqueue('slow', { ms: 3000 }, { queue: qb }));
      await waitFor(async () => (await pending()).some((r) => r[1] === 'W1'), 'the entry delivered to W1');
      await waitFor(
        async () => (await pending())[0][2] > readDeadlineMs(block) + 500,
        'the stop to outlast the read deadline',
        10_000,
        100,
      );
    } finally {
      w1.kill('SIGCONT');
    }
    const resumedAt = Date.now();
    const start = await waitFor(
      async () => (await readRecords(records, recordKey)).find((r) => r.phase === 'start'),
      'W1 to start it',
      15_000,
    );
    expect([start.instance, start.id]).toEqual(['W1', id]);
    expect(start.t - resumedAt).toBeLessThan(10_000); // well before the 60 s visibility timeout
    expect((await pending()).map((r) => [r[1], Number(r[3])])).toEqual([['W1', 1]]);
    expect(w1.output).not.toMatch(/ERROR|Fetching tasks failed/);
  } finally {
    await killAllChildren();
    await client.close();
    await records.del(recordKey);
    records.disconnect();
    master.disconnect();
    cl.disconnect();
  }
});
