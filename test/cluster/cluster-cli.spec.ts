// The Inspector's schedule listing and the `chronos` CLI on a real 3-master Redis Cluster (started and
// stopped here, loopback only), with schedules whose queues live on 3 masters. Before, the listing
// read every schedule's lastFired (and maxRuns counter) in one pipeline across the queues' slots and
// failed with ioredis's "All keys in the pipeline should belong to the same slots allocation group",
// and the CLI had no way to connect to a cluster (`--redis-url` of one node answered MOVED).
// Run with `npm run test:cluster`.
import { execFile } from 'node:child_process';
import { jest } from '@jest/globals';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { CLI_MAIN, type Ran } from '../helpers/cli.js';
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

function chronos(...args: string[]): Promise<Ran> {
  const env: NodeJS.ProcessEnv = { ...process.env, CHRONOS_NAMESPACE: ns };
  delete env.NODE_OPTIONS;
  delete env.REDIS_URL;
  const t0 = Date.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_MAIN, ...args], { env, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out: stdout, err: stderr, ms: Date.now() - t0 });
    });
  });
}

test('the Inspector lists schedules whose queues live on 3 masters, with the runs left of two maxRuns ones', async () => {
  const list = await inspector.schedules();
  expect(list.map((s) => [s.name, s.queue, s.runsLeft])).toEqual([
    ['s0', queues[0], 3],
    ['s1', queues[1], undefined],
    ['s2', queues[2], 5],
  ]);
  expect((await inspector.schedulePage({})).items.map((s) => s.name)).toEqual(['s0', 's1', 's2']);
});

test('the CLI connects with --cluster (and CHRONOS_REDIS_CLUSTER): stats, schedule ls and queue ls', async () => {
  const seeds = cluster.seedList;
  const stats = await chronos('--cluster', seeds, '--json', 'stats');
  expect([stats.code, stats.err]).toEqual([0, '']);
  const parsed = JSON.parse(stats.out) as { redis: { mode: string }; schedules: { name: string }[] };
  expect([parsed.redis.mode, parsed.schedules.map((s) => s.name)]).toEqual(['cluster', ['s0', 's1', 's2']]);
  const ls = await chronos('--cluster', seeds, 'schedule', 'ls');
  expect(ls.code).toBe(0);
  for (const name of ['s0', 's1', 's2']) expect(ls.out).toContain(name);
  const env = await new Promise<Ran>((resolve) => {
    const e: NodeJS.ProcessEnv = { ...process.env, CHRONOS_NAMESPACE: ns, CHRONOS_REDIS_CLUSTER: seeds };
    delete e.NODE_OPTIONS;
    execFile(process.execPath, [CLI_MAIN, '--json', 'queue', 'ls'], { env: e, timeout: 20_000 }, (error, out, err) =>
      resolve({ code: error ? -1 : 0, out, err, ms: 0 }),
    );
  });
  expect(env.code).toBe(0);
  expect((JSON.parse(env.out) as { name: string }[]).map((q) => q.name).sort()).toEqual([...queues].sort());
});

test('the CLI refuses a bad node list, naming the entry, and --sentinels without --sentinel-name', async () => {
  const bad = await chronos('--cluster', '127.0.0.1:7000,nohost', 'stats');
  expect([bad.code, bad.err.trim()]).toEqual([2, 'error: --cluster: expected host:port[,host:port…], got "nohost"']);
  const both = await chronos('--cluster', cluster.seedList, '--sentinels', '127.0.0.1:26379', 'stats');
  expect([both.code, both.err.trim()]).toEqual([2, 'error: --cluster and --sentinels: give one of them, not both']);
  const noName = await chronos('--sentinels', '127.0.0.1:26379', 'stats');
  expect(noName.code).toBe(2);
  expect(noName.err).toContain('--sentinel-name');
});
