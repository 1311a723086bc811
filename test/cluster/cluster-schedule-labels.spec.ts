// Schedule labels on a real 3-master Redis Cluster (issue 25): the registry's indexes live in the
// scheduler's slot, built on the key prefix the scripts are given, so the puts, the backfill and the
// paged listing run there like on one server. Run with `npm run test:cluster`.
import { jest } from '@jest/globals';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { SchedulerKeys } from '../../lib/core/redis/keys.js';
import { toStored } from '../../lib/core/scheduler/definition.js';
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

test('labelled puts, a backfill of definitions written without indexes, and filtered pages, on a cluster', async () => {
  const keys = new SchedulerKeys(ns);
  expect(cluster.masterOf(keys.label('tenant', 'acme')).port).toBe(cluster.masterOf(keys.schedules).port);
  expect(cluster.masterOf(keys.nameIndex).port).toBe(cluster.masterOf(keys.schedules).port);
  await inspector.addSchedule({ name: 'a.digest', spec: '@every 60s', labels: { tenant: 'acme', kind: 'digest' } });
  await inspector.addSchedule({ name: 'g.digest', spec: '@every 60s', labels: { tenant: 'globex', kind: 'digest' } });
  // an older version's write: the definition only
  const old = toStored({ name: 'a.old', spec: '@every 60s', labels: { tenant: 'acme', kind: 'digest' } }, 'UTC', true).stored;
  await inspector.redis.hset(keys.schedules, old.name, JSON.stringify(old));
  const page = await inspector.schedulePage({ labels: { tenant: 'acme', kind: 'digest' }, limit: 1 });
  expect(page.items.map((i) => i.name)).toEqual(['a.digest']);
  const next = await inspector.schedulePage({ labels: { tenant: 'acme', kind: 'digest' }, limit: 1, cursor: page.cursor! });
  expect([next.items.map((i) => i.name), next.cursor]).toEqual([['a.old'], null]);
  expect((await inspector.schedulePage({ prefix: 'g.' })).items.map((i) => i.name)).toEqual(['g.digest']);
  await inspector.removeSchedule('a.digest');
  expect((await inspector.schedulePage({ labels: { tenant: 'acme' } })).items.map((i) => i.name)).toEqual(['a.old']);
});
