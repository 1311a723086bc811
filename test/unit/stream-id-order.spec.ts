// idAfter (fetch/seen-entries.ts): stream entry ids compared as (ms, seq) numbers, not as strings.
import { idAfter } from '../../lib/core/fetch/seen-entries.js';

test.each([
  ['1796513808854-1', '1796513808854-0', true],
  ['1796513808854-0', '1796513808854-0', false],
  ['1796513808854-10', '1796513808854-9', true],
  ['1796513808854-9', '1796513808854-10', false],
  ['1796513808855-0', '1796513808854-99', true],
  ['10000000000000-0', '9999999999999-5', true],
  ['9999999999999-5', '10000000000000-0', false],
  ['0-1', '0-0', true],
  // the same time length, sequences of different lengths: the time decides first
  ['1796513808855-0', '1796513808854-10', true],
  ['1796513808854-10', '1796513808855-9', false],
  ['1796513808854-12', '1796513808854-120', false],
])('idAfter(%s, %s) is %s', (a, b, after) => {
  expect(idAfter(a, b)).toBe(after);
});

// every pair of ids of a small space (time parts and sequences of 1 to 3 digits, so the same length
// with a different time/sequence split, '10-5' against '9-55', and every other case): as (ms, seq) numbers
test('idAfter orders every pair of ids of 1- to 3-digit parts as (ms, seq) numbers', () => {
  const parts = [0, 1, 5, 9, 10, 55, 99, 100, 555, 999];
  const ids = parts.flatMap((ms) => parts.map((seq) => ({ text: `${ms}-${seq}`, ms, seq })));
  const wrong: string[] = [];
  for (const a of ids)
    for (const b of ids) {
      const after = a.ms > b.ms || (a.ms === b.ms && a.seq > b.seq);
      if (idAfter(a.text, b.text) !== after) wrong.push(`${a.text} ${b.text}`);
    }
  expect(wrong).toEqual([]);
});
