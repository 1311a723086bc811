// The Inspector's schedule listing on a real 3-master Redis Cluster (started and stopped here, loopback
// only), with schedules whose queues live on 3 masters. Before, the listing read every schedule's
// lastFired (and maxRuns counter) in one pipeline across the queues' slots and failed with ioredis's
// "All keys in the pipeline should belong to the same slots allocation group".
// Run with `npm run test:cluster`.
import { jest } from '@jest/globals';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { RedisCluster, queuesOnEachMaster } from '../helpers/redis-cluster.js';
import { newNamespace } from '../helpers/redis.js';

jest.setTimeout(90_000);

let cluster: RedisCluster;
let ns: string;
let inspector: Inspector;
let queues: string[];

beforeAll(async () => {
  cluster = await RedisCluster.start({ masters: 3 });
  ns = newNamespace('cl-cli');
  inspector = new Inspector({ connection: { cluster: cluster.seeds }, namespace: ns });
  queues = queuesOnEachMaster(cluster, ns);
  for (const [i, queue] of queues.entries())
    await inspector.addSchedule({ name: `s${i}`, spec: '@every 60s', queue, type: 'job', maxRuns: [3, undefined, 5][i] });
});
afterAll(async () => {
  await inspector?.close();
  await cluster?.stop();
});

test('the Inspector lists schedules whose queues live on 3 masters, with the runs left of two maxRuns ones', async () => {
  const list = await inspector.schedules();
  expect(list.map((s) => [s.name, s.queue, s.runsLeft])).toEqual([
    ['s0', queues[0], 3],
    ['s1', queues[1], undefined],
    ['s2', queues[2], 5],
  ]);
  expect((await inspector.schedulePage({})).items.map((s) => s.name)).toEqual(['s0', 's1', 's2']);
});
