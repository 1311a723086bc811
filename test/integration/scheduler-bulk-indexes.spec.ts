// The bulk runtime API of the Scheduler against a real Redis: the maxRuns counters, the label indexes and the due index it keeps.
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueKeys, shardKeysFor } from '../../lib/core/redis/keys.js';
import { dueScore, indexedNames, labelMembers, shardVersions, storedJson } from '../helpers/registry.js';
import { redisUrl } from '../helpers/redis.js';
import { ns, client, started, scheduler, digests, stored } from '../helpers/scheduler-bulk.js';

test('the bulk path drops the maxRuns counters a removal or a change of queue leaves behind, and keeps the others', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  const defs = digests(3, { maxRuns: 5 });
  await s.upsertSchedules(defs);
  const counter = (queue: string, name: string) => new QueueKeys(ns, queue).runs(name);
  // the counts fire.lua would have taken: 2 runs each
  for (const d of defs) await client.hset(counter('digests', d.name), 'max', 5, 'n', 2);
  // digest.0 moves to another queue (its count starts afresh), digest.1 changes its payload only
  const changed = [
    { ...defs[0], queue: 'digests-eu' },
    { ...defs[1], payload: { tenant: 'one' } },
  ];
  expect(await s.upsertSchedules(changed)).toEqual({ added: 0, changed: 2, unchanged: 0 });
  expect(await client.exists(counter('digests', 'digest.0'))).toBe(0);
  expect(await client.hget(counter('digests', 'digest.1'), 'n')).toBe('2');
  await s.removeSchedules(['digest.1', 'digest.2']);
  expect(await client.exists(counter('digests', 'digest.1'), counter('digests', 'digest.2'))).toBe(0);
});

test('the bulk path keeps the label indexes: pages find what upsertSchedules stored; a label-only change keeps the generation; removal unindexes', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  const defs = digests(300).map((d, i) => ({ ...d, labels: { tenant: `t${i % 3}`, kind: 'digest' } }));
  await s.upsertSchedules(defs);
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns });
  started.push({ stop: () => inspector.close() });
  const page = await inspector.schedulePage({ labels: { tenant: 't1', kind: 'digest' }, limit: 1000 });
  expect(page.items.map((i) => i.name).sort()).toEqual(
    defs
      .filter((_, i) => i % 3 === 1)
      .map((d) => d.name)
      .sort(),
  );
  expect(await indexedNames(client, ns)).toHaveLength(300);

  const before = await stored('digest.1');
  const version = await shardVersions(client, ns);
  // digest.1 moves tenant (labels only): same generation, no new version, no fence
  expect(await s.upsertSchedules([{ ...defs[1], labels: { tenant: 'moved', kind: 'digest' } }])).toEqual({
    added: 0,
    changed: 1,
    unchanged: 0,
  });
  expect((await stored('digest.1')).generation).toBe(before.generation);
  expect(await shardVersions(client, ns)).toBe(version);
  expect(await client.hexists(new QueueKeys(ns, 'digests').generation, 'digest.1')).toBe(0);
  expect(await labelMembers(client, ns, 'tenant', 't1')).not.toContain('digest.1');
  expect(await labelMembers(client, ns, 'tenant', 'moved')).toEqual(['digest.1']);

  // labels dropped: digest.201 loses them only (same generation, unindexed), digest.200 also gets a new payload (new generation)
  const [old200, old201] = [await stored('digest.200'), await stored('digest.201')];
  const { labels: _l200, ...bare200 } = defs[200];
  const { labels: _l201, ...bare201 } = defs[201];
  expect(await s.upsertSchedules([{ ...bare200, payload: { v: 2 } }, bare201])).toEqual({ added: 0, changed: 2, unchanged: 0 });
  expect((await stored('digest.201')).generation).toBe(old201.generation);
  expect((await stored('digest.200')).generation).toBeGreaterThan(old200.generation!);
  expect(await stored('digest.200')).toMatchObject({ changedAt: old200.changedAt, registeredAt: old200.registeredAt });
  expect((await stored('digest.200')).labels).toBeUndefined();
  for (const name of ['digest.200', 'digest.201']) {
    expect(await labelMembers(client, ns, 'kind', 'digest')).not.toContain(name);
    expect(await labelMembers(client, ns, 'tenant', `t${name === 'digest.200' ? 2 : 0}`)).not.toContain(name);
  }
  expect(await indexedNames(client, ns)).toHaveLength(300);

  await s.removeSchedules(defs.slice(0, 150).map((d) => d.name));
  expect(await indexedNames(client, ns)).toHaveLength(150);
  expect(await labelMembers(client, ns, 'tenant', 'moved')).toEqual([]);
  const rest = await inspector.schedulePage({ labels: { kind: 'digest' }, limit: 1000 });
  expect(rest.items).toHaveLength(148); // 150 left, 2 of them without labels
});

