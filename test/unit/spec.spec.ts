import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { InvalidScheduleError } from '../../lib/core/runtime/errors.js';
import {
  TRIGGERS_BETWEEN_COUNT_LIMIT,
  everySpec,
  nextTriggers,
  parseDurationMs,
  parseSpec,
  triggersBetween,
  type ScheduleSpec,
} from '../../lib/core/scheduler/spec.js';

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

const ms = (iso: string): number => Date.parse(iso);
const iso = (t: number): string => new Date(t).toISOString();
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const ROOT = new URL('../..', import.meta.url);

interface HostJob {
  expr: string;
  tz: string;
  from: number;
  n: number;
}

/**
 * Computes triggers in a child Node process whose host time zone is `hostTz` (jest's sandboxed
 * process.env cannot change the zone of the running process). The child transpiles spec.ts and
 * the modules it imports in memory with the project's TypeScript and imports them as data: URLs; nothing is
 * written to disk. Returns the host's UTC offset (minutes east) at `probe` and each job's triggers.
 */
function inHostTz(hostTz: string, probe: number, jobs: HostJob[]): { hostOffset: number; results: number[][] } {
  const child = `
    import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
    const root = new URL(process.env.SPEC_ROOT);
    const ts = (await import(new URL('node_modules/typescript/lib/typescript.js', root).href)).default;
    const js = (path) => ts.transpileModule(readFileSync(new URL(path, root), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const dataUrl = (code) => 'data:text/javascript;base64,' + Buffer.from(code).toString('base64');
    const croner = new URL('node_modules/croner/dist/croner.js', root).href;
    // spec.ts and the modules it imports, each as a data: URL (one per module, so instanceof holds)
    const urls = new Map();
    const load = (url) => {
      if (!urls.has(url.href)) {
        urls.set(url.href, dataUrl(js(url).replace(/from '([^']+)'/g, (_, to) =>
          "from '" + (to === 'croner' ? croner : load(new URL(to.replace(/\\.js$/, '.ts'), url))) + "'")));
      }
      return urls.get(url.href);
    };
    const spec = await import(load(new URL('lib/core/scheduler/spec.ts', root)));
    const { probe, jobs } = JSON.parse(process.env.SPEC_JOBS);
    const results = jobs.map((j) => spec.nextTriggers(spec.parseSpec(j.expr, { timeZone: j.tz }), j.from, j.n));
    process.stdout.write(JSON.stringify({ hostOffset: -new Date(probe).getTimezoneOffset(), results }));
  `;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', child], {
    env: { PATH: process.env.PATH ?? '', TZ: hostTz, SPEC_ROOT: ROOT.href, SPEC_JOBS: JSON.stringify({ probe, jobs }) },
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (out.status !== 0) throw new Error(`child process failed (${String(out.status)}): ${out.stderr}`);
  return JSON.parse(out.stdout) as { hostOffset: number; results: number[][] };
}

/** The InvalidScheduleError thrown by fn (fails the test if fn does not throw one). */
function scheduleError(fn: () => unknown): InvalidScheduleError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidScheduleError);
    expect((err as InvalidScheduleError).code).toBe('INVALID_SCHEDULE');
    return err as InvalidScheduleError;
  }
  throw new Error('expected an InvalidScheduleError, nothing was thrown');
}

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
    ['0 24 * * *', /hour field "24": 24 is out of range 0-23/],
    ['0 0 0 * *', /day-of-month field "0": 0 is out of range 1-31/],
    ['0 0 32 * *', /day-of-month/],
    ['0 0 * 13 *', /month field "13"/],
    ['0 0 * 0 *', /month field "0"/],
    ['0 0 * * 8', /day-of-week field "8": 8 is out of range 0-7/],
    ['*/0 * * * *', /zero step/],
    ['0 1-5/0 * * *', /zero step/],
    ['*/61 * * * *', /step 61 is larger/],
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
