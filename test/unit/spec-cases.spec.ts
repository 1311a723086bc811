// spec.ts against the shared cron cases (test/fixtures/cron-cases.json), its non-standard forms, and DST.
import { readFileSync } from 'node:fs';
import { InvalidScheduleError } from '../../lib/core/runtime/errors.js';
import { nextTriggers, parseSpec } from '../../lib/core/scheduler/spec.js';
import { ms, iso, inHostTz, scheduleError } from '../helpers/cron-spec.js';

/** One entry of test/fixtures/cron-cases.json (copied from the shared cases; see its README). */
interface CronCase {
  id: string;
  expr: string;
  tz: string;
  from: string;
  host_tz?: string;
  expect_next: string[];
  expect_error?: boolean;
  error_should_mention_any?: string[];
  alt_acceptable?: string;
  note?: string;
}

const cases: CronCase[] = JSON.parse(readFileSync(new URL('../fixtures/cron-cases.json', import.meta.url), 'utf8'));

function expectMentionsAny(err: Error, words: string[]): void {
  const msg = err.message.toLowerCase();
  const hit = words.some((w) => msg.includes(w.toLowerCase()));
  if (!hit) throw new Error(`error message ${JSON.stringify(err.message)} mentions none of ${JSON.stringify(words)}`);
}

describe('cron cases (test/fixtures/cron-cases.json)', () => {
  it('has all 47 cases', () => {
    expect(cases).toHaveLength(47);
  });

  const nextCases = cases.filter((c) => !c.expect_error);
  const errorCases = cases.filter((c) => c.expect_error);

  test.each(nextCases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const expected = c.expect_next.map(ms);
    const run = (): number[] => {
      const here = nextTriggers(parseSpec(c.expr, { timeZone: c.tz, schedule: c.id }), ms(c.from), expected.length);
      if (c.host_tz) {
        // Also compute it on a host in host_tz; that zone must really be in effect there.
        const host = inHostTz(c.host_tz, ms(c.from), [{ expr: c.expr, tz: c.tz, from: ms(c.from), n: expected.length }]);
        expect(host.hostOffset).toBe(offsetMinutes(c.host_tz, new Date(c.from)));
        expect(host.hostOffset).not.toBe(offsetMinutes(c.tz, new Date(c.from)));
        expect(host.results[0]!.map(iso)).toEqual(here.map(iso));
      }
      return here;
    };
    if (c.alt_acceptable) {
      // README: a clear rejection also passes; anything accepted must give exactly expect_next
      // (silently dropping a step or a modifier does not pass).
      let got: number[];
      try {
        got = run();
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidScheduleError);
        expect((err as Error).message).toContain(c.expr);
        return;
      }
      expect(got.map(iso)).toEqual(expected.map(iso));
      return;
    }
    expect(run().map(iso)).toEqual(expected.map(iso));
  });

  test.each(errorCases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const err = scheduleError(() => parseSpec(c.expr, { timeZone: c.tz, schedule: c.id }));
    expectMentionsAny(err, c.error_should_mention_any ?? []);
    expect(err.message).toContain(`"${c.id}"`);
  });
});

/** UTC offset of zone at instant d, minutes east. */
function offsetMinutes(zone: string, d: Date): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }).formatToParts(d);
  const name = parts.find((p) => p.type === 'timeZoneName')!.value; // "GMT+11:00" or "GMT"
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
}

