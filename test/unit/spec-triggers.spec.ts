// spec.ts triggers: nextAfter on cron specs, minPeriodMs, nextTriggers, triggersBetween, the spec objects.
import {
  TRIGGERS_BETWEEN_COUNT_LIMIT,
  everySpec,
  nextTriggers,
  parseSpec,
  triggersBetween,
  type ScheduleSpec,
} from '../../lib/core/scheduler/spec.js';
import { ms, iso, MIN, HOUR, DAY, inHostTz, type HostJob } from '../helpers/cron-spec.js';

describe('nextAfter on cron specs', () => {
  it('is strictly after a non-aligned ms value', () => {
    const spec = parseSpec('* * * * *');
    const t = ms('2025-01-01T10:00:00Z');
    expect(spec.nextAfter(t)).toBe(t + MIN);
    expect(spec.nextAfter(t - 1)).toBe(t);
    expect(spec.nextAfter(t + 1)).toBe(t + MIN);
    expect(spec.nextAfter(t + 59_999)).toBe(t + MIN);
    expect(spec.nextAfter(t - 59_999)).toBe(t);
    const daily = parseSpec('0 3 * * *', { timeZone: 'Europe/Budapest' });
    const d = ms('2025-06-10T01:00:00Z'); // 03:00 CEST
    expect(daily.nextAfter(d - 1)).toBe(d);
    expect(daily.nextAfter(d)).toBe(d + DAY);
    expect(daily.nextAfter(d + 0.5)).toBe(d + DAY);
  });

  it('returns null past the supported years and starts at year 1 before them', () => {
    const spec = parseSpec('0 3 * * *', { timeZone: 'Europe/Budapest' });
    expect(spec.nextAfter(8.64e15)).toBeNull();
    expect(spec.nextAfter(ms('9999-12-31T12:00:00Z'))).toBeNull();
    expect(nextTriggers(spec, ms('9999-12-25T00:00:00Z'), 10).length).toBeLessThan(10);
    const first = spec.nextAfter(-8.64e15);
    expect(first).not.toBeNull();
    expect(new Date(first!).getUTCFullYear()).toBe(1);
  });

  it('rejects a non-finite instant', () => {
    expect(() => parseSpec('* * * * *').nextAfter(NaN)).toThrow(RangeError);
    expect(() => parseSpec('@every 1s').nextAfter(Infinity)).toThrow(RangeError);
  });

  it('is a pure function: a fresh spec, any start point, the same triggers (rule 1)', () => {
    const zones = ['Europe/Budapest', 'America/New_York', 'Australia/Lord_Howe', 'UTC'];
    const exprs = ['*/7 * * * *', '30 2 * * *', '0,30 1-3 * * *', '*/20 1,2 * * *', '0 */2 * * *', '15 0 * * 0'];
    for (const tz of zones) {
      for (const expr of exprs) {
        const a = parseSpec(expr, { timeZone: tz });
        const start = ms('2025-03-29T00:00:00Z');
        const seq = nextTriggers(a, start, 60);
        // From each trigger minus some ms, a new spec finds the same trigger next.
        for (let i = 0; i < seq.length; i++) {
          const b = parseSpec(expr, { timeZone: tz });
          expect(b.nextAfter(seq[i]! - 1 - ((i * 7919) % 50_000))).toBe(seq[i]);
          if (i > 0) expect(seq[i]!).toBeGreaterThan(seq[i - 1]!);
          expect(seq[i]! % MIN).toBe(0);
        }
      }
    }
  });

  it('does not depend on the host time zone', () => {
    const jobs: HostJob[] = [
      { expr: '30 2 * * *', tz: 'America/New_York', from: ms('2025-03-08T12:00:00-05:00'), n: 5 },
      { expr: '*/15 * * * *', tz: 'Europe/London', from: ms('2025-10-26T00:40:00Z'), n: 8 },
      { expr: '0 * * * *', tz: 'UTC', from: ms('2025-10-05T02:00:00Z'), n: 5 },
      { expr: '@daily', tz: 'Australia/Sydney', from: ms('2025-10-04T12:00:00+10:00'), n: 3 },
      { expr: '@every 90s', tz: 'UTC', from: ms('2025-01-01T00:00:10Z'), n: 3 },
    ];
    const here = jobs.map((j) => nextTriggers(parseSpec(j.expr, { timeZone: j.tz }), j.from, j.n));
    for (const host of ['Australia/Sydney', 'America/New_York', 'Asia/Kolkata']) {
      expect(inHostTz(host, jobs[0]!.from, jobs).results).toEqual(here);
    }
  });
});

