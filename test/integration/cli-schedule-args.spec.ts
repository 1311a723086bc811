// The CLI in-process (program.ts main) on schedule arguments: a name no schedule can have is a usage
// error (exit 2, as `--queue 'a b'` is), not a failure (trial 25: it exited 1); labels print so
// that `--label` takes them back.
import { execFileSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { main } from '../../lib/cli/program.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

let ns: string;
let inspector: Inspector;
beforeAll(async () => {
  ns = newNamespace('cliargs');
  inspector = new Inspector({ connection: redisUrl(), namespace: ns });
});
afterAll(async () => {
  await inspector.close();
  await deleteNamespace(ns);
});

/** Runs `chronos --redis-url … --namespace … <args>` in-process: exit code, stdout, stderr. */
async function chronos(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const sink = (add: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        add(chunk.toString('utf8'));
        done();
      },
    });
  const argv = ['node', 'chronos', '--redis-url', redisUrl(), '--namespace', ns, ...args];
  const code = await main(
    argv,
    sink((s) => (out += s)),
    sink((s) => (err += s)),
  );
  return { code, out, err };
}

test('a schedule name no schedule can have exits 2 (usage) for every verb; an unknown one exits 1', async () => {
  for (const verb of [['show'], ['history'], ['pause'], ['resume'], ['trigger'], ['rm'], ['backfill', '--from', '-1h']]) {
    const [v, ...rest] = verb;
    const r = await chronos('schedule', v, 'a b', ...rest);
    expect([v, r.code, r.err]).toEqual([v, 2, expect.stringContaining('error: Invalid schedule "a b": name: expected')]);
  }
  const j = await chronos('--json', 'schedule', 'show', 'a b');
  expect(j.code).toBe(2);
  expect(JSON.parse(j.err)).toEqual({ error: { code: 'INVALID_SCHEDULE', message: expect.stringContaining('"a b"') } });
  const missing = await chronos('schedule', 'show', 'nosuch');
  expect([missing.code, missing.err]).toEqual([1, 'error: Schedule "nosuch" not found\n']);
});

test('labels print as shell words that --label takes back: a value with a space, a comma or a quote is quoted', async () => {
  const labels = { tenant: 'acme corp', kinds: 'a,b', who: "o'brien", plain: 'x-1', none: '' };
  await inspector.addSchedule({ name: 'labelled', spec: '0 3 * * *', type: 'mail.send', labels });
  const show = await chronos('schedule', 'show', 'labelled');
  const line = show.out.split('\n').find((l) => l.startsWith('│ labels'))!;
  const text = line.split('│')[2].trim();
  expect(text).toBe(`kinds='a,b' none='' plain=x-1 tenant='acme corp' who='o'\\''brien'`);
  expect((await chronos('schedule', 'ls')).out).toContain(text);
  // as a shell reads it back: five words, each a --label that matches the schedule
  const words = execFileSync('sh', ['-c', `printf '%s\\0' ${text}`], { encoding: 'utf8' })
    .split('\0')
    .slice(0, -1);
  expect(words).toEqual(['kinds=a,b', 'none=', 'plain=x-1', 'tenant=acme corp', "who=o'brien"]);
  const page = await chronos('--json', 'schedule', 'ls', ...words.flatMap((w) => ['--label', w]));
  expect((JSON.parse(page.out) as { items: { name: string }[] }).items.map((i) => i.name)).toEqual(['labelled']);
});

test('a schedule name that starts with "-" is refused as an unknown option with how to give it (after "--"), which then finds it', async () => {
  await inspector.addSchedule({ name: '-x', spec: '@daily' });
  // before, only "error: unknown option '-x'": nothing said that "--" lets such a name through
  const hint = `unknown option '-x' (a name or value that starts with "-" goes after "--": chronos … -- -x)`;
  const r = await chronos('schedule', 'show', '-x');
  expect([r.code, r.err]).toEqual([2, `error: ${hint}\n`]);
  const j = await chronos('--json', 'schedule', 'pause', '-x');
  expect([j.code, JSON.parse(j.err)]).toEqual([2, { error: { code: 'USAGE', message: hint } }]);
  const shown = await chronos('schedule', 'show', '--', '-x');
  expect([shown.code, shown.out]).toEqual([0, expect.stringMatching(/│ schedule +│ -x +│/)]);
  // commander's own suggestion for a misspelt option is left alone
  const typo = await chronos('schedule', 'ls', '--lable', 'a=1');
  expect([typo.code, typo.err]).toEqual([2, "error: unknown option '--lable'\n(Did you mean --label?)\n"]);
});
