// spec.ts parsing: validation, descriptors, @every, durations, day-of-month / day-of-week.
import { everySpec, nextTriggers, parseDurationMs, parseSpec } from '../../lib/core/scheduler/spec.js';
import { ms, iso, MIN, HOUR, DAY, scheduleError } from '../helpers/cron-spec.js';

describe('parseSpec: validation (rule 9)', () => {
  it('names the schedule, the value and the field in the message', () => {
    const err = scheduleError(() => parseSpec('61 * * * *', { schedule: 'nightly-report' }));
    expect(err.message).toContain('"nightly-report"');
    expect(err.message).toContain('"61 * * * *"');
    expect(err.message).toMatch(/minute field "61": 61 is out of range 0-59/);
    expect(err.schedule).toBe('nightly-report');
    expect(err.value).toBe('61 * * * *');
  });

  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['* * * *', /expected 5 fields .* got 4/],
    ['0 0 0 * * * *', /got 7 fields \(seconds and year fields are not supported\)/],
    // @nestjs/schedule's and node-cron's 6 fields start with seconds (trial: a migrant's CronExpression value got no way out)
    [
      '0 */5 * * * *',
      /got 6 fields \(seconds and year fields are not supported\); with its seconds field "0" dropped it reads "\*\/5 \* \* \* \*"$/,
    ],
    ['0 30 09 * * 1-5', /with its seconds field "0" dropped it reads "30 09 \* \* 1-5"$/],
    [
      '*/30 * * * * *',
      /got 6 fields \(seconds and year fields are not supported\); for every 30 s use an interval: \{ every: '30s' \} or @Interval\('30s'\)$/,
    ],
    ['0 3 * * * 2026', /got 6 fields \(seconds and year fields are not supported\)$/],
    ['*/45 * * * * *', /got 6 fields \(seconds and year fields are not supported\)$/], // :00 and :45, not every 45 s
    // crontab(5)'s zone prefix (cronie, Kubernetes, robfig/cron, asynq) was told as a seconds field
    [
      'CRON_TZ=Europe/Paris 0 3 * * *',
      /the zone prefix "CRON_TZ=Europe\/Paris" is not read here: give the zone as timeZone: "Europe\/Paris"/,
    ],
    ['TZ=Asia/Tokyo 0 3 * * *', /the zone prefix "TZ=Asia\/Tokyo" is not read here: give the zone as timeZone: "Asia\/Tokyo"/],
    ['0 24 * * *', /hour field "24": 24 is out of range 0-23/],
    ['0 0 0 * *', /day-of-month field "0": 0 is out of range 1-31/],
    ['0 0 32 * *', /day-of-month/],
    ['0 0 * 13 *', /month field "13"/],
    ['0 0 * 0 *', /month field "0"/],
    ['0 0 * * 8', /day-of-week field "8": 8 is out of range 0-7/],
    ['*/0 * * * *', /zero step/],
    ['0 1-5/0 * * *', /zero step/],
    ['*/61 * * * *', /step 61 is larger/],
    // a step the size of the field's range or more selects its first value alone (croner took "*/60" as minute 0)
    [
      '*/60 * * * *',
      /^Invalid schedule "\*\/60 \* \* \* \*": minute field "\*\/60": step 60 is larger than the field's range 0-59 \(at most 59\); it would select 0 alone: write "0" for that$/,
    ],
    ['0 */24 * * *', /hour field "\*\/24": step 24 is larger than the field's range 0-23 \(at most 23\)/],
    ['0 0 */31 * *', /day-of-month field "\*\/31": step 31 is larger than the field's range 1-31 \(at most 30\); it would select 1 alone/],
    ['0 0 * */12 *', /month field "\*\/12": step 12 is larger than the field's range 1-12/],
    ['0 0 * * */7', /day-of-week field "\*\/7": step 7 is larger than the field's range 0-6 \(at most 6\)/],
    ['5/60 * * * *', /minute field "5\/60": step 60 .* it would select 5 alone/],
    ['*/x * * * *', /step must be a positive integer/],
    ['*/2/3 * * * *', /more than one "\/"/],
    ['0 5-1 * * *', /reversed range "5-1"/],
    ['0 0 * * FRI-MON', /reversed range "FRI-MON"/],
    ['0 0 * DEC-JAN *', /reversed range "DEC-JAN"/],
    ['0 0 * * MON-', /not a valid range/],
    ['1,,2 * * * *', /empty list item/],
    ['JAN * * * *', /minute field "JAN": "JAN" is not a number/],
    ['0 0 * * MONDAY', /day-of-week/],
    ['0 0 * FOO *', /unknown name "FOO"/],
    ['0 0 * * -1', /day-of-week/],
    ['a b c d e', /minute field "a"/],
    ['@fortnightly', /unknown descriptor "@fortnightly"/],
    ['@reboot', /@reboot is not supported/],
    ['@constructor', /unknown descriptor "@constructor"/],
    ['@__proto__', /unknown descriptor/],
    ['@', /unknown descriptor/],
    ['@every', /@every needs a duration/],
  ])('rejects %j', (expr, problem) => {
    const err = scheduleError(() => parseSpec(expr));
    expect(err.message).toMatch(problem);
  });

  it('a stored "*/60" (accepted by an earlier version) still parses, as minute 0 hourly: the schedule keeps firing', () => {
    const spec = parseSpec('*/60 * * * *', { stored: true });
    expect(spec.nextAfter(Date.UTC(2026, 0, 1, 0, 30))).toBe(Date.UTC(2026, 0, 1, 1, 0));
    expect(() => parseSpec('*/60 * * * *')).toThrow(/step 60 is larger/); // not taken from the stored spec's cache
    expect(() => parseSpec('*/61 * * * *', { stored: true })).toThrow(/step 61 is larger/);
  });

  it.each([
    ['0 0 31 2 *', /never occurs in February/],
    ['0 0 30 2 *', /never occurs in February/],
    ['0 0 31 4,6 *', /never occurs in April, June/],
    ['0 0 31 2,4,6,9,11 *', /never/],
    ['0 0 31 2 */2', /never/], // day-of-week starts with '*': days ANDed
    ['0 0 */20 * 5#2', /never fire/], // days 1, 21 are never the second Friday (8-14)
  ])('rejects %j, a date that never occurs', (expr, problem) => {
    expect(scheduleError(() => parseSpec(expr)).message).toMatch(problem);
  });

  it('accepts Feb 29 (leap years) and an impossible day that is ORed with a weekday', () => {
    expect(nextTriggers(parseSpec('0 0 29 2 *'), ms('2025-01-01T00:00:00Z'), 1).map(iso)).toEqual(['2028-02-29T00:00:00.000Z']);
    // Both day fields restricted: OR (rule 3), so it runs on Mondays in February.
    expect(nextTriggers(parseSpec('0 0 31 2 1'), ms('2025-01-01T00:00:00Z'), 1).map(iso)).toEqual(['2025-02-03T00:00:00.000Z']);
  });

  it('accepts leading zeros, extra whitespace, tabs and case-insensitive names (rule 2)', () => {
    const a = parseSpec('  00\t03  *  jan,Jul   mon-FRI ');
    const b = parseSpec('0 3 * 1,7 1-5');
    const from = ms('2025-01-01T00:00:00Z');
    expect(nextTriggers(a, from, 10)).toEqual(nextTriggers(b, from, 10));
    expect(a.expression).toBe('  00\t03  *  jan,Jul   mon-FRI ');
  });

  it('treats 0 and 7 as Sunday and a range ending in SUN/0 as ...-7 (rule 2)', () => {
    const from = ms('2025-03-13T00:00:00Z'); // Thursday
    const sun0 = nextTriggers(parseSpec('0 0 * * 0'), from, 3);
    expect(nextTriggers(parseSpec('0 0 * * 7'), from, 3)).toEqual(sun0);
    expect(nextTriggers(parseSpec('0 0 * * SUN'), from, 3)).toEqual(sun0);
    const weekend = nextTriggers(parseSpec('0 0 * * 6-7'), from, 4);
    expect(nextTriggers(parseSpec('0 0 * * 6-0'), from, 4)).toEqual(weekend);
    expect(nextTriggers(parseSpec('0 0 * * SAT-SUN'), from, 4)).toEqual(weekend);
    // 0-0 stays Sunday only (not 0-7).
    expect(nextTriggers(parseSpec('0 0 * * 0-0'), from, 3)).toEqual(sun0);
  });

  it('rejects an unknown or malformed time zone, also for @every', () => {
    for (const tz of ['Europe/Atlantis', '', 'Mars/Olympus', '+05:00', 'not a zone']) {
      const err = scheduleError(() => parseSpec('0 9 * * *', { timeZone: tz, schedule: 's1' }));
      expect(err.message).toContain('time zone');
      expect(err.message).toContain(JSON.stringify(tz));
      expect(err.message).toContain('"s1"');
    }
    expect(scheduleError(() => parseSpec('@every 10s', { timeZone: 'Europe/Atlantis' })).message).toContain('Europe/Atlantis');
    expect(scheduleError(() => everySpec(10_000, { timeZone: 'Europe/Atlantis' })).message).toContain('Europe/Atlantis');
  });

  it('accepts zone aliases and keeps the zone as given', () => {
    for (const tz of ['UTC', 'Etc/UTC', 'GMT', 'Europe/Budapest', 'America/Argentina/Buenos_Aires', 'Etc/GMT-14']) {
      expect(parseSpec('0 9 * * *', { timeZone: tz }).timeZone).toBe(tz);
    }
    expect(parseSpec('0 9 * * *').timeZone).toBe('UTC');
    const from = ms('2025-06-01T00:00:00Z');
    expect(nextTriggers(parseSpec('0 9 * * *', { timeZone: 'Etc/UTC' }), from, 3)).toEqual(nextTriggers(parseSpec('0 9 * * *'), from, 3));
    // Etc/GMT-14 is UTC+14.
    expect(nextTriggers(parseSpec('0 9 * * *', { timeZone: 'Etc/GMT-14' }), from, 1).map(iso)).toEqual(['2025-06-01T19:00:00.000Z']);
  });

  it('rejects offsetMs on a cron spec', () => {
    expect(scheduleError(() => parseSpec('0 9 * * *', { offsetMs: 1000 })).message).toMatch(/only to @every/);
    expect(parseSpec('0 9 * * *', { offsetMs: 0 }).kind).toBe('cron');
  });
});

describe('descriptors (rule 7)', () => {
  it.each([
    ['@yearly', '0 0 1 1 *'],
    ['@annually', '0 0 1 1 *'],
    ['@monthly', '0 0 1 * *'],
    ['@weekly', '0 0 * * 0'],
    ['@daily', '0 0 * * *'],
    ['@midnight', '0 0 * * *'],
    ['@hourly', '0 * * * *'],
    ['@DAILY', '0 0 * * *'],
  ])('%s = %s', (descriptor, fields) => {
    const from = ms('2025-10-25T12:00:00Z');
    const spec = parseSpec(descriptor, { timeZone: 'Europe/London' });
    expect(spec.kind).toBe('cron');
    expect(spec.expression).toBe(descriptor);
    expect(nextTriggers(spec, from, 5)).toEqual(nextTriggers(parseSpec(fields, { timeZone: 'Europe/London' }), from, 5));
  });
});

describe('@every and everySpec (rule 8)', () => {
  it('is epoch-aligned: triggers are multiples of the period, strictly after', () => {
    const spec = parseSpec('@every 90s');
    expect(spec).toMatchObject({
      kind: 'every',
      expression: '@every 90s',
      timeZone: 'UTC',
      everyMs: 90_000,
      offsetMs: 0,
      minPeriodMs: 90_000,
    });
    const from = ms('2025-01-01T00:00:10Z');
    const got = nextTriggers(spec, from, 50);
    for (const t of got) expect(t % 90_000).toBe(0);
    expect(got[0]).toBe(ms('2025-01-01T00:01:30Z'));
    for (let i = 1; i < got.length; i++) expect(got[i]! - got[i - 1]!).toBe(90_000);
    // Exactly on a trigger: the next one. Non-aligned ms values work.
    expect(spec.nextAfter(ms('2025-01-01T00:01:30Z'))).toBe(ms('2025-01-01T00:03:00Z'));
    expect(spec.nextAfter(ms('2025-01-01T00:01:30Z') - 1)).toBe(ms('2025-01-01T00:01:30Z'));
    expect(spec.nextAfter(ms('2025-01-01T00:01:30Z') + 1)).toBe(ms('2025-01-01T00:03:00Z'));
    expect(spec.nextAfter(0)).toBe(90_000);
    expect(spec.nextAfter(-1)).toBe(0);
    expect(spec.nextAfter(-90_000)).toBe(0);
    expect(spec.nextAfter(-90_001)).toBe(-90_000);
  });

  it('applies the offset: (t - offset) % period == 0', () => {
    const spec = everySpec('1h', { offsetMs: 15 * MIN });
    expect(spec).toMatchObject({ kind: 'every', expression: '@every 1h', everyMs: HOUR, offsetMs: 15 * MIN });
    const got = nextTriggers(spec, ms('2025-01-01T10:20:00.123Z'), 3).map(iso);
    expect(got).toEqual(['2025-01-01T11:15:00.000Z', '2025-01-01T12:15:00.000Z', '2025-01-01T13:15:00.000Z']);
    expect(spec.nextAfter(ms('2025-01-01T10:15:00Z'))).toBe(ms('2025-01-01T11:15:00Z'));
    const p = parseSpec('@every 90s', { offsetMs: 30_000 });
    for (const t of nextTriggers(p, 1_000_000_007, 20)) expect((t - 30_000) % 90_000).toBe(0);
  });

  it('ignores the time zone, which is reported as UTC', () => {
    const a = parseSpec('@every 1h30m', { timeZone: 'Asia/Kolkata' });
    expect(a.timeZone).toBe('UTC');
    expect(a.everyMs).toBe(90 * MIN);
    expect(nextTriggers(a, ms('2025-01-01T00:00:00Z'), 3)).toEqual(nextTriggers(parseSpec('@every 1h30m'), ms('2025-01-01T00:00:00Z'), 3));
  });

  it('accepts other forms: @every 2s, @EVERY 1d, numbers of ms, 2000ms', () => {
    expect(parseSpec('@every 2s').everyMs).toBe(2000);
    expect(parseSpec('@EVERY   1d').everyMs).toBe(DAY);
    expect(parseSpec('@every 2000ms').everyMs).toBe(2000);
    expect(everySpec(10_000)).toMatchObject({ expression: '@every 10s', everyMs: 10_000, offsetMs: 0 });
    expect(everySpec(5_400_000).expression).toBe('@every 1h30m');
    expect(everySpec(' 90s ').expression).toBe('@every 90s');
    expect(parseSpec('@every 1s').nextAfter(1500)).toBe(2000);
  });

  it.each([
    ['@every 0', /at least 1s/],
    ['@every 0s', /at least 1s/],
    ['@every 500ms', /at least 1s/],
    ['@every 1500ms', /whole seconds/],
    ['@every 1.5s', /fractional/],
    ['@every -5s', /not a duration/],
    ['@every 90', /unit is required/],
    ['@every abc', /not a duration/],
    ['@every 1h 30m', /not a duration/],
    ['@every 30s1h', /not a duration/],
  ])('rejects %j', (expr, problem) => {
    const err = scheduleError(() => parseSpec(expr, { schedule: 'tick' }));
    expect(err.message).toMatch(problem);
    expect(err.message).toContain('"tick"');
    expect(err.value).toBe(expr);
  });

  it.each([0, -1000, 1500, 999, NaN, Infinity, 1.5e3])('everySpec rejects %p ms', (every) => {
    scheduleError(() => everySpec(every));
  });

  it.each([-1000, 90_000, 100_000, 1500, 0.5, NaN])('everySpec rejects offsetMs %p for a 90 s period', (offsetMs) => {
    expect(scheduleError(() => everySpec('90s', { offsetMs })).message).toMatch(/offsetMs/);
  });
});

describe('parseDurationMs', () => {
  it.each([
    ['90s', 90_000],
    ['1h30m', 5_400_000],
    ['2m', 120_000],
    ['1d', DAY],
    ['1500ms', 1500],
    ['1d2h3m4s5ms', DAY + 2 * HOUR + 3 * MIN + 4000 + 5],
    ['1m30s', 90_000],
    ['0', 0],
    ['0s', 0],
    ['  10s  ', 10_000],
    ['007s', 7000],
  ])('%j = %d ms', (text, expected) => {
    expect(parseDurationMs(text)).toBe(expected);
  });

  it.each([
    '',
    ' ',
    'abc',
    '10',
    '1.5h',
    '0.5s',
    '10S',
    '1H',
    '1m1h',
    '1s1s',
    '1h 30m',
    '-1s',
    '+1s',
    'ms',
    's',
    '1x',
    '1w',
    '1e3s',
    '99999999999999999999d',
  ])('rejects %j', (text) => {
    const err = scheduleError(() => parseDurationMs(text, 'sched'));
    expect(err.message).toContain('"sched"');
    expect(err.value).toBe(text);
  });
});

describe('day-of-month / day-of-week (rule 3)', () => {
  it('a plain full range is not a star: 1-31 with a weekday is ORed (every day)', () => {
    const from = ms('2025-01-01T00:00:00Z');
    expect(nextTriggers(parseSpec('0 0 1-31 * 1'), from, 7)).toEqual(nextTriggers(parseSpec('0 0 * * *'), from, 7));
  });

  it("a '*' step in day-of-week ANDs the fields", () => {
    // A 13th that is a Sun/Tue/Thu/Sat (*/2 = 0,2,4,6): 2025-02-13 Thu, 2025-03-13 Thu,
    // 2025-04-13 Sun, 2025-05-13 Tue, not 2025-06-13 Fri, 2025-07-13 Sun.
    expect(nextTriggers(parseSpec('0 0 13 * */2'), ms('2025-01-14T00:00:00Z'), 5).map(iso)).toEqual([
      '2025-02-13T00:00:00.000Z',
      '2025-03-13T00:00:00.000Z',
      '2025-04-13T00:00:00.000Z',
      '2025-05-13T00:00:00.000Z',
      '2025-07-13T00:00:00.000Z',
    ]);
  });
});
