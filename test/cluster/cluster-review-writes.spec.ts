// Writes sent through SlotPipeline while a queue's slot migrates (review of the clusterfix merge): a
// command refused with ASK is sent again by itself (cluster.ts sendAlone), replayed from what its
// builder told a recording Proxy (recordCommands): the enqueue scripts (defined by defineCommand, a
// pipeline's copy of them) must replay, and each task be stored once. And the shutdown of an idle
// worker of a limited queue leaves no read of its per-slot waits (SlotWaits) blocked on a master.
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { keySlot } from '../../lib/core/redis/cluster.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { useReshardRig } from '../helpers/cluster-rig.js';
import { newNamespace } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

jest.setTimeout(120_000);

const rig = useReshardRig();
const { closers } = rig;

/** The clients of every master blocked in XREAD on a stream of `ns`. */
async function blockedXreads(): Promise<string[]> {
  const out: string[] = [];
  for (const n of rig.cluster.liveNodes().filter((m) => m.master)) {
    const node = new Redis({ host: '127.0.0.1', port: n.port, lazyConnect: true });
    try {
      await node.connect();
      const list = (await node.call('CLIENT', 'LIST')) as string;
      out.push(...list.split('\n').filter((l) => / cmd=xread /.test(l) && / flags=b /.test(l)));
    } finally {
      node.disconnect();
    }
  }
  return out;
}