describe('minPeriodMs', () => {
  it.each([
    ['* * * * *', 'UTC', MIN],
    ['*/15 * * * *', 'UTC', 15 * MIN],
    ['*/45 * * * *', 'UTC', 15 * MIN],
    ['0 * * * *', 'UTC', HOUR],
    ['0 3 * * *', 'UTC', DAY],
    ['0 3,5 * * *', 'UTC', 2 * HOUR],
    ['0 22,2 * * *', 'UTC', 4 * HOUR],
    ['@weekly', 'UTC', DAY],
    ['0 3 * * *', 'Europe/Budapest', 21 * HOUR],
    ['*/15 * * * *', 'Europe/Budapest', MIN],
    ['0 9 * * *', 'Etc/GMT-14', DAY],
  ])('%s in %s: %d ms', (expr, tz, expected) => {
    expect(parseSpec(expr, { timeZone: tz }).minPeriodMs).toBe(expected);
  });

  it('every-specs: the period', () => {
    expect(everySpec('90s').minPeriodMs).toBe(90_000);
  });

  it('is a lower bound of the real gaps, including DST nights', () => {
    const windows: Array<[string, string]> = [
      ['Europe/Budapest', '2025-03-29T00:00:00Z'],
      ['Europe/Budapest', '2025-10-25T00:00:00Z'],
      ['Australia/Lord_Howe', '2025-04-05T00:00:00Z'],
      ['America/New_York', '2025-03-08T00:00:00Z'],
      ['UTC', '2025-03-08T00:00:00Z'],
    ];
    for (const [tz, start] of windows) {
      for (const expr of ['31,59 * * * *', '*/20 * * * *', '0,30 1,2 * * *', '30 2 * * *', '0 */3 * * *', '59 1 * * *']) {
        const spec = parseSpec(expr, { timeZone: tz });
        const seq = nextTriggers(spec, ms(start), 200);
        for (let i = 1; i < seq.length; i++) expect(seq[i]! - seq[i - 1]!).toBeGreaterThanOrEqual(spec.minPeriodMs);
      }
    }
  });
});

describe('nextTriggers', () => {
  it('returns n triggers, or [] for n = 0, and rejects a bad n', () => {
    const spec = parseSpec('@every 10s');
    expect(nextTriggers(spec, 0, 3)).toEqual([10_000, 20_000, 30_000]);
    expect(nextTriggers(spec, 0, 0)).toEqual([]);
    expect(() => nextTriggers(spec, 0, -1)).toThrow(RangeError);
    expect(() => nextTriggers(spec, 0, 1.5)).toThrow(RangeError);
  });

  it('every-spec: runs out at the last instant a Date holds, and refuses a period past it', () => {
    // a period of 4e15 ms has two triggers in the Date range (4e15, 8e15): the third is past 8.64e15
    const spec = everySpec(4e15);
    expect(nextTriggers(spec, 0, 5)).toEqual([4e15, 8e15]);
    expect(spec.nextAfter(8e15)).toBeNull();
    expect(everySpec(8.64e15).nextAfter(0)).toBe(8.64e15);
    expect(() => everySpec(9e15)).toThrow('the @every period is too large: at most 8640000000000000 ms, got 9000000000000000 ms');
  });
});

