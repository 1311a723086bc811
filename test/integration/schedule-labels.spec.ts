// Schedule labels (issue 25): validation, the shards' indexes (every writer keeps them; the registry of a
// version before shards is moved into them, indexed) and the paged, filtered listing Inspector.schedulePage.
import { runInNewContext } from 'node:vm';
import type { Redis } from 'ioredis';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { InvalidOptionsError, InvalidScheduleError } from '../../lib/core/runtime/errors.js';
import { byShard, SchedulerKeys, shardKeysFor } from '../../lib/core/redis/keys.js';
import { registerSchedulesScript } from '../../lib/core/redis/commands/schedule.js';
import { putSchedulesScript } from '../../lib/core/redis/commands/schedule-bulk.js';
import { migrateLegacyRegistry } from '../../lib/core/scheduler/migrate.js';
import { dueScore, indexedNames, labelMembers, registryNames, storedDefinition } from '../helpers/registry.js';
import { type ScheduleDefinition, type StoredSchedule } from '../../lib/core/scheduler/definition.js';
import { toStored } from '../../lib/core/scheduler/definition-check.js';
import { labelFilterOf } from '../../lib/core/scheduler/labels.js';
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

const stored = (name: string): Promise<StoredSchedule> => storedDefinition<StoredSchedule>(redis, ns, name).then((s) => s!);
const label = (k: string, v: string): Promise<string[]> => labelMembers(redis, ns, k, v);
const names = (): Promise<string[]> => indexedNames(redis, ns);

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

test('a label value of 128 characters is accepted whatever its characters: an emoji counted as two (UTF-16 units) refused 100 of them as "more than 128"', async () => {
  const def = (value: string): ScheduleDefinition => ({ name: 'e', spec: '@every 1s', labels: { tenant: value } });
  const emoji = '\u{1F600}'.repeat(128);
  expect(toStored(def(emoji), 'UTC', true).stored.labels).toEqual({ tenant: emoji });
  expect(() => toStored(def('\u{1F600}'.repeat(129)), 'UTC', true)).toThrow(/labels\.tenant: expected a string of at most 128 characters/);
  await inspector.addSchedule(def(emoji));
  expect((await inspector.schedulePage({ labels: { tenant: emoji } })).items.map((i) => i.name)).toEqual(['e']);
});

test('a runtime put keeps the label indexes; a label change alone keeps the generation and changedAt, a spec change does not', async () => {
  await inspector.addSchedule({ name: 'r1', spec: '@every 10s', labels: { tenant: 'acme', kind: 'digest' } });
  expect(await label('tenant', 'acme')).toEqual(['r1']);
  expect(await label('kind', 'digest')).toEqual(['r1']);
  expect(await names()).toEqual(['r1']);
  const before = await stored('r1');
  await inspector.addSchedule({ name: 'r1', spec: '@every 10s', labels: { tenant: 'globex', kind: 'digest' } });
  const relabelled = await stored('r1');
  expect(relabelled.labels).toEqual({ kind: 'digest', tenant: 'globex' });
  expect(relabelled.generation).toBe(before.generation);
  expect(relabelled.changedAt).toBe(before.changedAt);
  expect(await label('tenant', 'acme')).toEqual([]);
  expect(await label('tenant', 'globex')).toEqual(['r1']);
  await inspector.addSchedule({ name: 'r1', spec: '@every 20s', labels: { tenant: 'globex' } });
  const respecced = await stored('r1');
  expect(respecced.generation).toBeGreaterThan(before.generation!);
  expect(await label('kind', 'digest')).toEqual([]);
  await inspector.removeSchedule('r1');
  expect(await label('tenant', 'globex')).toEqual([]);
  expect(await names()).toEqual([]);
});

test("put-schedules indexes a new schedule by the label keys sent; a replacement reads its labels from the bulk layout's tail, or from the whole JSON in any other key order", async () => {
  const put = (name: string, labels: Record<string, string>, reorder: boolean) => {
    const { stored: s, json } = toStored({ name, spec: '@every 10s', labels }, 'UTC', true);
    // another writer's key order: labels first, fingerprints next, then the rest
    const { labels: l, fp, tfp, ...rest } = s;
    const text = reorder ? JSON.stringify({ labels: l, fp, tfp, ...rest }) : json;
    const keys = shardKeysFor(ns, name);
    const labelKeys = Object.entries(labels).map(([k, v]) => keys.label(k, v)); // what a new schedule is indexed by
    return putSchedulesScript(redis, keys, 'upsert', [{ name, fp: s.fp, json: text, labelKeys }]);
  };
  await put('tail', { tenant: 'a"}b', kind: 'digest' }, false);
  await put('whole', { tenant: 'a"}b', kind: 'report' }, true);
  expect(await label('tenant', 'a"}b')).toEqual(['tail', 'whole']);
  expect([await label('kind', 'digest'), await label('kind', 'report')]).toEqual([['tail'], ['whole']]);
  // a label-only change keeps the generation in both layouts (their tfp read alike)
  const before = [(await stored('tail')).generation, (await stored('whole')).generation];
  await put('tail', { tenant: 'c' }, false);
  await put('whole', { tenant: 'c' }, true);
  expect([(await stored('tail')).generation, (await stored('whole')).generation]).toEqual(before);
  expect(await label('tenant', 'c')).toEqual(['tail', 'whole']);
  expect(await label('tenant', 'a"}b')).toEqual([]);
});

