import { META, OVERLAP_MODE, newMeta, type TaskMeta } from '../../lib/core/redis/protocol.js';
import { staleReason } from '../../lib/core/recovery/stale.js';

/** Unit tests of the stale rule of trigger tasks (recovery/stale.ts): fixed instants, no Redis. */

const T = 1_700_000_000_000;
function meta(over: Partial<TaskMeta> = {}): TaskMeta {
  return { ...newMeta(3, 0, T - 1000), [META.schedule]: 's', [META.triggerAt]: T, ...over };
}

test('a trigger task that would start more than its catch-up window after its instant is stale', () => {
  const m = meta({ [META.catchUpWindowMs]: 60_000 });
  expect(staleReason(m, T + 60_000)).toBeUndefined();
  expect(staleReason(m, T + 60_001)).toBe('window');
});

test('under latest or none (supersededAt is set), it is stale once the next trigger has come', () => {
  const m = meta({ [META.catchUpWindowMs]: 3_600_000, [META.supersededAt]: T + 10_000 });
  expect(staleReason(m, T + 9_999)).toBeUndefined();
  expect(staleReason(m, T + 10_000)).toBe('superseded');
});

test('never stale: other tasks, retries (the retry policy governs them), manual runs without the fields', () => {
  expect(staleReason(newMeta(3, 0, T), T + 10 * 3_600_000)).toBeUndefined();
  const retried = meta({ [META.retried]: 1, [META.catchUpWindowMs]: 1000, [META.supersededAt]: T + 1 });
  expect(staleReason(retried, T + 10_000)).toBeUndefined();
  expect(staleReason(meta(), T + 10 * 3_600_000)).toBeUndefined();
  // a task reclaimed from a dead worker (crashes, not failures) is still a first attempt: stale rules apply
  expect(staleReason(meta({ [META.crashes]: 1, [META.catchUpWindowMs]: 1000 }), T + 2000)).toBe('window');
});

test('under overlap cancel-previous a newer trigger supersedes a retry too; the window still spares a retry', () => {
  const retried = meta({
    [META.retried]: 2,
    [META.overlapSkip]: 1,
    [META.overlapMode]: OVERLAP_MODE.cancelPrevious,
    [META.catchUpWindowMs]: 1000,
    [META.supersededAt]: T + 60_000,
  });
  expect(staleReason(retried, T + 59_999)).toBeUndefined(); // beyond its window, but a retry
  expect(staleReason(retried, T + 60_000)).toBe('superseded');
  // buffer-one tasks carry no supersededAt (fire-triggers.ts): only the window applies to them
  const buffered = meta({ [META.overlapSkip]: 1, [META.overlapMode]: OVERLAP_MODE.bufferOne, [META.catchUpWindowMs]: 60_000 });
  expect(staleReason(buffered, T + 60_000)).toBeUndefined();
  expect(staleReason(buffered, T + 60_001)).toBe('window');
});
