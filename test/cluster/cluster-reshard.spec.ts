// Live slot migration in a real Redis Cluster (3 masters started here on loopback, a 4th added):
// while a slot moves (MIGRATING/IMPORTING, its keys MIGRATEd in batches), Redis refuses a
// multi-key command or script on it with TRYAGAIN or ASK before running it. Chronos re-sends what
// was refused until the slot has moved, and writes each task once.
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueClient } from '../../lib/core/queue/client.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { keySlot } from '../../lib/core/redis/cluster.js';
import { RedisCluster } from '../helpers/redis-cluster.js';
import { newNamespace } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

jest.setTimeout(60_000);

let cluster: RedisCluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

// a bulk enqueue to one queue is one pipeline of script calls for its slot: with the slot migrating
// Redis ran the plain tasks' enqueue-bulk.lua (its one key still on the old owner) and refused the
// delayed task's enqueue.lua (its new dedup key absent: TRYAGAIN); ioredis re-sends a pipeline only
// when every command was refused alike, so the call threw the bare `TRYAGAIN …` reply after writing
// the plain tasks, and a caller's retry wrote them twice
test('enqueueBulk while its queue slot migrates: the refused task is sent again, every task written once', async () => {
  cluster = await RedisCluster.start({ masters: 3, replicas: 0 });
  const ns = newNamespace('crs');
  const queue = 'moving';
  const keys = new QueueKeys(ns, queue);
  const client = new QueueClient({ connection: { cluster: cluster.seeds }, namespace: ns });
  const source = new Redis(cluster.masterOf(keys.stream).port, '127.0.0.1');
  try {
    await client.enqueue('before', null, { queue, delay: 60_000 }); // the slot's stream, scheduled set and tasks hash exist
    await client.enqueue('before', null, { queue });
    const added = await cluster.addMaster();
    let bulk: Promise<unknown> | undefined;
    await cluster.moveSlot(keySlot(keys.stream), added, {
      during: async (moved) => {
        if (moved > 0) return;
        const tasks = [
          { type: 'a', payload: 1, options: { queue } },
          { type: 'b', payload: 2, options: { queue, delay: 60_000, dedupKey: 'only-once' } },
          { type: 'c', payload: 3, options: { queue } },
        ];
        bulk = client.enqueueBulk(tasks).then(
          (r) => r,
          (err: unknown) => err,
        );
        // the plain tasks ran on the old owner; the delayed one was refused (the slot is held here)
        await waitFor(
          async () => (await source.xlen(keys.stream)) === 3 || (await Promise.race([bulk, undefined])) !== undefined,
          'the plain tasks written',
        );
      },
    });
    const result = await bulk;
    expect(result instanceof Error ? `${result.name}: ${result.message}` : 'resolved').toBe('resolved');
    const r = cluster.connect();
    try {
      expect(await r.xlen(keys.stream)).toBe(3);
      expect(await r.zcard(keys.scheduled)).toBe(2);
      expect((result as { id: string }[]).map((x) => typeof x.id)).toEqual(['string', 'string', 'string']);
    } finally {
      r.disconnect();
    }
  } finally {
    source.disconnect();
    await client.close();
  }
});

/** The count of a reply error kind on a node (`INFO errorstats`: `errorstat_TRYAGAIN:count=3`). */
async function errorCount(node: Redis, kind: string): Promise<number> {
  const m = new RegExp(`errorstat_${kind}:count=(\\d+)`).exec(await node.info('errorstats'));
  return Number(m?.[1] ?? 0);
}

// a deduplicated enqueue reads where the existing task is (enqueue.lua stateOf): the queue's retry and
// dead sets, keys it built itself. With the slot migrating and the task's keys still on the old node,
// Redis ran the script there and failed it at its first such key, absent there (it may have left):
// `ERR Script attempted to access a non local key in a cluster node`, not retried
test('an enqueue whose dedup key hits while its queue slot migrates: refused, sent again, deduplicated', async () => {
  cluster = await RedisCluster.start({ masters: 3, replicas: 0 });
  const ns = newNamespace('crs');
  const queue = 'moving';
  const keys = new QueueKeys(ns, queue);
  const client = new QueueClient({ connection: { cluster: cluster.seeds }, namespace: ns });
  const source = new Redis(cluster.masterOf(keys.stream).port, '127.0.0.1');
  try {
    await client.enqueue('before', null, { queue, delay: 60_000 }); // the slot's stream, scheduled set and tasks hash exist
    const first = await client.enqueue('once', null, { queue, dedupKey: 'K' }); // in the stream: not scheduled
    const added = await cluster.addMaster();
    let again: Promise<unknown> | undefined;
    await cluster.moveSlot(keySlot(keys.stream), added, {
      during: async (moved) => {
        if (moved > 0) return;
        const [tryAgain, err] = [await errorCount(source, 'TRYAGAIN'), await errorCount(source, 'ERR')];
        again = client.enqueue('once', null, { queue, dedupKey: 'K' }).then(
          (r) => r,
          (e: unknown) => e,
        );
        // the old node answered it: refused (held here until the slot has moved) or failed
        await waitFor(
          async () => (await errorCount(source, 'TRYAGAIN')) > tryAgain || (await errorCount(source, 'ERR')) > err,
          'the old node to answer the enqueue',
        );
      },
    });
    const result = await again;
    expect(result instanceof Error ? `${result.name}: ${result.message}` : result).toEqual({
      id: first.id,
      queue,
      deduplicated: true,
      state: 'pending',
    });
  } finally {
    source.disconnect();
    await client.close();
  }
});