test('register-schedules keeps the indexes; a code schedule whose labels alone changed is not counted as changed and keeps its generation', async () => {
  // one call per shard, as the Scheduler's publish makes them; the outcomes summed
  const reg = async (defs: ScheduleDefinition[]) => {
    const all = defs.map((d) => toStored(d, 'UTC', false).stored).map((s) => [s.name, s.fp, JSON.stringify(s)] as const);
    const out = { changed: 0, fences: [] as unknown[] };
    for (const [k, definitions] of byShard(ns, all, (d) => d[0])) {
      const r = await registerSchedulesScript(redis, k, { nowMs: undefined, definitions });
      out.changed += r.changed;
      out.fences.push(...r.fences);
    }
    return out;
  };
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
  expect(await label('tenant', 'initech')).toEqual(['c1']);
  expect(await label('tenant', 'acme')).toEqual([]);
  expect(await names()).toEqual(['c1', 'c2']);
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
  // a value of the wrong type is named as it was given, in the error of the option (trial 23: a TypeError
  // "q.prefix.replace is not a function"; "got null" for NaN)
  for (const [query, issue] of [
    [{ prefix: 5 }, 'prefix: expected 1-200 characters of [A-Za-z0-9_.:-], got 5'],
    [{ prefix: null }, 'prefix: expected 1-200 characters of [A-Za-z0-9_.:-], got null'],
    [{ limit: NaN }, 'limit: expected an integer 1-1000, got NaN'],
    [{ limit: Infinity }, 'limit: expected an integer 1-1000, got Infinity'],
    [{ limit: '5' }, 'limit: expected an integer 1-1000, got "5"'],
  ] as [never, string][]) {
    await expect(inspector.schedulePage(query)).rejects.toThrow(new InvalidOptionsError([issue], 'schedule page options'));
  }
  // a misspelt option is no filter silently left out (trial 7)
  await expect(inspector.schedulePage({ label: { tenant: 't0' } } as never)).rejects.toThrow(/unknown option "label" \(known: labels,/);
});

test('schedulePage pages past a schedule named "." or ".." that an earlier version stored: its cursor was refused ("expected a cursor of a previous page")', async () => {
  // written as the version before trial 15 could: the names "." and ".." were accepted then
  for (const name of ['.', '..']) {
    const { stored: s } = toStored({ name: 'legacy', spec: '@every 60s' }, 'UTC', true);
    const k = shardKeysFor(ns, name);
    await redis.hset(k.schedules, name, JSON.stringify({ ...s, name, registeredAt: 1, changedAt: 1, generation: 1 }));
    await redis.zadd(k.nameIndex, 0, name);
  }
  await inspector.addSchedule({ name: 'a', spec: '@every 60s' });
  await inspector.addSchedule({ name: '.b', spec: '@every 60s' });
  expect(await all({ limit: 1 })).toEqual({ names: ['.', '..', '.b', 'a'], pages: 4 });
  expect((await all({ prefix: '.', limit: 1 })).names).toEqual(['.', '..', '.b']);
});

test('schedulePage: a label filter no schedule could carry is an error naming it, as on a definition; never an empty page', async () => {
  await expect(inspector.schedulePage({ labels: { 'ten ant': 't0' } })).rejects.toThrow(InvalidOptionsError);
  await expect(inspector.schedulePage({ labels: { 'ten ant': 't0' } })).rejects.toThrow(/labels: a key .*"ten ant"/);
  await expect(inspector.schedulePage({ labels: { tenant: 't0=x' } })).rejects.toThrow(/labels\.tenant: .*"t0=x"/);
  await expect(inspector.schedulePage({ labels: { tenant: 7 as never } })).rejects.toThrow(/labels\.tenant: .*, got 7$/);
  const seventeen = Object.fromEntries([...Array(17).keys()].map((i) => [`k${i}`, 'v']));
  await expect(inspector.schedulePage({ labels: seventeen })).rejects.toThrow(/at most 16 labels, got 17/);
  await expect(inspector.schedulePage({ labels: ['x'] as never })).rejects.toThrow(/labels: expected an object/);
  // the value as given: null, not "null" (trial 23)
  await expect(inspector.schedulePage({ labels: null as never })).rejects.toThrow(/labels: expected an object of string values, got null$/);
  // a valid filter that matches nothing is still an empty page, not an error
  expect(await inspector.schedulePage({ labels: { tenant: 'nobody' } })).toEqual({ items: [], cursor: null });
});

test('a "__proto__" label key is refused on a definition and in a filter (trial 22: dropped, the filter listed every schedule)', async () => {
  // JSON (an HTTP body, a file) gives an object whose own key is "__proto__"; an assignment cannot hold it
  const proto = JSON.parse('{"__proto__": "x"}') as Record<string, string>;
  const scheduler = new Scheduler({ connection: redisUrl(), namespace: ns, logger: false });
  try {
    await scheduler.upsertSchedules([{ name: 'plain', spec: '@daily' }]);
    await expect(scheduler.upsertSchedules([{ name: 'p', spec: '@daily', labels: proto }])).rejects.toThrow(InvalidScheduleError);
    await expect(scheduler.addSchedule({ name: 'p', spec: '@daily', labels: proto })).rejects.toThrow(/"__proto__".*labels: a key is not/);
    expect(await registryNames(redis, ns)).toEqual(['plain']);
  } finally {
    await scheduler.stop();
  }
  await expect(inspector.schedulePage({ labels: proto })).rejects.toThrow(/labels: a key is not "__proto__".*got "__proto__"/);
  // the CLI's --label and the console's label= (labelFilterOf): an error naming it, not an empty filter
  expect(labelFilterOf(['__proto__=x'])).toEqual({
    problem: 'label: a key is not "__proto__" (JavaScript objects reserve it), got "__proto__"',
  });
  expect(labelFilterOf(['tenant=acme'])).toEqual({ labels: { tenant: 'acme' } });
});

test('a label filter text holds several pairs joined by commas; a comma with no "=" after it is part of the value', () => {
  expect(labelFilterOf(['tenant=acme,kind=digest'])).toEqual({ labels: { tenant: 'acme', kind: 'digest' } });
  expect(labelFilterOf(['a=1,2,b=3', 'c='])).toEqual({ labels: { a: '1,2', b: '3', c: '' } });
  expect(labelFilterOf(['kinds=a,b'])).toEqual({ labels: { kinds: 'a,b' } });
  expect(labelFilterOf(['a=1,=2'])).toEqual({ problem: 'label: expected key=value, got "=2"' });
  expect(labelFilterOf(['a=b=c'])).toEqual({
    problem: 'label a: expected a string of at most 128 characters without control characters or "=", got "b=c"',
  });
});

test('labels that are not a plain object (a Map, a Date) are refused on a definition and in a filter (trial 29: dropped, the filter listed every schedule)', async () => {
  const map = new Map([['tenant', 'acme']]) as never;
  const scheduler = new Scheduler({ connection: redisUrl(), namespace: ns, logger: false });
  try {
    await scheduler.upsertSchedules([{ name: 'other', spec: '@daily', labels: { tenant: 'globex' } }]);
    await expect(scheduler.upsertSchedules([{ name: 'm', spec: '@daily', labels: map }])).rejects.toThrow(
      /labels: expected a plain object of string values, not a Map \(Object\.fromEntries\(map\) makes one\)/,
    );
    await expect(scheduler.addSchedule({ name: 'm', spec: '@daily', labels: new Date(0) as never })).rejects.toThrow(/not a Date/);
    expect(await registryNames(redis, ns)).toEqual(['other']);
  } finally {
    await scheduler.stop();
  }
  await expect(inspector.schedulePage({ labels: map })).rejects.toThrow(/labels: expected a plain object of string values, not a Map/);
  // an object without a prototype, or of another realm, is a plain one
  const bare = Object.assign(Object.create(null) as Record<string, string>, { tenant: 'globex' });
  const realm = runInNewContext('({ tenant: "globex" })') as Record<string, string>;
  for (const labels of [bare, realm]) {
    expect((await inspector.schedulePage({ labels })).items.map((i) => i.name)).toEqual(['other']);
    expect(toStored({ name: 'd', spec: '@daily', labels }, 'UTC', true).stored.labels).toEqual({ tenant: 'globex' });
  }
});

test('migration: the registry of a version before shards moves into them in bounded steps, indexed and marked due; a newer shard definition wins', async () => {
  // the layout of a version before shards: one HASH in the scheduler's slot, with its own indexes
  const p = redis.pipeline();
  for (let i = 0; i < 1200; i++) {
    const s = toStored(
      { name: `old-${String(i).padStart(4, '0')}`, spec: '@every 60s', labels: i % 100 === 0 ? { tenant: 'acme' } : undefined },
      'UTC',
      false,
    ).stored;
    p.hset(keys.legacySchedules, s.name, JSON.stringify({ ...s, registeredAt: 1, changedAt: 1, generation: 5 }));
  }
  // labels with braces in a value
  const braces = toStored({ name: 'old-braces', spec: '@every 60s', labels: { tenant: 'x}{y', kind: '{' } }, 'UTC', false).stored;
  p.hset(keys.legacySchedules, braces.name, JSON.stringify({ ...braces, generation: 5 }));
  p.zadd(keys.prefix + 'index:names', 0, 'old-0000').zadd(keys.prefix + 'label:tenant=acme', 0, 'old-0000');
  await p.exec();
  // a schedule changed through the shards already (a newer generation) keeps its definition
  await inspector.addSchedule({ name: 'old-0005', spec: '@every 30s' });
  const r = await migrateLegacyRegistry(redis, keys, recordingLogger());
  expect(r).toEqual({ adopted: 1200, dropped: 1201, left: 0 });
  expect(await redis.exists(keys.legacySchedules, keys.prefix + 'index:names', keys.prefix + 'label:tenant=acme')).toBe(0);
  expect(await registryNames(redis, ns)).toHaveLength(1201);
  expect((await stored('old-0005')).expression).toBe('@every 30s');
  expect((await stored('old-0006')).generation).toBe(5);
  expect(await names()).toHaveLength(1201);
  expect(await label('tenant', 'x}{y')).toEqual(['old-braces']);
  expect(await label('kind', '{')).toEqual(['old-braces']);
  expect(await dueScore(redis, ns, 'old-0007')).toBeLessThan(0); // marked: its shard's leader plans it at once
  // a shard's next change takes a generation above every migrated one
  expect(Number(await redis.get(shardKeysFor(ns, 'old-0007').version))).toBeGreaterThanOrEqual(5);
  expect((await all({ labels: { tenant: 'acme' }, limit: 5 })).names).toEqual(
    [...Array(12).keys()].map((i) => `old-${String(i * 100).padStart(4, '0')}`),
  );
  expect((await inspector.schedulePage({ prefix: 'old-000', limit: 3 })).items.map((i) => [i.name, i.orphaned])).toEqual([
    ['old-0000', true], // code-declared, no live instance declares it
    ['old-0001', true],
    ['old-0002', true],
  ]);
  expect((await all({ state: 'orphaned', prefix: 'old-001' })).names).toHaveLength(10);
  expect((await all({ state: 'active', prefix: 'old-' })).names).toEqual(['old-0005']);
  // an older instance still running writes the legacy registry again: the next pass moves it too
  const late = toStored({ name: 'old-late', spec: '@every 60s' }, 'UTC', true).stored;
  await redis.hset(keys.legacySchedules, late.name, JSON.stringify({ ...late, generation: 7 }));
  expect(await migrateLegacyRegistry(redis, keys, recordingLogger())).toEqual({ adopted: 1, dropped: 1, left: 0 });
  expect((await stored('old-late')).generation).toBe(7);
});

test('migration: a scheduler of this version over the registry of an earlier one fires its schedules; the notice of an older writer moves its later write', async () => {
  const p = redis.pipeline();
  for (let i = 0; i < 50; i++) {
    const s = toStored(
      { name: `pre-${String(i).padStart(2, '0')}`, spec: '@every 1s', labels: { tenant: `t${i % 7}` } },
      'UTC',
      true,
    ).stored;
    p.hset(keys.legacySchedules, s.name, JSON.stringify({ ...s, registeredAt: Date.now(), changedAt: Date.now(), generation: 1 }));
  }
  await p.exec();
  const fired = new Set<string>();
  const leader = new Scheduler({
    connection: redisUrl(),
    namespace: ns,
    leaderTtl: 1000,
    heartbeatInterval: 200,
    logger: recordingLogger(),
  });
  leader.events.subscribe((e) => e.type === 'schedule.fired' && fired.add(e.schedule));
  try {
    await leader.start();
    await waitFor(() => fired.size === 50, 'every migrated schedule to fire');
    expect(await redis.hlen(keys.legacySchedules)).toBe(0);
    expect(await label('tenant', 't3')).toHaveLength(7);
    // an instance of the earlier version adds one the old way: its registry write and its notice (a schedule name)
    const late = toStored({ name: 'pre-late', spec: '@every 1s' }, 'UTC', true).stored;
    await redis.hset(
      keys.legacySchedules,
      late.name,
      JSON.stringify({ ...late, registeredAt: Date.now(), changedAt: Date.now(), generation: 2 }),
    );
    await redis.publish(keys.changesChannel, 'pre-late');
    await waitFor(() => fired.has('pre-late'), 'the later write to be moved and fired');
  } finally {
    await leader.stop();
  }
});
