// The CLI's times (`schedule backfill --from/--to`, lib/cli/context.ts parseInstant): epoch ms, ISO
// 8601 in local time unless it gives a zone, now, -2h — and nothing guessed. Before, the text went to
// Date.parse: `--from 0` was 2000-01-01, `--from 7` 2001-07-01, `--from 'Dec 7'` 2001-12-07,
// `--from 1796604654` (epoch seconds) 1970-01-21 — a backfill of a weekly schedule from there enqueued
// 2,967 tasks — and a date alone (`2026-12-07`) was UTC midnight, not local as the docs say (trial 37).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseInstant, UsageError } from '../../lib/cli/context.js';

/** parseInstant(text) in a child process whose time zone is `tz` (jest's process.env is not the one Node reads TZ from). */
function inZone(tz: string, text: string): number {
  const context = fileURLToPath(new URL('../../dist/lib/cli/context.js', import.meta.url));
  const code = `const { parseInstant } = await import(${JSON.stringify(context)}); process.stdout.write(String(parseInstant(${JSON.stringify(text)}, '--from')));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', code], { env: { ...process.env, TZ: tz }, encoding: 'utf8' }));
}

function refused(text: string): string {
  try {
    parseInstant(text, '--from');
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`${JSON.stringify(text)} was accepted`);
}

test('a number that is not epoch ms, a bare word, a month without a year or a day that does not exist is refused, naming it', () => {
  expect(refused('1796604654')).toBe(
    '--from: "1796604654" is not epoch ms (that would be 1970-01-21T19:03:24.654Z); epoch seconds? in ms that is 1796604654000',
  );
  for (const [text, at] of [
    ['0', '1970-01-01T00:00:00.000Z'],
    ['7', '1970-01-01T00:00:00.007Z'],
    ['2026', '1970-01-01T00:00:02.026Z'],
    ['20261207', '1970-01-01T05:37:41.207Z'],
  ])
    expect(refused(text)).toBe(`--from: "${text}" is not epoch ms (that would be ${at})`);
  for (const text of ['1.5', 'Dec 7', 'yesterday', '2026-02-30', '2026-12-07T24:00', '2026-12-07T03:00+25:00', '7 Dec 03:00 GMT']) {
    expect(refused(text)).toBe(`--from: ${JSON.stringify(text)} is not a time (epoch ms, ISO 8601 such as 2026-12-07T03:00, now, or -2h)`);
  }
});

test('ISO 8601 is local time unless it gives a zone, a date alone too; epoch ms and RFC 2822 as written', () => {
  // a date alone is local midnight (Paris: 23:00 UTC the day before), as a date with a time is
  expect(inZone('Europe/Paris', '2026-12-07')).toBe(Date.UTC(2026, 11, 6, 23));
  expect(inZone('Europe/Paris', '2026-12-07T00:00')).toBe(Date.UTC(2026, 11, 6, 23));
  expect(parseInstant('2026-12-07', '--from')).toBe(new Date(2026, 11, 7).getTime());
  expect(parseInstant('2026-12-07T03:00', '--from')).toBe(new Date(2026, 11, 7, 3, 0).getTime());
  expect(parseInstant('2026-12-07 03:00:30.25', '--from')).toBe(new Date(2026, 11, 7, 3, 0, 30, 250).getTime());
  expect(parseInstant('2026-12-07T03:00:00Z', '--from')).toBe(Date.UTC(2026, 11, 7, 3));
  expect(parseInstant('2026-12-07T03:00+01:00', '--from')).toBe(Date.UTC(2026, 11, 7, 2));
  expect(parseInstant('2026-12-07T03:00-0530', '--from')).toBe(Date.UTC(2026, 11, 7, 8, 30));
  expect(parseInstant('1796604654000', '--from')).toBe(1796604654000);
  expect(parseInstant('Mon, 07 Dec 2026 03:00:00 GMT', '--from')).toBe(Date.UTC(2026, 11, 7, 3));
  const before = Date.now();
  expect(parseInstant('-2h', '--from')).toBeGreaterThanOrEqual(before - 7_200_000);
  expect(parseInstant('now', '--to')).toBeGreaterThanOrEqual(before);
});