test('the bulk path keeps the due index: added and changed ones are marked, a paused one is out, a label-only change and an unchanged one leave it', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  const defs = digests(20).map((d) => ({ ...d, labels: { tenant: 'acme' } }));
  await s.upsertSchedules(defs);
  const marks = await Promise.all(defs.map((d) => dueScore(client, ns, d.name)));
  expect(marks.every((m) => m !== null && m < 0)).toBe(true); // "look at it now": a change's mark, below every wake instant
  await s.pauseSchedule('digest.2');
  expect(await dueScore(client, ns, 'digest.2')).toBeNull();
  // what a leader would have written after planning them: their next wake, an integer
  for (const d of defs) if (d.name !== 'digest.2') await client.zadd(shardKeysFor(ns, d.name).due, 4_000_000_000_000, d.name);
  await s.upsertSchedules([
    { ...defs[1], labels: { tenant: 'globex' } }, // labels only: its triggers did not change
    { ...defs[2], payload: { v: 2 } }, // paused: stays out
    { ...defs[3], payload: { v: 2 } }, // changed: marked again
    defs[4], // unchanged
  ]);
  expect(await dueScore(client, ns, 'digest.1')).toBe(4_000_000_000_000);
  expect(await dueScore(client, ns, 'digest.2')).toBeNull();
  expect(await dueScore(client, ns, 'digest.3')).toBeLessThan(0);
  expect(await dueScore(client, ns, 'digest.4')).toBe(4_000_000_000_000);
  await s.resumeSchedule('digest.2');
  expect(await dueScore(client, ns, 'digest.2')).toBeLessThan(0);
  await s.removeSchedules(['digest.3']);
  expect(await dueScore(client, ns, 'digest.3')).toBeNull();
});

test('a bulk replacement counts triggers afresh (changedAt) exactly when its timing changed: spec, zone, queue or a bound; a label key ending in "At" does not', async () => {
  const base = { spec: '0 3 * * *', payload: { v: 1 } };
  const defs = [
    { name: 'gains.start', ...base },
    { name: 'loses.runs', ...base, maxRuns: 3 },
    { name: 'label.at', ...base, labels: { createdAt: 'x', plan: 'pro' } },
    { name: 'payload.only', ...base },
    { name: 'new.zone', ...base },
    { name: 'keeps.end', ...base, endAt: 4_000_000_000_000 },
  ];
  const next = [
    { name: 'gains.start', ...base, payload: { v: 2 }, startAt: 1_800_000_000_000 },
    { name: 'loses.runs', ...base, payload: { v: 2 } },
    { name: 'label.at', ...base, payload: { v: 2 }, labels: { createdAt: 'y', plan: 'pro' } },
    { name: 'payload.only', ...base, payload: { v: 2 } },
    { name: 'new.zone', ...base, payload: { v: 2 }, timeZone: 'Europe/Paris' },
    { name: 'keeps.end', ...base, payload: { v: 2 }, endAt: 4_000_000_000_000 },
  ];
  const redisMs = async () => (([sec, us]) => Number(sec) * 1000 + Math.floor(Number(us) / 1000))(await client.time());
  for (const compactSchedules of [false, true]) {
    const s = scheduler({ eligible: false, compactSchedules });
    await s.start();
    await s.removeSchedules(defs.map((d) => d.name));
    await s.addSchedules(defs);
    const before = new Map(await Promise.all(defs.map(async (d) => [d.name, (await stored(d.name)).changedAt] as const)));
    // a later millisecond of Redis time than the adds', so a changedAt moved to now differs
    const added = await redisMs();
    while ((await redisMs()) === added);
    expect(await s.upsertSchedules(next)).toEqual({ added: 0, changed: 6, unchanged: 0 });
    const moved: string[] = [];
    for (const d of next) if ((await stored(d.name)).changedAt !== before.get(d.name)) moved.push(d.name);
    expect([compactSchedules, moved.sort()]).toEqual([compactSchedules, ['gains.start', 'loses.runs', 'new.zone']]);
  }
});