describe('triggersBetween', () => {
  it('every-spec: window (after, until], the latest cap, exact skipped', () => {
    const spec = everySpec('10s');
    expect(triggersBetween(spec, 0, 100_000, 3)).toEqual({ triggers: [80_000, 90_000, 100_000], skipped: 7 });
    expect(triggersBetween(spec, 0, 99_999, 3)).toEqual({ triggers: [70_000, 80_000, 90_000], skipped: 6 });
    expect(triggersBetween(spec, 1, 30_000, 100)).toEqual({ triggers: [10_000, 20_000, 30_000], skipped: 0 });
    expect(triggersBetween(spec, 10_000, 10_001, 5)).toEqual({ triggers: [], skipped: 0 });
    expect(triggersBetween(spec, 0, 100_000, 0)).toEqual({ triggers: [], skipped: 10 });
    expect(triggersBetween(spec, 100_000, 100_000, 5)).toEqual({ triggers: [], skipped: 0 });
    expect(triggersBetween(spec, 100_000, 0, 5)).toEqual({ triggers: [], skipped: 0 });
    expect(triggersBetween(spec, -25_000, 5_000, 10)).toEqual({ triggers: [-20_000, -10_000, 0], skipped: 0 });
  });

  it('every-spec: a huge window is arithmetic (fast) and exact', () => {
    const spec = everySpec('1s', { offsetMs: 0 });
    const after = ms('2000-01-01T00:00:00Z');
    const until = ms('2100-01-01T00:00:00.500Z');
    const t0 = performance.now();
    const r = triggersBetween(spec, after, until, 2);
    expect(performance.now() - t0).toBeLessThan(50);
    expect(r.triggers).toEqual([ms('2099-12-31T23:59:59Z'), ms('2100-01-01T00:00:00Z')]);
    expect(r.skipped).toBe((ms('2100-01-01T00:00:00Z') - after) / 1000 - 2);
    const off = everySpec('1m', { offsetMs: 7000 });
    expect(triggersBetween(off, 0, 10 * MIN, 2)).toEqual({ triggers: [8 * MIN + 7000, 9 * MIN + 7000], skipped: 8 });
  });

  it('cron spec: exact count in a small window', () => {
    const spec = parseSpec('*/15 * * * *');
    const after = ms('2025-01-01T10:00:00Z');
    const until = ms('2025-01-01T12:00:00Z');
    expect(triggersBetween(spec, after, until, 3)).toEqual({
      triggers: [ms('2025-01-01T11:30:00Z'), ms('2025-01-01T11:45:00Z'), ms('2025-01-01T12:00:00Z')],
      skipped: 5,
    });
    expect(triggersBetween(spec, after, until, 100).triggers).toHaveLength(8);
    expect(triggersBetween(spec, after, until, 0)).toEqual({ triggers: [], skipped: 8 });
    expect(triggersBetween(spec, after, after + 14 * MIN, 5)).toEqual({ triggers: [], skipped: 0 });
  });

  it('cron spec: matches nextTriggers across a DST night', () => {
    const spec = parseSpec('*/20 * * * *', { timeZone: 'Europe/Budapest' });
    const after = ms('2025-10-25T22:00:00Z');
    const until = ms('2025-10-26T04:00:00Z');
    const all = nextTriggers(spec, after, 1000).filter((t) => t <= until);
    expect(all).toHaveLength(18); // six real hours, three per hour, repeated hour included
    expect(triggersBetween(spec, after, until, 4)).toEqual({ triggers: all.slice(-4), skipped: 14 });
  });

  it('cron spec: past the count limit, the latest triggers and a lower-bound skipped', () => {
    const spec = parseSpec('* * * * *');
    const after = ms('2025-01-01T00:00:00Z');
    const until = ms('2025-01-31T00:00:30Z'); // 43200 triggers, more than the limit
    const exact = 30 * 24 * 60;
    expect(exact).toBeGreaterThan(TRIGGERS_BETWEEN_COUNT_LIMIT);
    const r = triggersBetween(spec, after, until, 3);
    expect(r.triggers.map(iso)).toEqual(['2025-01-30T23:58:00.000Z', '2025-01-30T23:59:00.000Z', '2025-01-31T00:00:00.000Z']);
    expect(r.skipped).toBeGreaterThanOrEqual(TRIGGERS_BETWEEN_COUNT_LIMIT);
    expect(r.skipped).toBeLessThanOrEqual(exact - 3);
  });

  it('cron spec: just past the count limit, the tail joins and skipped is exact', () => {
    const spec = parseSpec('* * * * *');
    const after = ms('2025-01-01T00:00:00Z');
    const total = TRIGGERS_BETWEEN_COUNT_LIMIT + 2;
    const until = after + total * MIN;
    const r = triggersBetween(spec, after, until, 5);
    expect(r.triggers).toEqual([4, 3, 2, 1, 0].map((k) => until - k * MIN));
    expect(r.skipped).toBe(total - 5);
  });

  it('cron spec: past the count limit in a DST zone, triggers agree with nextAfter', () => {
    const spec = parseSpec('*/5 * * * *', { timeZone: 'Europe/Budapest' });
    const after = ms('2025-09-01T00:00:00Z');
    const until = ms('2025-10-26T01:42:00Z'); // inside the repeated hour (02:42 CET, second pass)
    const r = triggersBetween(spec, after, until, 40);
    const from = ms('2025-10-25T20:00:00Z');
    const expected = nextTriggers(spec, from, 200)
      .filter((t) => t <= until)
      .slice(-40);
    expect(r.triggers).toEqual(expected);
    expect(r.skipped).toBeGreaterThanOrEqual(TRIGGERS_BETWEEN_COUNT_LIMIT);
  });

  it('rejects bad arguments', () => {
    const spec = parseSpec('@every 1s');
    expect(() => triggersBetween(spec, 0, 10, -1)).toThrow(RangeError);
    expect(() => triggersBetween(spec, NaN, 10, 1)).toThrow(RangeError);
    expect(() => triggersBetween(spec, 0, Infinity, 1)).toThrow(RangeError);
  });

  it('works for a spec object made elsewhere', () => {
    const foreign: ScheduleSpec = {
      kind: 'cron',
      expression: 'x',
      timeZone: 'UTC',
      minPeriodMs: 1000,
      nextAfter: (t) => (Math.floor(t / 1000) + 1) * 1000,
    };
    expect(triggersBetween(foreign, 0, 5000, 2)).toEqual({ triggers: [4000, 5000], skipped: 3 });
  });
});

describe('spec objects', () => {
  it('are frozen and carry the documented fields', () => {
    const cron = parseSpec('0 3 * * *', { timeZone: 'Europe/Budapest' });
    expect(cron).toMatchObject({ kind: 'cron', expression: '0 3 * * *', timeZone: 'Europe/Budapest' });
    expect(cron.everyMs).toBeUndefined();
    expect(cron.offsetMs).toBeUndefined();
    expect(Object.isFrozen(cron)).toBe(true);
    expect(Object.isFrozen(everySpec('1s'))).toBe(true);
  });
});
