// The CLI in-process (program.ts main) on schedule arguments: a name no schedule can have is a usage
// error (exit 2, as `--queue 'a b'` is), not a failure (trial 25: it exited 1); labels print so
// that `--label` takes them back.
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
