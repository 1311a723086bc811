// `chronos schedule ls` with labels, a name prefix, a state, --limit and --cursor: one page of
// Inspector.schedulePage, with the labels and the next cursor. A child process (dist/lib/cli/main.js).
import { Inspector } from '../../lib/core/admin/inspector.js';
import type { SchedulePage } from '../../lib/core/admin/inspector.js';
import { Redis } from 'ioredis';
import { SchedulerKeys } from '../../lib/core/redis/keys.js';
import { describeSpec } from '../../lib/console/describe.js';
import { cliRunner } from '../helpers/cli.js';
import { registryKey, storedJson } from '../helpers/registry.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

let ns: string;
let inspector: Inspector;
const { chronos, json } = cliRunner(() => ns);

beforeAll(async () => {
  ns = newNamespace('cli-labels');
  inspector = new Inspector({ connection: redisUrl(), namespace: ns });
  for (const [name, tenant, kind] of [
    ['acme.digest', 'acme', 'digest'],
    ['acme.digest-weekly', 'acme', 'digest'],
    ['acme.report', 'acme', 'report'],
    ['globex.digest', 'globex', 'digest'],
  ]) {
    await inspector.addSchedule({ name, spec: '@every 60s', labels: { tenant, kind } });
  }
  await inspector.pauseSchedule('acme.digest-weekly');
});
afterAll(async () => {
  await inspector.close();
  await deleteNamespace(ns);
});

test('schedule ls --label … --label …: only the schedules with every label, their labels, and the end of the list', async () => {
  const r = await chronos('schedule', 'ls', '--label', 'tenant=acme', '--label', 'kind=digest');
  expect(r.code).toBe(0);
  const rows = r.out.split('\n').filter((l) => l.startsWith('│') && !l.includes('schedule'));
  expect(rows.map((l) => l.split('│')[1].trim())).toEqual(['acme.digest', 'acme.digest-weekly']);
  expect(r.out).toMatch(/│ acme\.digest-weekly +│.*│ kind=digest tenant=acme +│ paused +│/);
  expect(r.out).toContain('End of the list.');
  expect(r.out).not.toContain('globex');
  expect((await chronos('schedule', 'show', 'acme.report')).out).toMatch(/│ labels +│ kind=report tenant=acme +│/);
});

test('schedule ls --label a=1,b=2 is --label a=1 --label b=2 (a value with a comma but no "=" after it stays one)', async () => {
  // before, the text was one label, "tenant" = "acme,kind=digest", refused for its "="
  const joined = await json<SchedulePage>('schedule', 'ls', '--label', 'tenant=acme,kind=digest');
  expect(joined.items.map((i) => i.name)).toEqual(['acme.digest', 'acme.digest-weekly']);
  const twice = await chronos('schedule', 'ls', '--label', 'tenant=acme,tenant=globex');
  expect([twice.code, twice.err]).toEqual([2, 'error: --label: key "tenant" given twice, got "tenant=globex"\n']);
  const comma = await json<SchedulePage>('schedule', 'ls', '--label', 'tenant=acme,globex');
  expect(comma).toEqual({ items: [], cursor: null }); // one label, the value "acme,globex": no schedule has it
});

test('schedule ls --limit/--cursor pages by name; --prefix and --state filter; bad input is a usage error naming it', async () => {
  const first = await json<SchedulePage>('schedule', 'ls', '--limit', '3');
  expect(first.items.map((i) => i.name)).toEqual(['acme.digest', 'acme.digest-weekly', 'acme.report']);
  expect(first.cursor).not.toBeNull();
  const text = await chronos('schedule', 'ls', '--limit', '3');
  expect(text.out).toContain(`Next page: --cursor ${first.cursor}`);
  const second = await json<SchedulePage>('schedule', 'ls', '--limit', '3', '--cursor', first.cursor!);
  expect([second.items.map((i) => i.name), second.cursor]).toEqual([['globex.digest'], null]);
  expect((await json<SchedulePage>('schedule', 'ls', '--prefix', 'acme.d')).items.map((i) => i.name)).toEqual([
    'acme.digest',
    'acme.digest-weekly',
  ]);
  expect((await json<SchedulePage>('schedule', 'ls', '--state', 'paused')).items.map((i) => i.name)).toEqual(['acme.digest-weekly']);
  const badLabel = await chronos('schedule', 'ls', '--label', 'tenant');
  expect([badLabel.code, badLabel.err]).toEqual([2, 'error: --label: expected key=value, got "tenant"\n']);
  // a label no schedule could carry is a usage error naming it (as on a definition), never an empty list
  const badKey = await chronos('schedule', 'ls', '--label', 'ten ant=acme');
  expect([badKey.code, badKey.err]).toEqual([2, 'error: --label: a key is 1 to 64 characters of [A-Za-z0-9_./-], got "ten ant"\n']);
  const badValue = await chronos('schedule', 'ls', '--label', 'tenant=a=b');
  expect([badValue.code, badValue.err]).toEqual([
    2,
    'error: --label tenant: expected a string of at most 128 characters without control characters or "=", got "a=b"\n',
  ]);
  const twice = await chronos('schedule', 'ls', '--label', 'tenant=acme', '--label', 'tenant=globex');
  expect([twice.code, twice.err]).toEqual([2, 'error: --label: key "tenant" given twice, got "tenant=globex"\n']);
  const many = await chronos('schedule', 'ls', ...[...Array(17).keys()].flatMap((i) => ['--label', `k${i}=v`]));
  expect([many.code, many.err]).toEqual([2, 'error: --label: expected at most 16 labels, got 17\n']);
  const badLimit = await chronos('schedule', 'ls', '--limit', '5000');
  expect(badLimit.code).not.toBe(0);
  expect(badLimit.err).toContain('5000');
  const badState = await chronos('schedule', 'ls', '--state', 'asleep');
  expect(badState.code).not.toBe(0);
  expect(badState.err).toContain('asleep');
});

