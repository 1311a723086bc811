// The fetch planner of a multi-queue worker (lib/core/fetch/picker.ts): shares by smooth weighted
// round-robin over the queues that have entries, probes of the empty ones, strict priority.
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { QueuePicker, blockCount, turnSize } from '../../lib/core/fetch/picker.js';

const queue = (name: string, weight = 1) => ({ name, weight, keys: new QueueKeys('t', name) });

test('equal weights: fetches of 10 from 100 backlogged queues read 10 of them once each, all 100 in 10 fetches', () => {
  const qs = Array.from({ length: 100 }, (_, i) => queue(`q${i}`));
  const picker = new QueuePicker(qs, false);
  const seen = new Set<string>();
  for (let fetch = 0; fetch < 10; fetch++) {
    const reads = picker.plan(qs, 10);
    expect(reads).toHaveLength(1);
    expect(reads[0].count).toBe(1);
    expect(reads[0].queues).toHaveLength(10);
    for (const q of reads[0].queues) {
      seen.add(q.name);
      picker.observe(q, 1, 1); // still backlogged
    }
  }
  expect(seen.size).toBe(100);
});

test('a fetch of 50 gives turns of 5 entries (turnSize): 10 queues per fetch, all 100 in 10 fetches', () => {
  const qs = Array.from({ length: 100 }, (_, i) => queue(`q${i}`));
  const picker = new QueuePicker(qs, false);
  const seen = new Set<string>();
  for (let fetch = 0; fetch < 10; fetch++) {
    const [read] = picker.plan(qs, 50);
    expect(read.count).toBe(5);
    expect(read.queues).toHaveLength(10);
    for (const q of read.queues) {
      seen.add(q.name);
      picker.observe(q, 5, 5);
    }
  }
  expect(seen.size).toBe(100);
  expect([1, 9, 10, 25, 50, 500].map(turnSize)).toEqual([1, 1, 1, 2, 5, 5]);
});

test('weights 1:2:3: the picks follow the weights exactly over whole rounds; an empty queue is probed with COUNT 1', () => {
  const qs = [queue('a', 1), queue('b', 2), queue('c', 3)];
  const picker = new QueuePicker(qs, false);
  const got = new Map<string, number>();
  for (let fetch = 0; fetch < 100; fetch++) {
    for (const r of picker.plan(qs, 6)) for (const q of r.queues) got.set(q.name, (got.get(q.name) ?? 0) + r.count);
  }
  expect(Object.fromEntries(got)).toEqual({ a: 100, b: 200, c: 300 });
  picker.observe(qs[0], 2, 0); // a ran dry
  const reads = picker.plan(qs, 5);
  const probe = reads.find((r) => r.queues.includes(qs[0]))!;
  expect(probe.count).toBe(1);
  expect(reads.flatMap((r) => r.queues).filter((q) => q !== qs[0]).length).toBeGreaterThan(0);
  for (const q of qs) picker.observe(q, 1, 0);
  expect(picker.plan(qs, 5)).toEqual([]); // all empty: block on all
  expect(blockCount(100, 10)).toBe(1);
  expect(blockCount(1, 10)).toBe(10);
});

test('strict priority: everything from the first queue with entries, the empty higher ones probed first in a read of their own', () => {
  const qs = [queue('hi'), queue('mid'), queue('lo')];
  const picker = new QueuePicker(qs, true);
  expect(picker.plan(qs, 4)).toEqual([{ queues: [qs[0]], count: 4, probe: false }]);
  picker.observe(qs[0], 4, 0);
  picker.observe(qs[1], 4, 0);
  expect(picker.plan(qs, 4)).toEqual([
    { queues: [qs[0], qs[1]], count: 4, probe: true },
    { queues: [qs[2]], count: 4, probe: false },
  ]);
});