describe('non-standard forms (alt_acceptable cases): what Chronos does', () => {
  it('accepts N/step as N-max/step (A35), also in day-of-week', () => {
    expect(nextTriggers(parseSpec('5/15 * * * *'), ms('2025-01-01T10:07:00Z'), 4).map(iso)).toEqual([
      '2025-01-01T10:20:00.000Z',
      '2025-01-01T10:35:00.000Z',
      '2025-01-01T10:50:00.000Z',
      '2025-01-01T11:05:00.000Z',
    ]);
    // 1/2 = 1-7/2 = Mon, Wed, Fri, Sun. 2025-01-06 is a Monday.
    const days = nextTriggers(parseSpec('0 0 * * 1/2'), ms('2025-01-05T12:00:00Z'), 4).map((t) => new Date(t).getUTCDay());
    expect(days).toEqual([1, 3, 5, 0]);
  });

  it('accepts L in day-of-month and nL, n#k in day-of-week (A65, A67)', () => {
    expect(nextTriggers(parseSpec('0 0 L * *'), ms('2024-01-15T00:00:00Z'), 3).map(iso)).toEqual([
      '2024-01-31T00:00:00.000Z',
      '2024-02-29T00:00:00.000Z',
      '2024-03-31T00:00:00.000Z',
    ]);
    // Second Friday: 2025-01-10, 2025-02-14.
    expect(nextTriggers(parseSpec('0 0 * * FRI#2'), ms('2025-01-01T00:00:00Z'), 2).map(iso)).toEqual([
      '2025-01-10T00:00:00.000Z',
      '2025-02-14T00:00:00.000Z',
    ]);
    expect(nextTriggers(parseSpec('0 0 * * fril'), ms('2024-07-11T00:00:00Z'), 1).map(iso)).toEqual(['2024-07-26T00:00:00.000Z']);
  });

  it('rejects a reversed range instead of wrapping or swapping it (A39)', () => {
    const err = scheduleError(() => parseSpec('0 22-2 * * *'));
    expect(err.message).toContain('22-2');
    expect(err.message).toContain('hour');
  });

  it('rejects the other non-Vixie modifiers clearly', () => {
    for (const expr of [
      '0 0 15W * *',
      '0 0 LW * *',
      '0 0 ? * 1',
      '0 0 * * L',
      '0 0 * * +1',
      '0 0 * * 5#6',
      '0 0 * * 5#0',
      '0 0 L-2 * *',
      '0 0 1 L *',
    ]) {
      const err = scheduleError(() => parseSpec(expr));
      expect(err.message).toContain(JSON.stringify(expr));
    }
  });
});

describe('DST in Europe/Budapest (2025-03-30 02:00 CET -> 03:00 CEST; 2025-10-26 03:00 CEST -> 02:00 CET)', () => {
  const tz = 'Europe/Budapest';

  it("'0 3 * * *' runs once each night, across spring forward and fall back", () => {
    const spec = parseSpec('0 3 * * *', { timeZone: tz });
    expect(nextTriggers(spec, ms('2025-03-29T12:00:00+01:00'), 3).map(iso)).toEqual([
      iso(ms('2025-03-30T03:00:00+02:00')), // 03:00 exists: it is where the clock lands
      iso(ms('2025-03-31T03:00:00+02:00')),
      iso(ms('2025-04-01T03:00:00+02:00')),
    ]);
    expect(nextTriggers(spec, ms('2025-10-25T12:00:00+02:00'), 3).map(iso)).toEqual([
      iso(ms('2025-10-26T03:00:00+01:00')), // 03:00 CEST never shows; 03:00 CET once
      iso(ms('2025-10-27T03:00:00+01:00')),
      iso(ms('2025-10-28T03:00:00+01:00')),
    ]);
  });

  it("'30 2 * * *' (fixed-time): runs at 03:00 CEST in the gap, once in the overlap (rules 5, 6)", () => {
    const spec = parseSpec('30 2 * * *', { timeZone: tz });
    expect(nextTriggers(spec, ms('2025-03-29T12:00:00+01:00'), 2).map(iso)).toEqual([
      iso(ms('2025-03-30T03:00:00+02:00')),
      iso(ms('2025-03-31T02:30:00+02:00')),
    ]);
    expect(nextTriggers(spec, ms('2025-10-25T12:00:00+02:00'), 2).map(iso)).toEqual([
      iso(ms('2025-10-26T02:30:00+02:00')),
      iso(ms('2025-10-27T02:30:00+01:00')),
    ]);
    // Asked from inside the second pass: the next day (rule 6).
    expect(spec.nextAfter(ms('2025-10-26T02:10:00+01:00'))).toBe(ms('2025-10-27T02:30:00+01:00'));
  });

  it("'*/30 * * * *' (interval): nothing in the gap, both passes of the overlap", () => {
    const spec = parseSpec('*/30 * * * *', { timeZone: tz });
    expect(nextTriggers(spec, ms('2025-03-30T01:00:00+01:00'), 4).map(iso)).toEqual([
      iso(ms('2025-03-30T01:30:00+01:00')),
      iso(ms('2025-03-30T03:00:00+02:00')),
      iso(ms('2025-03-30T03:30:00+02:00')),
      iso(ms('2025-03-30T04:00:00+02:00')),
    ]);
    expect(nextTriggers(spec, ms('2025-10-26T01:45:00+02:00'), 6).map(iso)).toEqual([
      iso(ms('2025-10-26T02:00:00+02:00')),
      iso(ms('2025-10-26T02:30:00+02:00')),
      iso(ms('2025-10-26T02:00:00+01:00')),
      iso(ms('2025-10-26T02:30:00+01:00')),
      iso(ms('2025-10-26T03:00:00+01:00')),
      iso(ms('2025-10-26T03:30:00+01:00')),
    ]);
  });
});