test('a bulk replacement read by its stored tail (not decoded) keeps registeredAt, changedAt, paused and resumedAt, takes a new generation, and keeps the labels indexed; label keys "fp" and "tfp" are not taken for its fingerprints', async () => {
  // label values shaped like fingerprints, under the keys the tail reader looks for
  const labels = { a: 'first', fp: '0123456789abcdef', tfp: 'fedcba9876543210', tenant: 'acme' };
  const defs = [
    { name: 'plain', spec: '0 3 * * *', payload: { v: 1 } },
    { name: 'labelled', spec: '0 3 * * *', payload: { v: 1 }, labels },
    { name: 'paused', spec: '0 3 * * *', payload: { v: 1 }, labels },
    { name: 'resumed', spec: '0 3 * * *', payload: { v: 1 }, queue: 'q.2' },
  ];
  for (const compactSchedules of [false, true]) {
    const s = scheduler({ eligible: false, compactSchedules });
    await s.start();
    await s.removeSchedules(defs.map((d) => d.name));
    await s.addSchedules(defs);
    await s.pauseSchedule('paused');
    await s.pauseSchedule('resumed');
    await s.resumeSchedule('resumed');
    // a changed payload, then the same again (unchanged: read by its tail too)
    const before = new Map(await Promise.all(defs.map(async (d) => [d.name, await stored(d.name)] as const)));
    const next = defs.map((d) => ({ ...d, payload: { v: 2 } }));
    expect(await s.upsertSchedules(next)).toEqual({ added: 0, changed: 4, unchanged: 0 });
    expect(await s.upsertSchedules(next)).toEqual({ added: 0, changed: 0, unchanged: 4 });
    for (const d of defs) {
      const [was, now] = [before.get(d.name)!, await stored(d.name)];
      const kept = (x: typeof was) => [x.registeredAt, x.changedAt, x.paused, x.resumedAt, x.labels, x.queue, x.runtime];
      expect([compactSchedules, d.name, kept(now)]).toEqual([compactSchedules, d.name, kept(was)]);
      expect([compactSchedules, d.name, now.payload]).toEqual([compactSchedules, d.name, JSON.stringify({ v: 2 })]);
      expect(now.generation).toBeGreaterThan(was.generation!);
    }
    expect((await labelMembers(client, ns, 'tenant', 'acme')).sort()).toEqual(['labelled', 'paused']);
    expect((await labelMembers(client, ns, 'fp', labels.fp)).sort()).toEqual(['labelled', 'paused']);
    // the paused one stays out of the due index; the others were marked (a new generation)
    expect(await dueScore(client, ns, 'paused')).toBeNull();
    expect(await dueScore(client, ns, 'plain')).toBeLessThan(0);
  }
});

test('a bulk replacement of a stored JSON with a registry field before its fingerprints (another key order) keeps that field', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  const def = { name: 'moved.paused', spec: '0 3 * * *', payload: { v: 1 }, labels: { tenant: 'acme' } };
  await s.addSchedules([def]);
  // the bulk layout, but "paused" and "generation" written before the labels (and so before fp)
  const json = (await storedJson(client, ns, def.name))!;
  const generation = /"generation":(\d+)/.exec(json)![1];
  const reordered = json
    .replace(`,"generation":${generation}`, '')
    .replace('"runtime":true,', `"runtime":true,"paused":true,"generation":${generation},`);
  await client.hset(shardKeysFor(ns, def.name).schedules, def.name, reordered);
  expect(await s.upsertSchedules([{ ...def, payload: { v: 2 } }])).toEqual({ added: 0, changed: 1, unchanged: 0 });
  const now = await stored(def.name);
  expect([now.paused, now.payload]).toEqual([true, JSON.stringify({ v: 2 })]);
  expect(now.generation).toBeGreaterThan(Number(generation));
  expect(await dueScore(client, ns, def.name)).toBeNull();
});
