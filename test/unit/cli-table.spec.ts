// The CLI's tables (lib/cli/format.ts table): drawn by a linear renderer that matches cli-table3's
// output byte for byte (cli-table3's layout is quadratic in the rows: `schedule ls` of 20,000
// schedules took 70 s), and the whole `schedule ls` of a large registry ends with how to page it.
import Table from 'cli-table3';
import { scheduleTable, LARGE_LISTING } from '../../lib/cli/commands/schedules.js';
import { latencyText } from '../../lib/cli/commands/overview.js';
import { duration, table } from '../../lib/cli/format.js';
import type { ScheduleInfo } from '../../lib/core/admin/inspector.js';

/** What the CLI drew before: cli-table3 without colours or lines between body rows. */
function cliTable3(head: string[], rows: (string | number)[][]): string {
  const chars = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };
  const t = new Table({ head, chars, style: { head: [], border: [] } });
  for (const r of rows) t.push(r.map((c) => String(c)));
  return t.toString();
}

test.each([
  ['one column, no rows', ['a'], []],
  [
    'ragged widths and numbers',
    ['name', 'n', 'state'],
    [
      ['x', 1, 'active'],
      ['a-much-longer-name', 12345, '-'],
    ],
  ],
  [
    'wide characters and emoji count two columns',
    ['label', 'v'],
    [
      ['日本語', 'é'],
      ['⏰ wake', 'ok'],
      ['👩‍💻', 'x'],
    ],
  ],
  [
    'a cell with a line break spans two lines',
    ['a', 'b'],
    [
      ['one\ntwo', 'x'],
      ['', 'y'],
    ],
  ],
] as [string, string[], (string | number)[][]][])('%s: the same text as cli-table3', (_title, head, rows) => {
  expect(table(head, rows)).toBe(cliTable3(head, rows));
});

function info(i: number): ScheduleInfo {
  const name = `tenant-${i}.digest`;
  return {
    name,
    expression: '0 6 * * *',
    timeZone: 'UTC',
    queue: 'emails',
    type: 'email.digest',
    catchUp: 'latest',
    overlap: 'allow',
    runtime: true,
    origin: 'runtime',
    paused: false,
    orphaned: false,
    next: [],
    declaredBy: [],
  } as ScheduleInfo;
}

test('the whole listing of more schedules than LARGE_LISTING ends with how to page or filter it; a smaller one does not', () => {
  const big = scheduleTable(Array.from({ length: LARGE_LISTING + 1 }, (_, i) => info(i))).split('\n');
  expect(big).toHaveLength(LARGE_LISTING + 1 + 4); // top rule, head, rows, bottom rule, hint
  expect(big.at(-1)).toBe(
    `${LARGE_LISTING + 1} schedules. One page at a time: --limit 100 (then --cursor); narrow it with --label key=value, --prefix <name> or --state.`,
  );
  expect(big.at(-2)).toMatch(/^└─+┴/);
  const small = scheduleTable(Array.from({ length: LARGE_LISTING }, (_, i) => info(i))).split('\n');
  expect(small).toHaveLength(LARGE_LISTING + 3);
  expect(small.at(-1)).toMatch(/^└─+┴/);
});

test("a queue's latency cell: the stream's oldest pending task, 'in groups' when every pending task waits in a group (trial 15: '0ms' under pending 60)", () => {
  const groups = (waiting: number) => ({ waiting, count: 1, held: 0, top: [] });
  expect(latencyText({ pending: 0, latencyMs: 0 })).toBe('-');
  expect(latencyText({ pending: 3, latencyMs: 2500 })).toBe(duration(2500));
  expect(latencyText({ pending: 60, latencyMs: 0, groups: groups(60) })).toBe('in groups');
  expect(latencyText({ pending: 61, latencyMs: 1200, groups: groups(60) })).toBe(duration(1200));
});
