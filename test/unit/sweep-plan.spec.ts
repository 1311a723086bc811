// The visibility-timeout sweep's picks (lib/core/recovery/sweep-plan.ts): every queue on the first tick and
// while another server is overdue, else one queue in turn plus the queues asked for once due.
import { SweepPlan } from '../../lib/core/recovery/sweep-plan.js';

test('the first tick sweeps every queue, then one queue per tick in turn', () => {
  const plan = new SweepPlan(['a', 'b', 'c']);
  expect(plan.pick(false, 0)).toEqual(['a', 'b', 'c']);
  expect([1, 2, 3, 4].map((t) => plan.pick(false, t))).toEqual([['a'], ['b'], ['c'], ['a']]);
});

test('while another server is overdue every tick sweeps every queue', () => {
  const plan = new SweepPlan(['a', 'b']);
  plan.pick(false, 0);
  expect(plan.pick(true, 1)).toEqual(['a', 'b']);
  expect(plan.pick(true, 2)).toEqual(['a', 'b']);
  expect(plan.pick(false, 3)).toEqual(['a']);
});

test('a queue asked for later is swept once its time has come, besides the one in turn; the earliest request wins', () => {
  const plan = new SweepPlan(['a', 'b', 'c']);
  plan.pick(false, 0);
  plan.later('c', 100);
  plan.later('c', 50);
  plan.later('c', 200);
  expect(plan.pick(false, 10)).toEqual(['a']);
  expect(plan.pick(false, 60)).toEqual(['b', 'c']);
  expect(plan.pick(false, 300)).toEqual(['c']); // in turn; the request was served once
});

test('with a turn gap, a queue in turn is picked at most once per gap; the first tick, sweepAll and requests are not held back', () => {
  const plan = new SweepPlan(['a', 'b'], 100);
  expect(plan.pick(false, 0)).toEqual(['a', 'b']);
  expect(plan.pick(false, 50)).toEqual([]);
  expect(plan.pick(false, 100)).toEqual(['a']);
  plan.later('b', 120);
  expect(plan.pick(false, 150)).toEqual(['b']); // asked for: not held back by the gap
  expect(plan.pick(true, 160)).toEqual(['a', 'b']);
  expect(plan.pick(false, 200)).toEqual([]);
  expect(plan.pick(false, 260)).toEqual(['b']);
});