// the Inspector reads a queue's counts in one pipeline on its slot (XLEN, XPENDING, ZCARD ×3, MGET …,
// TIME); with the slot half-moved, the reads of keys that had left were refused (ASK) among reads that
// ran, ioredis sent nothing again (TIME is not flagged read-only), and a refused read counted 0: the
// queue showed no pending task, or no scheduled one, for as long as the migration lasted
test('the Inspector reads the right counts of a queue whose slot migrates', async () => {
  cluster = await RedisCluster.start({ masters: 3, replicas: 0 });
  const ns = newNamespace('crs');
  const queue = 'moving';
  const keys = new QueueKeys(ns, queue);
  const client = new QueueClient({ connection: { cluster: cluster.seeds }, namespace: ns });
  const inspector = new Inspector({ connection: { cluster: cluster.seeds }, namespace: ns });
  try {
    await client.enqueueBulk(Array.from({ length: 5 }, (_, i) => ({ type: 'ready', payload: i, options: { queue } })));
    await client.enqueue('later', null, { queue, delay: 60_000 });
    const added = await cluster.addMaster();
    const reads: Promise<unknown>[] = [];
    await cluster.moveSlot(keySlot(keys.stream), added, {
      batch: 1,
      during: async () => {
        const read = inspector.queue(queue).then(
          (q) => `pending=${q.pending} scheduled=${q.scheduled}`,
          (e: unknown) => String(e),
        );
        reads.push(read);
        await Promise.race([read, new Promise((r) => setImmediate(r))]);
      },
    });
    expect(new Set(await Promise.all(reads))).toEqual(new Set(['pending=5 scheduled=1']));
  } finally {
    await inspector.close();
    await client.close();
  }
});

// a worker waits for tasks in a blocking XREADGROUP; when the stream's slot leaves the node (or the
// node becomes a replica: CLUSTER FAILOVER), Redis ends the read with `UNBLOCKED …`. That is no
// failure: the worker reads again at once, on the slot's new master, and logs no error (it logged
// "Fetching tasks failed"). Its shutdown then ends that read at once: a worker whose queues share one
// slot ended its read with CLIENT UNBLOCK <id>, the id CLIENT ID gave on whichever node the cluster
// client sent it to, sent to whichever node again: after the move the read sat on the new master
// under another id, and the shutdown waited out the whole block (blockTimeout)
test('a worker blocked on a queue whose slot moves reads again on the new master, no error logged; its shutdown ends the read', async () => {
  cluster = await RedisCluster.start({ masters: 3, replicas: 0 });
  const ns = newNamespace('crs');
  const queue = 'moving';
  const keys = new QueueKeys(ns, queue);
  const logger = recordingLogger();
  const connection = { cluster: cluster.seeds };
  const server = new ChronosServer({ connection, namespace: ns, queues: [queue], logger, blockTimeout: 60_000 }); // past the test's time: waiting out the block fails it
  const ran: string[] = [];
  server.handle('t', (t) => void ran.push(t.id));
  const client = new QueueClient({ connection, namespace: ns });
  const source = new Redis(cluster.masterOf(keys.stream).port, '127.0.0.1');
  try {
    await server.start();
    const first = await client.enqueue('t', null, { queue });
    await waitFor(() => ran.includes(first.id), 'the first task to run');
    // the worker waits in a blocking read on the stream's node
    await waitFor(async () => /blocked_clients:[1-9]/.test(await source.info('clients')), 'the worker blocked on the stream');
    const added = await cluster.addMaster();
    await cluster.moveSlot(keySlot(keys.stream), added);
    const next = await client.enqueue('t', null, { queue });
    await waitFor(() => ran.includes(next.id), 'the task enqueued after the move to run');
    expect(logger.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([]);
    const target = new Redis(added.port, '127.0.0.1');
    try {
      await waitFor(async () => /blocked_clients:[1-9]/.test(await target.info('clients')), 'the worker blocked on the new master');
      const stopped = server.shutdown();
      await waitFor(async () => /blocked_clients:0/.test(await target.info('clients')), 'the shutdown to end the blocking read');
      await stopped;
    } finally {
      target.disconnect();
    }
  } finally {
    source.disconnect();
    await server.shutdown();
    await client.close();
  }
});