test('the plain list and the paged list give mixed-case names in one order (code units: upper case first)', async () => {
  const other = new Inspector({ connection: redisUrl(), namespace: newNamespace('cli-case') });
  try {
    for (const name of ['beta', 'Alpha', 'alpha', 'Beta', '_x', 'Zeta']) await other.addSchedule({ name, spec: '@every 60s' });
    const plain = (await other.schedules(0)).map((s) => s.name);
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await other.schedulePage({ limit: 2, cursor });
      paged.push(...page.items.map((i) => i.name));
      cursor = page.cursor ?? undefined;
    } while (cursor);
    expect(plain).toEqual(['Alpha', 'Beta', 'Zeta', '_x', 'alpha', 'beta']);
    expect(paged).toEqual(plain);
  } finally {
    await other.close();
    await deleteNamespace(other.namespace);
  }
});

test('schedule show of an orphaned schedule: its state and since when (was: the state only, though the Inspector has orphanedSince: trial 13)', async () => {
  const name = 'old.code.tick';
  await inspector.addSchedule({ name, spec: '@every 60s' });
  const redis = new Redis(redisUrl());
  try {
    // as an instance of a past deploy left it: declared in code (not runtime), nobody declares it now, the leader stored since when
    const stored = JSON.parse((await storedJson(redis, ns, name))!) as Record<string, unknown>;
    delete stored.runtime;
    await redis.hset(registryKey(ns, name), name, JSON.stringify(stored));
    const since = Date.now() - 3_600_000;
    await redis.hset(new SchedulerKeys(ns).orphaned, name, String(since));
    expect((await inspector.schedule(name))?.orphanedSince).toBe(since);
    const r = await chronos('schedule', 'show', name);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/│ state +│ orphaned +│/);
    expect(r.out).toMatch(/│ orphaned since +│ .*\(1h ago\) +│/);
  } finally {
    redis.disconnect();
    await inspector.removeSchedule(name, { force: true });
  }
});

test('an every-spec with an offset: schedule ls, schedule show and the console say the offset (was: "@every 60s" only, though every trigger is 15 s after the minute: trial 16)', async () => {
  const name = 'acme.offset-sync';
  await inspector.addSchedule({ name, spec: { every: '60s', offset: 15_000 }, labels: { tenant: 'acme' } });
  try {
    const info = await inspector.schedule(name);
    expect(info?.next.every((t) => t % 60_000 === 15_000)).toBe(true);
    const ls = await chronos('schedule', 'ls', '--prefix', 'acme.offset');
    expect(ls.out).toMatch(/│ acme\.offset-sync +│ @every 60s \(offset 15000 ms\) +│/);
    expect((await chronos('schedule', 'show', name)).out).toMatch(/│ spec +│ @every 60s \(offset 15000 ms\) +│/);
    expect(describeSpec(info!.expression, info!.timeZone, info!.offsetMs)).toBe('Every 60s, offset 15000 ms');
    // without an offset, as before
    expect((await chronos('schedule', 'show', 'acme.report')).out).toMatch(/│ spec +│ @every 60s +│/);
    expect(describeSpec('@every 60s', 'UTC')).toBe('Every 60s');
  } finally {
    await inspector.removeSchedule(name);
  }
});

test('--state ended lists the schedules past their endAt, as the state column shows them; --state active leaves them out (was: refused, and listed as active: trial 16)', async () => {
  const now = Date.now();
  await inspector.addSchedule({ name: 'acme.campaign', spec: '@every 60s', startAt: now - 7_200_000, endAt: now - 3_600_000 });
  try {
    expect((await inspector.schedule('acme.campaign'))?.ended).toBe('end-at');
    const ended = await json<SchedulePage>('schedule', 'ls', '--state', 'ended');
    expect(ended.items.map((i) => i.name)).toEqual(['acme.campaign']);
    expect((await chronos('schedule', 'ls', '--state', 'ended')).out).toMatch(/│ acme\.campaign +│.*│ ended +│/);
    const active = await json<SchedulePage>('schedule', 'ls', '--state', 'active', '--prefix', 'acme.');
    expect(active.items.map((i) => i.name)).toEqual(['acme.digest', 'acme.report']);
    expect((await inspector.schedulePage({ state: 'ended', prefix: 'acme.c' })).items.map((i) => i.name)).toEqual(['acme.campaign']);
  } finally {
    await inspector.removeSchedule('acme.campaign');
  }
});
