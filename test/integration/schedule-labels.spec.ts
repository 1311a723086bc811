// Schedule labels (issue 25): validation, the registry's indexes (every writer keeps them; a layout
// without them is backfilled) and the paged, filtered listing Inspector.schedulePage.
import type { Redis } from 'ioredis';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { InvalidOptionsError, InvalidScheduleError } from '../../lib/core/runtime/errors.js';
import { SchedulerKeys } from '../../lib/core/redis/keys.js';
import { indexSchedulesScript, registerSchedulesScript } from '../../lib/core/redis/commands/schedule.js';
import { toStored, type ScheduleDefinition, type StoredSchedule } from '../../lib/core/scheduler/definition.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { connect, deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

let ns: string;
let keys: SchedulerKeys;
let redis: Redis;
let inspector: Inspector;
beforeEach(() => {
  ns = newNamespace('labels');
  keys = new SchedulerKeys(ns);
  redis = connect();
  inspector = new Inspector({ connection: redisUrl(), namespace: ns });
});
afterEach(async () => {
  await inspector.close();
  redis.disconnect();
  await deleteNamespace(ns);
});

const stored = (name: string): Promise<StoredSchedule> =>
  redis.hget(keys.schedules, name).then((raw) => JSON.parse(raw!) as StoredSchedule);
const members = (key: string): Promise<string[]> => redis.zrange(key, 0, -1);

/** Every page of a query, following the cursors. */
async function all(query: Parameters<Inspector['schedulePage']>[0]): Promise<{ names: string[]; pages: number }> {
  const names: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await inspector.schedulePage({ ...query, cursor });
    names.push(...page.items.map((i) => i.name));
    cursor = page.cursor ?? undefined;
    pages++;
  } while (cursor !== undefined);
  return { names, pages };
}

test('labels are validated, naming the offending label; stored sorted; unlabelled fingerprints are as before', () => {
  const def = (labels: unknown): ScheduleDefinition => ({ name: 'd', spec: '@every 1s', labels: labels as Record<string, string> });
  expect(() => toStored(def({ 'bad key': 'x' }), 'UTC', true)).toThrow(InvalidScheduleError);
  expect(() => toStored(def({ 'bad key': 'x' }), 'UTC', true)).toThrow(/"bad key".*labels: a key/);
  expect(() => toStored(def({ tenant: 'a=b' }), 'UTC', true)).toThrow(/"a=b".*labels\.tenant/);
  expect(() => toStored(def({ tenant: 'a\nb' }), 'UTC', true)).toThrow(/labels\.tenant/);
  expect(() => toStored(def({ tenant: 7 }), 'UTC', true)).toThrow(/"7".*labels\.tenant/);
  expect(() => toStored(def({ tenant: 'x'.repeat(129) }), 'UTC', true)).toThrow(/labels\.tenant/);
  expect(() => toStored(def({ ['k'.repeat(65)]: 'x' }), 'UTC', true)).toThrow(/labels: a key/);
  expect(() => toStored(def(Object.fromEntries([...Array(17).keys()].map((i) => [`k${i}`, 'v']))), 'UTC', true)).toThrow(/at most 16/);
  expect(() => toStored(def(['x']), 'UTC', true)).toThrow(/labels: expected an object/);
  const plain = toStored({ name: 'd', spec: '@every 1s' }, 'UTC', true).stored;
  expect(plain.labels).toBeUndefined();
  expect(plain.tfp).toBeUndefined();
  expect(toStored(def({}), 'UTC', true).stored.fp).toBe(plain.fp);
  const labelled = toStored(def({ z: '1', 'a.b/c-d_e': '' }), 'UTC', true).stored;
  expect(Object.keys(labelled.labels!)).toEqual(['a.b/c-d_e', 'z']);
  expect(labelled.fp).not.toBe(plain.fp);
  expect(labelled.tfp).toBe(plain.fp); // the triggers' fingerprint leaves the labels out
});

test('a runtime put keeps the label indexes; a label change alone keeps the generation and changedAt, a spec change does not', async () => {
  await inspector.addSchedule({ name: 'r1', spec: '@every 10s', labels: { tenant: 'acme', kind: 'digest' } });
  expect(await members(keys.label('tenant', 'acme'))).toEqual(['r1']);
  expect(await members(keys.label('kind', 'digest'))).toEqual(['r1']);
  expect(await members(keys.nameIndex)).toEqual(['r1']);
  const before = await stored('r1');
  await inspector.addSchedule({ name: 'r1', spec: '@every 10s', labels: { tenant: 'globex', kind: 'digest' } });
  const relabelled = await stored('r1');
  expect(relabelled.labels).toEqual({ kind: 'digest', tenant: 'globex' });
  expect(relabelled.generation).toBe(before.generation);
  expect(relabelled.changedAt).toBe(before.changedAt);
  expect(await members(keys.label('tenant', 'acme'))).toEqual([]);
  expect(await members(keys.label('tenant', 'globex'))).toEqual(['r1']);
  await inspector.addSchedule({ name: 'r1', spec: '@every 20s', labels: { tenant: 'globex' } });
  const respecced = await stored('r1');
  expect(respecced.generation).toBeGreaterThan(before.generation!);
  expect(await members(keys.label('kind', 'digest'))).toEqual([]);
  await inspector.removeSchedule('r1');
  expect(await members(keys.label('tenant', 'globex'))).toEqual([]);
  expect(await members(keys.nameIndex)).toEqual([]);
});

