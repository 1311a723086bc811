import { encodeMeta } from '../../lib/core/queue/codec.js';
import { quickMeta } from '../../lib/core/queue/quick-meta.js';
import { FIRE_MODE, META, OVERLAP_MODE, newMeta, type FireMode } from '../../lib/core/redis/protocol.js';
import { type StoredSchedule } from '../../lib/core/scheduler/definition.js';
import { toStored } from '../../lib/core/scheduler/definition-check.js';
import { jsonNumber, triggerMeta } from '../../lib/core/scheduler/fire-triggers.js';

const T = 1_800_000_000_000;

/** The meta text as the leader built it before its template: the object, then encodeMeta. */
function byObject(
  s: StoredSchedule,
  mode: FireMode,
  enqueuedAt: number,
  triggerAt: number,
  windowMs: number | undefined,
  supersededAt: number | null,
  traceparent: string | undefined,
): string {
  const meta = newMeta(s.maxRetry, s.timeoutMs, enqueuedAt);
  meta[META.schedule] = s.name;
  meta[META.triggerAt] = triggerAt;
  if (mode === FIRE_MODE.skipOverlap || mode === FIRE_MODE.bufferOne || mode === FIRE_MODE.cancelPrevious) meta[META.overlapSkip] = 1;
  if (mode === FIRE_MODE.bufferOne) meta[META.overlapMode] = OVERLAP_MODE.bufferOne;
  if (mode === FIRE_MODE.cancelPrevious) meta[META.overlapMode] = OVERLAP_MODE.cancelPrevious;
  if (s.group !== undefined) meta[META.group] = s.group;
  if (windowMs !== undefined) meta[META.catchUpWindowMs] = windowMs;
  if (supersededAt !== null) meta[META.supersededAt] = supersededAt;
  if (traceparent) meta[META.traceparent] = traceparent;
  return encodeMeta(meta);
}

test("a trigger task's meta from its schedule's template is the text encodeMeta gives for the same fields", () => {
  const schedules = [
    toStored({ name: 'job', spec: '@every 60s' }, 'UTC', true).stored,
    toStored({ name: 'nightly.report:eu-1', spec: '0 3 * * *', maxRetry: 0, timeout: 0, group: 'tenant-é' }, 'UTC', true).stored,
    toStored({ name: 'x', spec: '@every 1s', maxRetry: 7, timeout: 1500 }, 'UTC', true).stored,
  ];
  const modes = [FIRE_MODE.allowOverlap, FIRE_MODE.skipOverlap, FIRE_MODE.bufferOne, FIRE_MODE.cancelPrevious];
  let checked = 0;
  for (const s of schedules) {
    for (const mode of modes) {
      for (const [windowMs, next] of [
        [undefined, null],
        [3_600_000, null],
        [0, T + 60_000],
      ] as const) {
        for (const tp of [undefined, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01']) {
          // the enqueue instant is the Redis-time estimate: fractional as a rule
          for (const enqueuedAt of [T + 3, T - 412.70849609375, T + 0.1]) {
            const text = triggerMeta(s, mode, enqueuedAt, T, windowMs, next, tp);
            expect(text).toBe(byObject(s, mode, enqueuedAt, T, windowMs, next, tp));
            expect(quickMeta(text) ?? JSON.parse(text)).toEqual(JSON.parse(text));
            checked++;
          }
        }
      }
    }
  }
  expect(checked).toBe(3 * 4 * 3 * 2 * 3);
});

test('jsonNumber writes a number as JSON.stringify does', () => {
  for (const n of [0, -0, 1, -1, 1.5, T, T + 0.1, T - 412.70849609375, 1e21, 5e-7, Number.MAX_SAFE_INTEGER, Infinity, -Infinity, NaN]) {
    expect(jsonNumber(n)).toBe(JSON.stringify(n));
  }
});
