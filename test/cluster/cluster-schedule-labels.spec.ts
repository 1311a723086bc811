// Schedule labels on a real 3-master Redis Cluster (issue 25): each shard's registry and indexes live
// in the shard's slot (docs/scheduler-shards.md), built on the key prefix the scripts are given, and
// the 16 shards spread over the masters; the puts, the migration of an older version's registry and
// the paged listing across the shards run there like on one server. Run with `npm run test:cluster`.
import { jest } from '@jest/globals';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { SchedulerKeys, shardKeysOf } from '../../lib/core/redis/keys.js';
import { migrateLegacyRegistry } from '../../lib/core/scheduler/migrate.js';
import { recordingLogger } from '../helpers/wait.js';
import { toStored } from '../../lib/core/scheduler/definition-check.js';
import { RedisCluster } from '../helpers/redis-cluster.js';
import { newNamespace } from '../helpers/redis.js';

jest.setTimeout(90_000);

let cluster: RedisCluster;
let ns: string;
let inspector: Inspector;

beforeAll(async () => {
  cluster = await RedisCluster.start({ masters: 3 });
});
afterAll(async () => {
  await cluster?.stop();
});
beforeEach(() => {
  ns = newNamespace('cl-labels');
  inspector = new Inspector({ connection: { cluster: cluster.seeds }, namespace: ns });
});
afterEach(async () => {
  await inspector.close();
});

test("labelled puts, a migration of an older version's registry, and filtered pages across the shards, on a cluster", async () => {
  const keys = new SchedulerKeys(ns);
  const perMaster = new Map<number, number>();
  for (const k of shardKeysOf(ns)) {
    const port = cluster.masterOf(k.schedules).port;
    for (const key of [k.label('tenant', 'acme'), k.nameIndex, k.due, k.version]) expect(cluster.masterOf(key).port).toBe(port);
    perMaster.set(port, (perMaster.get(port) ?? 0) + 1);
  }
  // the shards' tags spread over the masters' slot ranges: shard k's tag is in the k-th 1,024 slots, at a place that
  // depends on the namespace, so the two shards whose 1,024 straddle a master's boundary (5,461 and 10,923 on a
  // 3-master cluster) go either way: 16 shards as 5/5/6 or 4/6/6, never more than one off a third
  const counts = [...perMaster.values()];
  expect([counts.length, counts.reduce((a, b) => a + b, 0)]).toEqual([3, 16]);
  for (const n of counts) expect([4, 5, 6]).toContain(n);
  await inspector.addSchedule({ name: 'a.digest', spec: '@every 60s', labels: { tenant: 'acme', kind: 'digest' } });
  await inspector.addSchedule({ name: 'g.digest', spec: '@every 60s', labels: { tenant: 'globex', kind: 'digest' } });
  // an older version's write, to the registry before shards, moved into its shard
  const old = toStored({ name: 'a.old', spec: '@every 60s', labels: { tenant: 'acme', kind: 'digest' } }, 'UTC', true).stored;
  await inspector.redis.hset(keys.legacySchedules, old.name, JSON.stringify(old));
  expect(await migrateLegacyRegistry(inspector.redis, keys, recordingLogger())).toEqual({ adopted: 1, dropped: 1, left: 0 });
  const page = await inspector.schedulePage({ labels: { tenant: 'acme', kind: 'digest' }, limit: 1 });
  expect(page.items.map((i) => i.name)).toEqual(['a.digest']);
  const next = await inspector.schedulePage({ labels: { tenant: 'acme', kind: 'digest' }, limit: 1, cursor: page.cursor! });
  expect([next.items.map((i) => i.name), next.cursor]).toEqual([['a.old'], null]);
  expect((await inspector.schedulePage({ prefix: 'g.' })).items.map((i) => i.name)).toEqual(['g.digest']);
  await inspector.removeSchedule('a.digest');
  expect((await inspector.schedulePage({ labels: { tenant: 'acme' } })).items.map((i) => i.name)).toEqual(['a.old']);
});