test('register-schedules keeps the indexes; a code schedule whose labels alone changed is not counted as changed and keeps its generation', async () => {
  const reg = (defs: ScheduleDefinition[]) =>
    registerSchedulesScript(redis, keys, {
      nowMs: undefined,
      definitions: defs.map((d) => toStored(d, 'UTC', false).stored).map((s) => [s.name, s.fp, JSON.stringify(s)] as const),
    });
  expect(
    (
      await reg([
        { name: 'c1', spec: '@every 5s', labels: { tenant: 'acme' } },
        { name: 'c2', spec: '@every 5s' },
      ])
    ).changed,
  ).toBe(2);
  const g = (await stored('c1')).generation;
  const relabel = await reg([{ name: 'c1', spec: '@every 5s', labels: { tenant: 'initech' } }]);
  expect(relabel).toMatchObject({ changed: 0, fences: [] });
  expect((await stored('c1')).generation).toBe(g);
  expect((await stored('c1')).labels).toEqual({ tenant: 'initech' });
  expect(await members(keys.label('tenant', 'initech'))).toEqual(['c1']);
  expect(await members(keys.label('tenant', 'acme'))).toEqual([]);
  expect(await members(keys.nameIndex)).toEqual(['c1', 'c2']);
  const respec = await reg([{ name: 'c1', spec: '@every 6s', labels: { tenant: 'initech' } }]);
  expect(respec.changed).toBe(1);
  expect(respec.fences).toHaveLength(1);
});

test('schedulePage: pages in name order through every schedule, filters by labels, prefix and state', async () => {
  for (let i = 0; i < 30; i++) {
    const name = `job-${String(i).padStart(2, '0')}`;
    await inspector.addSchedule({ name, spec: '@every 60s', labels: { tenant: `t${i % 3}`, kind: i % 2 === 0 ? 'even' : 'odd' } });
  }
  await inspector.addSchedule({ name: 'other', spec: '@every 60s' });
  await inspector.pauseSchedule('job-03');
  await inspector.pauseSchedule('job-04');
  const everyName = [...Array(30).keys()].map((i) => `job-${String(i).padStart(2, '0')}`);
  const paged = await all({ limit: 7 });
  expect(paged.names).toEqual([...everyName, 'other']);
  expect(paged.pages).toBe(5);
  expect(await all({ prefix: 'job-', limit: 10 })).toEqual({ names: everyName, pages: 3 }); // no empty page after the last full one
  expect((await all({ labels: { tenant: 't1' }, limit: 4 })).names).toEqual(everyName.filter((_, i) => i % 3 === 1));
  expect((await all({ labels: { tenant: 't1', kind: 'even' }, limit: 2 })).names).toEqual(
    everyName.filter((_, i) => i % 3 === 1 && i % 2 === 0),
  );
  expect((await all({ labels: { tenant: 'nobody' } })).names).toEqual([]);
  expect((await all({ prefix: 'job-1', limit: 3 })).names).toEqual(everyName.slice(10, 20));
  expect((await all({ prefix: 'job-1', labels: { kind: 'odd' } })).names).toEqual(['job-11', 'job-13', 'job-15', 'job-17', 'job-19']);
  expect((await all({ state: 'paused' })).names).toEqual(['job-03', 'job-04']);
  expect((await all({ state: 'active', prefix: 'job-0' })).names).toEqual([
    'job-00',
    'job-01',
    'job-02',
    'job-05',
    'job-06',
    'job-07',
    'job-08',
    'job-09',
  ]);
  expect((await all({ state: 'orphaned' })).names).toEqual([]); // runtime schedules are never orphaned
  const page = await inspector.schedulePage({ labels: { tenant: 't0' }, limit: 1 });
  expect(page.items[0]).toMatchObject({ name: 'job-00', labels: { kind: 'even', tenant: 't0' }, expression: '@every 60s', paused: false });
  expect(page.items[0].next.length).toBeGreaterThan(0);
  await expect(inspector.schedulePage({ limit: 0 })).rejects.toThrow(InvalidOptionsError);
  await expect(inspector.schedulePage({ limit: 1001 })).rejects.toThrow(/limit: .*1001/);
  await expect(inspector.schedulePage({ cursor: '!!' })).rejects.toThrow(/cursor: .*"!!"/);
  await expect(inspector.schedulePage({ state: 'sleeping' as never })).rejects.toThrow(/state: .*sleeping/);
  await expect(inspector.schedulePage({ prefix: 'a b' })).rejects.toThrow(/prefix: .*"a b"/);
});

