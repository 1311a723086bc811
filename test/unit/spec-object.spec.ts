// An object spec takes only `every` and `offset` (trial 21: BullMQ's repeat options in it — `limit`,
// `tz`, `startDate` — were ignored in silence, and `{ pattern }` was refused as "every must be a number
// of ms or a duration string, got undefined"). The one check (definition.ts checkSpecKeys) is on every
// path that takes a definition: register/addSchedule (toStored) and addSchedules/upsertSchedules
// (validateDefinitions); the decorators' path is in test/nest/discovery.spec.ts.
import { InvalidScheduleError } from '../../lib/core/runtime/errors.js';
import type { ScheduleDefinition } from '../../lib/core/scheduler/definition.js';
import { toStored } from '../../lib/core/scheduler/definition-check.js';
import { validateDefinitions } from '../../lib/core/admin/schedule-bulk.js';

/** The error of `make`, which must throw an InvalidScheduleError. */
function errorOf(make: () => unknown): InvalidScheduleError {
  try {
    make();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidScheduleError);
    return err as InvalidScheduleError;
  }
  throw new Error('did not throw');
}

const CASES: [spec: Record<string, unknown>, keys: string, hint: RegExp][] = [
  [{ every: 60_000, limit: 5 }, 'limit', /"limit" \(use `maxRuns`\)/],
  [{ pattern: '0 3 * * *' }, 'pattern', /"pattern" \(use the cron expression itself as the spec/],
  [{ every: '1m', startDate: 0, endDate: 1 }, 'startDate, endDate', /"startDate" \(use `startAt`\), "endDate" \(use `endAt`\)/],
  [{ every: 60_000, tz: 'Europe/Budapest' }, 'tz', /"tz" \(use `timeZone`\)/],
  [{ every: 60_000, immediately: true }, 'immediately', /"immediately" \(triggers fall on the epoch-aligned grid/],
  [{ every: 60_000, constructor: 1 }, 'constructor', /unknown key "constructor"; an object spec takes only every/],
];

describe('an object spec with a key other than every and offset is refused, naming the key and what to use', () => {
  test.each(CASES)('%j', (spec, keys, hint) => {
    const def = { name: 'nightly', spec } as unknown as ScheduleDefinition;
    for (const make of [
      () => toStored(def, 'UTC', false),
      () => toStored(def, 'UTC', true),
      () => validateDefinitions([def], 'UTC', 'addSchedules'),
    ]) {
      const err = errorOf(make);
      expect(err.schedule).toBe('nightly');
      expect(err.value).toBe(keys);
      expect(err.problem).toMatch(/^spec: unknown keys? /);
      expect(err.message).toMatch(hint);
    }
  });

  test('every and offset still pass', () => {
    const { stored } = toStored({ name: 'n', spec: { every: 60_000, offset: 5000 } }, 'UTC', false);
    expect([stored.expression, stored.offsetMs]).toEqual(['@every 60s', 5000]);
  });

  test("offset takes the duration strings every takes ('2s' was refused beside every: '10s'), stored as the same ms", () => {
    const at = (offset: number | string) => toStored({ name: 'n', spec: { every: '10s', offset } }, 'UTC', false);
    // the same stored definition (fingerprint) whichever form: an upsert from one form to another writes nothing
    expect([at('2s'), at('2000ms'), at(2000)].map(({ stored }) => [stored.expression, stored.offsetMs, stored.fp])).toEqual(
      Array(3).fill(['@every 10s', 2000, at(2000).stored.fp]),
    );
  });

  test('a bad offset string names the offset and the text; one not less than the period says so', () => {
    const bad = errorOf(() => toStored({ name: 'n', spec: { every: '10s', offset: '2 s' } }, 'UTC', false));
    expect([bad.schedule, bad.value, bad.problem]).toEqual([
      'n',
      '2 s',
      expect.stringMatching(/^offset: not a duration: expected integer amounts/),
    ]);
    const big = errorOf(() => toStored({ name: 'n', spec: { every: '10s', offset: '10s' } }, 'UTC', false));
    expect(big.problem).toBe('offset (offsetMs): expected whole seconds in ms with 0 <= offset < 10000 (the period, ms), got 10000');
  });
});

test('a time zone that is not one is refused with an object spec as with "@every" (trial 29: { every } took any timeZone, a typo or 42, in silence)', () => {
  for (const timeZone of ['Europe/Berln', 42 as unknown as string]) {
    for (const spec of [{ every: 60_000 }, '@every 1m']) {
      const err = errorOf(() => toStored({ name: 'tenant-7.sync', spec, timeZone }, 'UTC', true));
      expect([err.schedule, err.value]).toEqual(['tenant-7.sync', String(timeZone)]);
      expect(err.problem).toMatch(/^timeZone: expected an IANA time zone/);
      expect(
        errorOf(() =>
          validateDefinitions(
            [
              { name: 'ok', spec: '@daily' },
              { name: 'x', spec, timeZone },
            ],
            'UTC',
            'upsertSchedules',
          ),
        ).index,
      ).toBe(1);
    }
  }
  // a valid zone is still accepted and, as for "@every", ignored: the triggers are epoch-aligned
  expect(toStored({ name: 'n', spec: { every: 60_000 }, timeZone: 'Asia/Kolkata' }, 'UTC', true).stored.timeZone).toBe('UTC');
});

describe('a definition with a BullMQ repeat key beside spec gets the hint an object spec or @Cron gives (trial: addSchedule({ tz }) said only `unknown option "tz"`)', () => {
  const DEF_CASES: [extra: Record<string, unknown>, hint: RegExp][] = [
    [{ tz: 'Europe/Paris' }, /unknown option "tz" \(use `timeZone`\)$/],
    [{ limit: 3, startDate: 0 }, /unknown options "limit" \(use `maxRuns`\), "startDate" \(use `startAt`\)$/],
    [{ every: 60_000 }, /unknown option "every" \(give it in the spec: spec: \{ every, offset \} or "@every 10s"\)$/],
    [{ repeat: { pattern: '0 3 * * *' } }, /unknown option "repeat" \(give its pattern or every as the spec/],
    [{ colour: 'red' }, /unknown option "colour"$/],
  ];
  test.each(DEF_CASES)('%j', (extra, hint) => {
    const def = { name: 'nightly', spec: '0 3 * * *', ...extra } as unknown as ScheduleDefinition;
    for (const make of [() => toStored(def, 'UTC', true), () => validateDefinitions([def], 'UTC', 'upsertSchedules')]) {
      const err = errorOf(make);
      expect([err.schedule, err.value]).toEqual(['nightly', Object.keys(extra).join(', ')]);
      expect(err.message).toMatch(hint);
    }
  });
});

test('a spec that is neither a cron text nor an object with every is refused saying so (trial: spec [] was "every must be a number…" quoting Array.prototype.every\'s source; null "got object")', () => {
  const CASES: [spec: unknown, value: string][] = [
    [undefined, 'undefined'],
    [null, 'null'],
    [[], '[]'],
    [['0 3 * * *'], '["0 3 * * *"]'],
    [{}, '{}'],
    [new Date(0), '1970-01-01T00:00:00.000Z'],
  ];
  for (const [spec, value] of CASES) {
    const def = { name: 'nightly', spec } as unknown as ScheduleDefinition;
    for (const make of [() => toStored(def, 'UTC', true), () => validateDefinitions([def], 'UTC', 'upsertSchedules')]) {
      const err = errorOf(make);
      expect([err.schedule, err.value]).toEqual(['nightly', value]);
      expect(err.problem).toBe('spec: expected a cron expression (a string such as "0 3 * * *") or an object { every, offset? }');
    }
  }
  // the types a spec may have keep their own, more precise messages
  expect(errorOf(() => toStored({ name: 'n', spec: 5 as unknown as string }, 'UTC', true)).problem).toBe(
    'the expression must be a string, got number',
  );
  expect(errorOf(() => toStored({ name: 'n', spec: { every: true as unknown as number } }, 'UTC', true)).problem).toMatch(
    /^every must be a number/,
  );
});

test("a time zone matched in any case is stored in its canonical spelling: 'europe/paris' and 'Europe/Paris' are one definition (an upsert of either is a no-op)", () => {
  const at = (timeZone: string) => toStored({ name: 'n', spec: '0 3 * * *', timeZone }, 'UTC', false).stored;
  const [lower, upper, given] = [at('europe/paris'), at('EUROPE/PARIS'), at('Europe/Paris')];
  expect([lower.timeZone, upper.timeZone, lower.fp, upper.fp]).toEqual(['Europe/Paris', 'Europe/Paris', given.fp, given.fp]);
  // the default zone too, and UTC and the Etc zones
  expect(toStored({ name: 'n', spec: '0 3 * * *' }, 'europe/paris', false).stored.fp).toBe(given.fp);
  expect([at('utc').timeZone, at('etc/gmt+5').timeZone]).toEqual(['UTC', 'Etc/GMT+5']);
  // an alias keeps the name written (it is not replaced by the zone Intl resolves it to)
  expect([at('US/Eastern').timeZone, at('Etc/UTC').timeZone]).toEqual(['US/Eastern', 'Etc/UTC']);
});
