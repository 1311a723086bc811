import { RecentMap } from '../../lib/core/runtime/recent-map.js';

/** Unit tests of RecentMap (runtime/recent-map.ts): the leader's bounded "remember the last N" maps. */

test('remembers what was set, the last value of a key winning', () => {
  const m = new RecentMap<string, number>(3);
  expect(m.get('a')).toBeUndefined();
  expect(m.has('a')).toBe(false);
  m.set('a', 1).set('b', 2).set('a', 3);
  expect(m.get('a')).toBe(3);
  expect(m.get('b')).toBe(2);
  expect(m.has('b')).toBe(true);
});

test('remembers at least the last `generation` distinct keys set, and holds at most twice as many', () => {
  const generation = 100;
  const m = new RecentMap<number, number>(generation);
  for (let i = 0; i < 1_000; i++) {
    m.set(i, i * 10);
    expect(m.size).toBeLessThanOrEqual(2 * generation);
    for (const k of [i, i - generation + 1]) if (k >= 0) expect(m.get(k)).toBe(k * 10);
  }
  expect(m.has(0)).toBe(false); // long forgotten
});

test('a key set again is kept while older ones are dropped; a get alone does not keep it', () => {
  const m = new RecentMap<string, number>(2);
  m.set('kept', 1);
  m.set('read', 2); // the first generation is full: both move to the previous one
  for (let i = 0; i < 4; i++) {
    m.set('kept', m.get('kept')! + 1);
    expect(m.get('read')).toBe(i === 0 ? 2 : undefined); // gone once its generation is dropped
    m.set(`other${i}`, i);
  }
  expect(m.get('kept')).toBe(5);
  expect(m.has('read')).toBe(false);
});

test('a value of undefined is remembered as such; a bad generation is refused', () => {
  const m = new RecentMap<string, number | undefined>(4);
  m.set('u', undefined);
  expect(m.has('u')).toBe(true);
  expect(m.get('u')).toBeUndefined();
  // a newer undefined in the current generation hides an older value in the previous one
  const g = new RecentMap<string, number | undefined>(2);
  g.set('k', 1);
  g.set('x', 0); // full: 'k' and 'x' move to the previous generation
  expect(g.get('k')).toBe(1);
  g.set('k', undefined);
  expect(g.get('k')).toBeUndefined();
  expect(g.get('x')).toBe(0);
  expect(g.get('never')).toBeUndefined();
  expect(() => new RecentMap(0)).toThrow(RangeError);
  expect(() => new RecentMap(1.5)).toThrow(RangeError);
});