test('migration: a registry written without indexes is backfilled in bounded steps, and re-indexed when an old writer adds or deletes', async () => {
  // the layout of a version before labels: definitions only (some with labels, as a newer writer would leave them)
  const p = redis.pipeline();
  for (let i = 0; i < 1200; i++) {
    const s = toStored(
      { name: `old-${String(i).padStart(4, '0')}`, spec: '@every 60s', labels: i % 100 === 0 ? { tenant: 'acme' } : undefined },
      'UTC',
      false,
    ).stored;
    p.hset(keys.schedules, s.name, JSON.stringify(s));
  }
  // labels with braces in a value: the backfill decodes those with the whole definition
  const braces = toStored({ name: 'old-braces', spec: '@every 60s', labels: { tenant: 'x}{y', kind: '{' } }, 'UTC', false).stored;
  p.hset(keys.schedules, braces.name, JSON.stringify(braces));
  await p.exec();
  const steps: number[] = [];
  for (let r = await indexSchedulesScript(redis, keys, 500); !r.ready; r = await indexSchedulesScript(redis, keys, 500))
    steps.push(r.indexed);
  expect(steps.length).toBeGreaterThan(2); // 1,200 entries at ~500 per step, then the prune
  expect(Math.max(...steps)).toBeLessThan(1200);
  expect(await redis.zcard(keys.nameIndex)).toBe(1201);
  expect(await members(keys.label('tenant', 'x}{y'))).toEqual(['old-braces']);
  expect(await members(keys.label('kind', '{'))).toEqual(['old-braces']);
  await redis.hdel(keys.schedules, 'old-braces');
  expect(await redis.hget(keys.indexState, 'phase')).toBe('ready');
  expect((await all({ labels: { tenant: 'acme' }, limit: 5 })).names).toEqual(
    [...Array(12).keys()].map((i) => `old-${String(i * 100).padStart(4, '0')}`),
  );
  // an old instance replaces a labelled definition by one without labels: its stale label entry is skipped
  const unlabelled = toStored({ name: 'old-0100', spec: '@every 60s' }, 'UTC', false).stored;
  await redis.hset(keys.schedules, unlabelled.name, JSON.stringify(unlabelled));
  const acme = (await all({ labels: { tenant: 'acme' } })).names;
  expect(acme).toHaveLength(11);
  expect(acme).not.toContain('old-0100');
  expect(await redis.zscore(keys.label('tenant', 'acme'), 'old-0100')).toBe('0'); // left in place: only skipped
  // an old instance stores one and deletes another, bypassing the indexes: the next page re-indexes
  const extra = toStored({ name: 'old-new', spec: '@every 60s' }, 'UTC', false).stored;
  await redis.hset(keys.schedules, extra.name, JSON.stringify(extra));
  await redis.hdel(keys.schedules, 'old-0001', 'old-0002');
  const listed = await all({ prefix: 'old-', limit: 1000 });
  expect(listed.names).toHaveLength(1199);
  expect(listed.names).toContain('old-new');
  expect(listed.names).not.toContain('old-0001');
  expect(await redis.zscore(keys.nameIndex, 'old-0002')).toBeNull();
  expect((await inspector.schedulePage({ prefix: 'old-000', limit: 3 })).items.map((i) => [i.name, i.orphaned])).toEqual([
    ['old-0000', true], // code-declared, no live instance declares it
    ['old-0003', true],
    ['old-0004', true],
  ]);
  expect((await all({ state: 'orphaned', prefix: 'old-001' })).names).toHaveLength(10);
  expect((await all({ state: 'active', prefix: 'old-' })).names).toEqual([]);
});

test('migration: the leader backfills the indexes of a registry written without them, in the background, at its acquisition', async () => {
  const p = redis.pipeline();
  for (let i = 0; i < 700; i++) {
    const s = toStored(
      { name: `pre-${String(i).padStart(3, '0')}`, spec: '0 0 1 1 *', labels: { tenant: `t${i % 7}` } },
      'UTC',
      true,
    ).stored;
    p.hset(keys.schedules, s.name, JSON.stringify(s));
  }
  await p.exec();
  expect(await redis.exists(keys.nameIndex)).toBe(0);
  const leader = new Scheduler({
    connection: redisUrl(),
    namespace: ns,
    leaderTtl: 1000,
    heartbeatInterval: 200,
    logger: recordingLogger(),
  });
  try {
    await leader.start();
    await waitFor(async () => (await redis.hget(keys.indexState, 'phase')) === 'ready', 'the leader to complete the indexes');
    expect(await redis.zcard(keys.nameIndex)).toBe(700);
    expect(await redis.zcard(keys.label('tenant', 't3'))).toBe(100);
  } finally {
    await leader.stop();
  }
});
