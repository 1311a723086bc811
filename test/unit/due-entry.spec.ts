import { type ScheduleDefinition } from '../../lib/core/scheduler/definition.js';
import { toStored } from '../../lib/core/scheduler/definition-check.js';
import { DEFINITION_CACHE_PERIOD_MS, entryOf, SpecCache } from '../../lib/core/scheduler/due-entry.js';

/** Unit tests of a due batch's entries (scheduler/due-entry.ts): the decoded-definition cache. No Redis. */

const NOW = Date.parse('2024-03-01T12:00:00Z');

/** The stored text's bytes, as take-due.lua's reply hands them to the leader. */
function json(def: Partial<ScheduleDefinition>, generation?: number): Buffer {
  const { stored } = toStored({ name: 'job', type: 'email', spec: { every: 1000 }, ...def } as ScheduleDefinition, 'UTC', false);
  return Buffer.from(JSON.stringify(generation === undefined ? stored : { ...stored, generation }));
}

test('an unchanged stored text is decoded once: its entries share the definition, each batch gets its own entry', () => {
  const cache = new SpecCache('ns');
  const text = json({});
  const a = entryOf({ name: 'job', score: '1', json: text }, cache, NOW);
  a.lastFired = NOW + 5000;
  a.exhausted = true;
  const b = entryOf({ name: 'job', score: '2', json: Buffer.from(text) }, cache, NOW);
  expect(b).not.toBe(a);
  expect(b.stored).toBe(a.stored);
  expect(b.spec).toBe(a.spec);
  expect(b.score).toBe('2');
  expect(b.lastFired).toBe(a.stored.registeredAt ?? NOW);
  expect(b.exhausted).toBeUndefined();
  expect([b.dedupTtlMs, b.leadMs, b.generation]).toEqual([a.dedupTtlMs, a.leadMs, a.generation]);
});

test('a changed stored text (a new generation, another spec) is decoded anew', () => {
  const cache = new SpecCache('ns');
  const a = entryOf({ name: 'job', score: '1', json: json({}, 1) }, cache, NOW);
  const b = entryOf({ name: 'job', score: '1', json: json({}, 2) }, cache, NOW);
  expect(b.stored).not.toBe(a.stored);
  expect([a.generation, b.generation]).toEqual([1, 2]);
  const c = entryOf({ name: 'job', score: '1', json: json({ spec: { every: 60_000 } }, 2) }, cache, NOW);
  expect(c.spec.nextAfter(NOW)).toBe(NOW + 60_000);
  expect(b.spec.nextAfter(NOW)).toBe(NOW + 1000);
});

test('a text that does not decode throws at every batch (nothing is cached for it)', () => {
  const cache = new SpecCache('ns');
  expect(() => entryOf({ name: 'job', score: '1', json: Buffer.from('{not json') }, cache, NOW)).toThrow();
  expect(() => entryOf({ name: 'job', score: '1', json: Buffer.from('{not json') }, cache, NOW)).toThrow();
  const bad = Buffer.from(json({}).toString().replace('@every 1s', '@every nothing'));
  expect(bad.equals(json({}))).toBe(false);
  expect(() => entryOf({ name: 'job', score: '1', json: bad }, cache, NOW)).toThrow();
});

test('the cache keeps a copy of the bytes: the reply buffer they came in may be reused', () => {
  const cache = new SpecCache('ns');
  const reply = json({}, 1);
  const a = entryOf({ name: 'job', score: '1', json: reply }, cache, NOW);
  reply.fill(0x20); // the reply's memory, written over by a later reply
  expect(entryOf({ name: 'job', score: '1', json: json({}, 1) }, cache, NOW).stored).toBe(a.stored);
  expect(entryOf({ name: 'job', score: '1', json: json({}, 2) }, cache, NOW).generation).toBe(2);
});

test('a rare schedule (period over DEFINITION_CACHE_PERIOD_MS) is decoded at each call, not kept; a frequent one is kept', () => {
  const cache = new SpecCache('ns');
  const rare = json({ spec: { every: DEFINITION_CACHE_PERIOD_MS + 1000 } }, 1);
  const a = entryOf({ name: 'job', score: '1', json: rare }, cache, NOW);
  const b = entryOf({ name: 'job', score: '1', json: rare }, cache, NOW);
  expect(b.stored).not.toBe(a.stored);
  expect(b.stored).toEqual(a.stored);
  expect(b.spec).toBe(a.spec); // the spec is still shared
  expect([b.dedupTtlMs, b.leadMs, b.generation]).toEqual([a.dedupTtlMs, a.leadMs, a.generation]);
  rare.fill(0x20); // not kept: the caller's bytes may be reused
  const frequent = json({ spec: { every: DEFINITION_CACHE_PERIOD_MS } }, 1);
  const c = entryOf({ name: 'job', score: '1', json: frequent }, cache, NOW);
  expect(entryOf({ name: 'job', score: '1', json: frequent }, cache, NOW).stored).toBe(c.stored);
});

test('schedules of one spec share it, met in a row or not; another zone, offset or bound is another spec', () => {
  const cache = new SpecCache('ns');
  const one = (name: string, def: Partial<ScheduleDefinition>) => {
    const { stored } = toStored({ name, type: 'email', spec: '0 * * * *', ...def } as ScheduleDefinition, 'UTC', false);
    return entryOf({ name, score: '1', json: Buffer.from(JSON.stringify(stored)) }, cache, NOW).spec;
  };
  const a = one('a', {});
  expect(one('b', {})).toBe(a);
  const paris = one('c', { timeZone: 'Europe/Paris' });
  expect(paris).not.toBe(a);
  expect(one('d', {})).toBe(a);
  expect(one('e', { timeZone: 'Europe/Paris' })).toBe(paris);
  const bounded = one('f', { endAt: new Date(NOW + 86_400_000) });
  expect(bounded).not.toBe(a);
  expect(bounded.nextAfter(NOW + 86_400_000)).toBeNull();
  expect(one('g', {}).nextAfter(NOW + 86_400_000)).toBe(NOW + 86_400_000 + 3_600_000);
});