describe('job kinds for DST follow Vixie MIN_STAR|HR_STAR (rule 4), not croner steps', () => {
  it("'0 0-23/2 * * *' is fixed-time: the missing 00:00 runs at 01:00 EEST in Cairo", () => {
    // Cairo springs forward 2025-04-25 00:00 -> 01:00. croner alone treats a stepped range as an
    // interval job and skips it; Vixie cron sees no '*' in minute or hour.
    const from = ms('2025-04-24T21:10:20+02:00');
    expect(nextTriggers(parseSpec('0 0-23/2 * * *', { timeZone: 'Africa/Cairo' }), from, 3).map(iso)).toEqual([
      iso(ms('2025-04-24T22:00:00+02:00')),
      iso(ms('2025-04-25T01:00:00+03:00')),
      iso(ms('2025-04-25T02:00:00+03:00')),
    ]);
    // The '*/2' form is an interval job (case A20): 00:00 is skipped.
    expect(nextTriggers(parseSpec('0 */2 * * *', { timeZone: 'Africa/Cairo' }), from, 2).map(iso)).toEqual([
      iso(ms('2025-04-24T22:00:00+02:00')),
      iso(ms('2025-04-25T02:00:00+03:00')),
    ]);
  });

  it("'0 1-3 * * *' (a range) is fixed-time; the gap time collapses into 03:00 EDT", () => {
    const spec = parseSpec('0 1-3 * * *', { timeZone: 'America/New_York' });
    expect(nextTriggers(spec, ms('2025-03-09T00:00:00-05:00'), 3).map(iso)).toEqual([
      iso(ms('2025-03-09T01:00:00-05:00')),
      iso(ms('2025-03-09T03:00:00-04:00')),
      iso(ms('2025-03-10T01:00:00-04:00')),
    ]);
  });

  it("a minute list after a '*' item is still an interval job ('*/30,10 1 * * *' in London fall back)", () => {
    const spec = parseSpec('*/30,10 1 * * *', { timeZone: 'Europe/London' });
    expect(nextTriggers(spec, ms('2025-10-26T00:50:00+01:00'), 6).map(iso)).toEqual([
      iso(ms('2025-10-26T01:00:00+01:00')),
      iso(ms('2025-10-26T01:10:00+01:00')),
      iso(ms('2025-10-26T01:30:00+01:00')),
      iso(ms('2025-10-26T01:00:00+00:00')),
      iso(ms('2025-10-26T01:10:00+00:00')),
      iso(ms('2025-10-26T01:30:00+00:00')),
    ]);
  });
});