test("a queue's slot migrates: enqueue, enqueueBulk and delayed enqueues store every task once", async () => {
  const ns = newNamespace('crw');
  const queue = 'moving';
  const keys = new QueueKeys(ns, queue);
  const connection = { cluster: rig.cluster.seeds };
  const client = new QueueClient({ connection, namespace: ns });
  closers.push(() => client.close());
  // keys of the slot to move, so that the migration has steps
  for (let i = 0; i < 5; i++) await client.enqueue('seed', i, { queue, delay: 600_000 });
  const results = new Set<string>();
  const ids: string[] = [];
  let step = 0;
  const writes: Promise<void>[] = [];
  await rig.cluster.moveSlot(keySlot(keys.stream), rig.added, {
    batch: 1,
    during: async () => {
      step++;
      const run = async (what: string, f: () => Promise<string[]>) => {
        try {
          ids.push(...(await f()));
          results.add(`${what} ok`);
        } catch (err) {
          results.add(`${what} threw ${String(err)}`);
        }
      };
      // not awaited: the migration goes on meanwhile (held, a script whose keys are split is refused until it moves on)
      writes.push(
        run('bulk', async () =>
          (
            await client.enqueueBulk([
              { type: 'b', payload: step, options: { queue } },
              { type: 'b', payload: step, options: { queue } },
              { type: 'd', payload: step, options: { queue, delay: 600_000 } },
            ])
          ).map((r) => r.id),
        ),
      );
      writes.push(run('delayed', async () => [(await client.enqueue('one', step, { queue, delay: 600_000 })).id]));
      writes.push(run('ready', async () => [(await client.enqueue('one', step, { queue })).id]));
    },
  });
  await Promise.all(writes);
  expect(results).toEqual(new Set(['bulk ok', 'delayed ok', 'ready ok']));
  expect(new Set(ids).size).toBe(ids.length);
  const inspect = rig.cluster.connect();
  closers.push(async () => inspect.disconnect());
  // every ready task once in the stream (by its id field), every delayed one once in the scheduled set
  const entries = (await inspect.xrange(keys.stream, '-', '+')) as [string, string[]][];
  const streamIds = entries.map(([, f]) => f[f.indexOf('id') + 1]);
  const scheduled = await inspect.zrange(keys.scheduled, 0, -1);
  const stored = [...streamIds, ...scheduled];
  expect(stored.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
  expect(new Set(stored).size).toBe(stored.length);
});

// held half-moved: enqueue-bulk.lua has one key (the stream), refused with ASK once the stream left,
// then sent again by itself (its replay from the recording Proxy: a command defined by defineCommand)
test("a queue's slot held half-moved: an enqueueBulk of ready tasks is stored once, in order", async () => {
  const ns = newNamespace('crw');
  const queue = 'held';
  const keys = new QueueKeys(ns, queue);
  const connection = { cluster: rig.cluster.seeds };
  const client = new QueueClient({ connection, namespace: ns });
  closers.push(() => client.close());
  await client.enqueue('seed', 0, { queue });
  const results = new Set<string>();
  const ids: string[] = [];
  await rig.cluster.moveSlot(keySlot(keys.stream), rig.added, {
    batch: 1,
    during: async () => {
      try {
        const bulk = await client.enqueueBulk([1, 2, 3].map((n) => ({ type: 'b', payload: n, options: { queue } })));
        ids.push(...bulk.map((r) => r.id));
        results.add('ok');
      } catch (err) {
        results.add(`threw ${String(err)}`);
      }
    },
  });
  expect(results).toEqual(new Set(['ok']));
  const inspect = rig.cluster.connect();
  closers.push(async () => inspect.disconnect());
  const entries = (await inspect.xrange(keys.stream, '-', '+')) as [string, string[]][];
  expect(entries.map(([, f]) => f[f.indexOf('id') + 1]).filter((id) => ids.includes(id))).toEqual(ids);
});

test('an idle worker of a limited queue: after its shutdown no XREAD of its waits stays blocked', async () => {
  const ns = newNamespace('crw');
  const queue = 'limited';
  const connection = { cluster: rig.cluster.seeds };
  const client = new QueueClient({ connection, namespace: ns });
  closers.push(() => client.close());
  await client.setQueueLimits(queue, { concurrency: 2 });
  const before = (await blockedXreads()).length;
  const server = new ChronosServer({ connection, namespace: ns, queues: [queue], blockTimeout: 60_000, logger: recordingLogger() });
  closers.push(() => server.shutdown());
  await server.start();
  await waitFor(async () => (await blockedXreads()).length > before, 'a blocking read of the wait');
  await server.shutdown();
  expect((await blockedXreads()).length).toBe(before);
});

// a worker whose fetch goes through the limiter (one of its queues is limited) waits on a cluster in
// per-slot XREADs (SlotWaits) over the streams it may read. A resumed queue is not among them: the
// resume ends the wait (Fetcher.unblock) so that the next fetch reads it. On one Redis that is CLIENT
// UNBLOCK of the blocking connection; on a cluster there is none, and the wait went on to blockTimeout
test('a limited queue beside a paused one: a task of the paused queue starts when it is resumed, not at blockTimeout', async () => {
  const ns = newNamespace('crw');
  const [limited, other] = ['limited', 'other'];
  const connection = { cluster: rig.cluster.seeds };
  const client = new QueueClient({ connection, namespace: ns });
  closers.push(() => client.close());
  await client.setQueueLimits(limited, { concurrency: 2 });
  const started: string[] = [];
  const server = new ChronosServer({
    connection,
    namespace: ns,
    queues: [limited, other],
    blockTimeout: 60_000, // past waitFor's bound: a wait ended only by its timeout fails the test
    logger: recordingLogger(),
  });
  closers.push(() => server.shutdown());
  server.handle<string>('job', (t) => void started.push(t.payload));
  await server.start();
  await server.pause(other);
  await client.enqueue('job', 'other', { queue: other });
  await waitFor(async () => (await blockedXreads()).length > 0, 'the limited fetch to wait');
  await server.resume(other);
  await waitFor(() => started.includes('other'), 'the resumed queue’s task to start');
});

// each wait of a limited fetch on a cluster raced its per-slot reads against a sleep of the loops
// (blockTimeout + 1 s, for a stop to end it); a wait ended otherwise (a freed slot, an entry) left that
// sleep behind, a timer and a sleeper of the server's loops each, until it ran out: one per wait
test('a group-limited queue on a cluster: the waits that a freed slot ended leave no sleep behind', async () => {
  const ns = newNamespace('crw');
  const queue = 'grouped';
  const connection = { cluster: rig.cluster.seeds };
  const client = new QueueClient({ connection, namespace: ns });
  closers.push(() => client.close());
  await client.setQueueLimits(queue, { groupConcurrency: 1 });
  const server = new ChronosServer({ connection, namespace: ns, queues: [queue], blockTimeout: 60_000, logger: recordingLogger() });
  closers.push(() => server.shutdown());
  let done = 0;
  server.handle('job', async () => {
    // outlasts the fetch that follows its start: that fetch finds the group held and waits
    // eslint-disable-next-line local/no-fixed-sleep -- the handler's run time, not a wait for an event
    await new Promise((r) => setTimeout(r, 30));
    done++;
  });
  await server.start();
  const sleepers = (server as unknown as { loops: { sleepers: Set<unknown> } }).loops.sleepers;
  await waitFor(async () => (await blockedXreads()).length > 0, 'the idle fetch to wait');
  const idle = sleepers.size; // the forwarder's poll, the fetch's wait
  const tasks = 10;
  await client.enqueueBulk(Array.from({ length: tasks }, (_, n) => ({ type: 'job', payload: n, options: { queue, group: 'g' } })));
  await waitFor(() => done === tasks, 'every task to run');
  await waitFor(async () => (await blockedXreads()).length > 0, 'the fetch to wait again');
  expect(sleepers.size).toBe(idle);
});
