// Pipelines of several keys of one slot while that slot migrates (MIGRATING/IMPORTING, its keys
// MIGRATEd one by one): Redis runs the commands on keys still on the old owner and refuses those on
// keys that left (ASK). ioredis re-sends a pipeline only when every command was refused alike and those
// that ran are reads, so the refusals came back as replies: the worker's heartbeat threw, and the
// Inspector read a refused GET or ZSCORE as "absent" and left a live server, or a scheduled task, out.
// Each test moves one slot to a 4th master, a key at a time, and runs the pipeline at every step.
import { jest } from '@jest/globals';
import type { Cluster } from 'ioredis';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueClient } from '../../lib/core/queue/client.js';
import { GlobalKeys, QueueKeys, SchedulerKeys } from '../../lib/core/redis/keys.js';
import { keySlot } from '../../lib/core/redis/cluster.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { Heartbeat, TaskCounters } from '../../lib/core/worker/heartbeat.js';
import { useReshardRig } from '../helpers/cluster-rig.js';
import { newNamespace } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

const rig = useReshardRig();
const { closers } = rig;

/** The outcome of `run` as a string (an error's message), for a set of outcomes to compare. */
async function outcome(run: () => Promise<string>): Promise<string> {
  try {
    return await run();
  } catch (err) {
    return `threw ${String(err)}`;
  }
}

test('the global slot migrates: a heartbeat is written and the Inspector lists every server at every step', async () => {
  const ns = newNamespace('crp');
  const global = new GlobalKeys(ns);
  const connection = { cluster: rig.cluster.seeds };
  const servers = [0, 1].map(
    () => new ChronosServer({ connection, namespace: ns, queues: ['a'], logger: recordingLogger(), blockTimeout: 1000 }),
  );
  for (const s of servers) {
    closers.push(() => s.shutdown());
    await s.start();
  }
  const inspector = new Inspector({ connection, namespace: ns });
  closers.push(() => inspector.close());
  const client: Cluster = rig.cluster.connect();
  closers.push(async () => client.disconnect());
  const heartbeatOf = (id: string) =>
    new Heartbeat({
      client,
      globalKeys: global,
      id,
      queues: [{ name: 'a', weight: 1, keys: new QueueKeys(ns, 'a') }],
      config: { strictPriority: false, concurrency: 1 },
      counters: new TaskCounters(),
      slots: { activeCount: 0, running: [] },
    });
  const [heartbeat, ghost] = [heartbeatOf('beating'), heartbeatOf('ghost')];
  await heartbeat.beat();
  const seen = new Set<string>();
  await rig.cluster.moveSlot(keySlot(global.servers), rig.added, {
    batch: 1,
    during: async () => {
      seen.add(await outcome(async () => (await heartbeat.beat(), 'beat')));
      seen.add(await outcome(async () => (await ghost.beat(), await heartbeat.forget('ghost'), 'forgot')));
      seen.add(
        await outcome(
          async () =>
            `servers=${(await inspector.servers())
              .map((s) => s.id)
              .sort()
              .join(',')}`,
        ),
      );
    },
  });
  const ids = ['beating', ...servers.map((s) => s.id)].sort().join(',');
  expect(seen).toEqual(new Set(['beat', 'forgot', `servers=${ids}`]));
});

test("a queue's slot migrates: the Inspector finds a scheduled task at every step", async () => {
  const ns = newNamespace('crp');
  const queue = 'moving';
  const keys = new QueueKeys(ns, queue);
  const connection = { cluster: rig.cluster.seeds };
  const client = new QueueClient({ connection, namespace: ns });
  closers.push(() => client.close());
  const inspector = new Inspector({ connection, namespace: ns });
  closers.push(() => inspector.close());
  await client.enqueue('ready', null, { queue });
  const later = await client.enqueue('later', null, { queue, delay: 600_000 });
  const seen = new Set<string>();
  await rig.cluster.moveSlot(keySlot(keys.stream), rig.added, {
    batch: 1,
    during: async () => {
      seen.add(await outcome(async () => `task=${(await inspector.task(queue, later.id))?.state}`));
    },
  });
  expect(seen).toEqual(new Set(['task=scheduled']));
});

// a pipeline whose commands were all refused with ASK was sent again, by ioredis, to the node its
// slot cache named: a master just added serves no slot yet, so no client knew it, and the pipeline
// went back to the old owner until its redirections ran out (a single command connects to the node
// ASK names). An operator's act records its audit entry in one pipeline (XADD, XTRIM): with the audit
// stream moved to the new master, the act of a fresh Inspector went unrecorded (its failure is not the act's)
test('the global slot migrates to a master just added: every act of a fresh Inspector records its audit entry', async () => {
  const ns = newNamespace('crp');
  const global = new GlobalKeys(ns);
  const connection = { cluster: rig.cluster.seeds };
  const first = new Inspector({ connection, namespace: ns });
  closers.push(() => first.close());
  await first.pauseQueue('q0', { actor: 'test' }); // the global slot's keys: the paused set, the audit stream
  const fresh = await rig.cluster.addMaster();
  const seen = new Set<string>();
  let acts = 1;
  await rig.cluster.moveSlot(keySlot(global.audit), fresh, {
    batch: 1,
    during: async () => {
      const inspector = new Inspector({ connection, namespace: ns });
      try {
        seen.add(await outcome(async () => `paused=${await inspector.pauseQueue(`q${acts++}`, { actor: 'test' })}`));
      } finally {
        await inspector.close();
      }
    },
  });
  expect(seen).toEqual(new Set(['paused=true']));
  expect((await first.audit({ limit: 100 })).entries.length).toBe(acts);
});

// the Inspector reads the shards' leases (HGETALL) and the instances (ZRANGE) each with TIME in one
// pipeline on the scheduler's slot: TIME ran, the read of a key that had left was refused (ASK), and
// ioredis sent nothing again (TIME is not flagged read-only): leader() threw the bare ASK reply
test("the scheduler's slot migrates: the Inspector reads the shards' leader and the instances at every step", async () => {
  const ns = newNamespace('crp');
  const keys = new SchedulerKeys(ns);
  const connection = { cluster: rig.cluster.seeds };
  const scheduler = new Scheduler({ connection, namespace: ns, logger: recordingLogger() });
  closers.push(() => scheduler.stop());
  await scheduler.start();
  const inspector = new Inspector({ connection, namespace: ns });
  closers.push(() => inspector.close());
  await waitFor(async () => (await inspector.leader()) !== null, 'the scheduler to lead the shards');
  const seen = new Set<string>();
  await rig.cluster.moveSlot(keySlot(keys.shards), rig.added, {
    batch: 1,
    during: async () => {
      seen.add(await outcome(async () => `leader=${(await inspector.leader()) !== null}`));
      seen.add(await outcome(async () => `instances=${(await inspector.instances()).length}`));
    },
  });
  expect(seen).toEqual(new Set(['leader=true', 'instances=1']));
});
