// A worker on Redis Cluster whose queues span several masters and include a limited (or grouped)
// queue: a task enqueued while the worker waits is fetched when it comes, not after blockTimeout.
// Before, the limited fetch's wait on streams in several slots was a plain sleep of blockTimeout
// (one XREAD over several slots is refused), so every queue's tasks waited up to 5 s by default.
// Run with `npm run test:cluster`.
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { RedisCluster, queuesOnEachMaster } from '../helpers/redis-cluster.js';
import { newNamespace } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

let cluster: RedisCluster;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  cluster = await RedisCluster.start({ masters: 3 });
});
afterAll(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  await cluster?.stop();
});

/** Whether the master serving `key` has a client blocked in XREAD (the limited fetch's wait). */
async function blockedXread(key: string): Promise<boolean> {
  const node = new Redis({ host: '127.0.0.1', port: cluster.masterOf(key).port, lazyConnect: true });
  try {
    await node.connect();
    const list = (await node.call('CLIENT', 'LIST')) as string;
    return list.split('\n').some((l) => / cmd=xread /.test(l) && / flags=b /.test(l));
  } finally {
    node.disconnect();
  }
}

test('a limited queue among queues on 3 masters: a task enqueued while the worker waits starts without waiting for blockTimeout', async () => {
  const ns = newNamespace('clw');
  const [limited, a, b] = queuesOnEachMaster(cluster, ns);
  const client = new QueueClient({ connection: { cluster: cluster.seeds }, namespace: ns });
  closers.push(() => client.close());
  await client.setQueueLimits(limited, { groupConcurrency: 1 });
  const ran: string[] = [];
  // a block timeout far past waitFor's bound: only a read that wakes on the new entry can pass
  const server = new ChronosServer({
    connection: { cluster: cluster.seeds },
    namespace: ns,
    queues: [limited, a, b],
    blockTimeout: 60_000,
    logger: recordingLogger(),
  });
  closers.push(() => server.shutdown());
  server.handle<{ queue: string }>('job', (t) => void ran.push(t.queue));
  await server.start();
  const keys = [limited, a, b].map((q) => new QueueKeys(ns, q).stream);
  for (const queue of [a, b, limited]) {
    // idle: the worker waits on every queue's master
    for (const key of keys) await waitFor(() => blockedXread(key), `a blocking read on the master of ${key}`);
    await client.enqueue('job', { queue }, { queue, group: queue === limited ? 'g1' : undefined });
    await waitFor(() => ran.includes(queue), `the task of ${queue} to start`);
  }
  expect(ran).toEqual([a, b, limited]);
});

// a worker whose one queue has a group concurrency limit waits, when the limit holds a group's task
// back, in a blocking XREAD on the queue's master (from the group's last-delivered id and the group
// signal's: a new entry or group ends it); a freed slot wakes it by ending that read. The read was ended
// with CLIENT UNBLOCK <id>: the id CLIENT ID gave on whichever master the cluster client sent it to,
// sent to whichever master again, so the read on the queue's master went on, and the held-back task
// started only when it timed out: at the group's re-check (GROUPS.recheckMs, 5 s), the bound of that
// read (so the wait for each start here stays below it)
test('a queue with a group concurrency limit: a task held back starts when the running one ends, not at the re-check', async () => {
  const ns = newNamespace('clw');
  const queue = 'limited';
  const client = new QueueClient({ connection: { cluster: cluster.seeds }, namespace: ns });
  closers.push(() => client.close());
  await client.setQueueLimits(queue, { groupConcurrency: 1 });
  const started: number[] = [];
  const gates: (() => void)[] = [];
  const server = new ChronosServer({
    connection: { cluster: cluster.seeds },
    namespace: ns,
    queues: [queue],
    blockTimeout: 60_000, // past waitFor's bound: a wait ended only by its timeout fails the test
    logger: recordingLogger(),
  });
  closers.push(() => server.shutdown());
  server.handle<number>('job', (t) => {
    started.push(t.payload);
    return new Promise<void>((resolve) => gates.push(resolve));
  });
  await server.start();
  const stream = new QueueKeys(ns, queue).stream;
  for (const n of [1, 2, 3]) await client.enqueue('job', n, { queue, group: 'g' });
  await waitFor(() => started.length === 1, 'the first task to start');
  for (const n of [2, 3]) {
    // the next task is held back by the limit: the worker waits in a blocking XREAD on the queue's master
    await waitFor(() => blockedXread(stream), `a blocking read on the master of ${stream}`);
    gates.shift()!();
    await waitFor(() => started.length === n, `task ${n} to start once task ${n - 1} ended`, 3000);
  }
  gates.shift()!();
  expect(started).toEqual([1, 2, 3]);
});

// the shutdown of a worker whose one queue is limited, idle in its wait (a blocking XREAD on the
// queue's master): the wait ends at once. It sat on the fetcher's cluster connection and was ended
// with CLIENT UNBLOCK <id> on whichever master: the shutdown waited out the whole block (blockTimeout)
test('an idle worker of a limited queue: its shutdown ends the wait at once', async () => {
  const ns = newNamespace('clw');
  const queue = 'limited';
  const client = new QueueClient({ connection: { cluster: cluster.seeds }, namespace: ns });
  closers.push(() => client.close());
  await client.setQueueLimits(queue, { concurrency: 2 });
  const server = new ChronosServer({
    connection: { cluster: cluster.seeds },
    namespace: ns,
    queues: [queue],
    blockTimeout: 60_000, // past waitFor's bound: a wait ended only by its timeout fails the test
    logger: recordingLogger(),
  });
  closers.push(() => server.shutdown());
  await server.start();
  const stream = new QueueKeys(ns, queue).stream;
  await waitFor(() => blockedXread(stream), `a blocking read on the master of ${stream}`);
  let stopped = false;
  const stopping = server.shutdown().then(() => (stopped = true));
  await waitFor(() => stopped, 'the shutdown to end');
  await stopping;
});
