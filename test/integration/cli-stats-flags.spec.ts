// `chronos stats`: a flag that only applies with --history (--queue, --window) or with --watch
// (--interval, --iterations) is a usage error without it (exit 2, the flag named), as `queue limits
// --group` without a limit is; before, `stats --queue images` printed every queue, exit 0.
import { cliRunner } from '../helpers/cli.js';
import { deleteNamespace, newNamespace } from '../helpers/redis.js';

let ns: string;
const { chronos } = cliRunner(() => ns);

beforeAll(() => {
  ns = newNamespace('cli-stats');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

test('stats refuses --queue/--window without --history and --interval/--iterations without --watch', async () => {
  const cases: [string[], string][] = [
    [['--queue', 'images'], 'error: --queue: only with --history (stats --history --queue images)\n'],
    [['--window', 'day'], 'error: --window: only with --history (stats --history --window day)\n'],
    [['--interval', '500'], 'error: --interval: only with --watch (stats --watch --interval 500)\n'],
    [['--iterations', '2'], 'error: --iterations: only with --watch (stats --watch --iterations 2)\n'],
  ];
  for (const [args, err] of cases) {
    const r = await chronos('stats', ...args);
    expect([r.code, r.out, r.err]).toEqual([2, '', err]);
  }
  const json = await chronos('--json', 'stats', '--queue', 'images');
  expect([json.code, JSON.parse(json.err)]).toEqual([
    2,
    { error: { code: 'USAGE', message: expect.stringMatching(/^--queue: only with --history/) } },
  ]);
  // with their mode they still work
  expect((await chronos('stats', '--history', '--window', 'day')).code).toBe(0);
  expect((await chronos('stats', '--watch', '--interval', '10', '--iterations', '1')).code).toBe(0);
}, 60_000);
