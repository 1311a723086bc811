// Shared cron specs (cron-compiled.ts, spec-cron.ts cronSpec): one spec per (expression, zone), one
// compacted croner instance per pattern, and a memo of recent answers. Sharing must change no
// trigger: every cron case's expression, in its own zone and in every zone of the cases, gives the
// same instants from a shared spec (asked in an interleaved order, so the memo and the shared
// arrays serve many specs at once) as from a fresh, unshared croner instance.
import { readFileSync } from 'node:fs';
import { withoutSharing } from '../../lib/core/scheduler/cron-compiled.js';
import { nextTriggers, parseSpec, triggersBetween, type ScheduleSpec } from '../../lib/core/scheduler/spec.js';

interface CronCase {
  id: string;
  expr: string;
  tz: string;
  from: string;
  expect_next: string[];
  expect_error?: boolean;
}

const cases: CronCase[] = JSON.parse(readFileSync(new URL('../fixtures/cron-cases.json', import.meta.url), 'utf8'));
const iso = (t: number): string => new Date(t).toISOString();

/** A case's spec, or undefined when Chronos rejects it (error cases, and alt_acceptable forms it refuses). */
function tryParse(expr: string, timeZone: string): ScheduleSpec | undefined {
  try {
    return parseSpec(expr, { timeZone });
  } catch {
    return undefined;
  }
}

const zones = [...new Set([...cases.map((c) => c.tz), 'Europe/Budapest', 'Asia/Kolkata', 'Australia/Sydney'])].filter(
  (z) => tryParse('0 0 * * *', z) !== undefined,
);
const jobs = cases
  .filter((c) => !c.expect_error)
  .flatMap((c) =>
    zones.map((tz) => ({ id: `${c.id} in ${tz}`, expr: c.expr, tz, from: Date.parse(c.from), n: Math.max(6, c.expect_next.length) })),
  )
  .filter((j) => tryParse(j.expr, j.tz) !== undefined);

test('the cases give specs in many zones (the comparison below is not vacuous)', () => {
  expect(zones.length).toBeGreaterThanOrEqual(8);
  expect(jobs.length).toBeGreaterThan(300);
});

test('a shared spec gives the same next instants as a fresh one, for every case expression in every zone', () => {
  const fresh = withoutSharing(() => jobs.map((j) => nextTriggers(parseSpec(j.expr, { timeZone: j.tz }), j.from, j.n)));
  // shared: two specs per job (the second is the cached one), stepped round-robin across all jobs
  const specs = jobs.map((j) => [parseSpec(j.expr, { timeZone: j.tz }), parseSpec(` ${j.expr}`.trim(), { timeZone: j.tz })] as const);
  const shared: number[][] = jobs.map(() => []);
  const cursors = jobs.map((j) => j.from);
  for (let step = 0; step < Math.max(...jobs.map((j) => j.n)); step++) {
    jobs.forEach((j, i) => {
      if (shared[i]!.length >= j.n) return;
      const next = specs[i]![step % 2]!.nextAfter(cursors[i]!);
      if (next === null) return;
      shared[i]!.push(next);
      cursors[i] = next;
    });
  }
  const mismatches = jobs.filter((_, i) => shared[i]!.map(iso).join() !== fresh[i]!.map(iso).join()).map((j) => j.id);
  expect(mismatches).toEqual([]);
  jobs.forEach((j, i) => expect({ id: j.id, next: shared[i]!.map(iso) }).toEqual({ id: j.id, next: fresh[i]!.map(iso) }));
});

test('triggersBetween (which searches back from the end of a long window) agrees between shared and fresh specs', () => {
  const from = Date.parse('2025-01-01T00:00:00Z');
  const until = Date.parse('2025-12-31T00:00:00Z');
  for (const tz of ['Europe/Budapest', 'America/Santiago', 'UTC']) {
    for (const expr of ['*/5 * * * *', '30 2 * * *', '0 * * * 1-5']) {
      const fresh = withoutSharing(() => triggersBetween(parseSpec(expr, { timeZone: tz }), from, until, 5));
      expect(triggersBetween(parseSpec(expr, { timeZone: tz }), from, until, 5)).toEqual(fresh);
    }
  }
});

test('one spec object per (expression, zone); another zone or another text is another spec', () => {
  const a = parseSpec('0 3 * * *', { timeZone: 'Europe/Budapest', schedule: 'a' });
  expect(parseSpec('0 3 * * *', { timeZone: 'Europe/Budapest', schedule: 'b' })).toBe(a);
  expect(parseSpec('0 3 * * *', { timeZone: 'Europe/Rome' })).not.toBe(a);
  const b = parseSpec('0 03 * * *', { timeZone: 'Europe/Budapest' });
  expect(b).not.toBe(a);
  expect(b.expression).toBe('0 03 * * *');
  expect(nextTriggers(b, Date.parse('2025-03-29T00:00:00Z'), 4)).toEqual(nextTriggers(a, Date.parse('2025-03-29T00:00:00Z'), 4));
  expect(withoutSharing(() => parseSpec('0 3 * * *', { timeZone: 'Europe/Budapest' }))).not.toBe(a);
});

test('a rejected expression is rejected every time, naming each schedule (errors are not cached)', () => {
  expect(() => parseSpec('0 0 31 2 *', { schedule: 'first' })).toThrow(/"first"/);
  expect(() => parseSpec('0 0 31 2 *', { schedule: 'second' })).toThrow(/"second"/);
  expect(() => parseSpec('*/20 * * * 5#2', { schedule: 'x' })).not.toThrow();
});
