// `chronos audit` with a filter. One call looks at up to 2,000 entries of the trail (which keeps
// 10,000): when none of those match, the page is empty with a cursor, and the CLI must say so and
// how to go on (`--cursor`), never "No acts recorded" — which it said, with no way to read further,
// for an act 2,000 entries back, though the trail had it. And a filter no entry can have (a queue or
// schedule name no queue or schedule can have, an empty actor) is a usage error, as docs/operating.md
// says; it listed nothing, exit 0 (trial 37).
import { Inspector } from '../../lib/core/admin/inspector.js';
import type { AuditPage } from '../../lib/core/admin/inspector.js';
import { cliRunner } from '../helpers/cli.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

let ns: string;
const { chronos, json } = cliRunner(() => ns);

beforeAll(async () => {
  ns = newNamespace('cli-audit');
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns, actor: 'ops:ada' });
  await inspector.pauseQueue('old');
  // 2,000 later acts on another queue: the pause of "old" is past what one filtered call looks at
  for (let i = 0; i < 1000; i++) {
    await inspector.pauseQueue('busy');
    await inspector.resumeQueue('busy');
  }
  await inspector.close();
}, 120_000);
afterAll(async () => {
  await deleteNamespace(ns);
});

test('a filtered page with no match among the entries looked at says so and gives the cursor; --cursor reads on', async () => {
  const r = await chronos('audit', '--queue', 'old');
  expect(r.code).toBe(0);
  expect(r.out).not.toContain('No acts recorded');
  const cursor = /^more: --cursor '([^']+)'$/m.exec(r.out)?.[1];
  expect(r.out).toBe(`No acts match (queue old) among the 2,000 looked at; more to look at:\nmore: --cursor '${cursor}'\n`);
  const next = await json<AuditPage>('audit', '--queue', 'old', '--cursor', cursor!);
  expect(next.entries.map((e) => [e.action, e.queue, e.actor])).toEqual([['queue.pause', 'old', 'ops:ada']]);
  // unfiltered, a full page also says how to go on
  const page = await chronos('audit', '--limit', '2');
  expect(page.out).toMatch(/\nmore: --cursor '\d+-\d+'\n$/);
  // a filter that matches nothing anywhere says that, not that nothing was recorded
  const none = await chronos('audit', '--action', 'task.cancel', '--cursor', cursor!);
  expect(none.out).toBe('No acts match (action task.cancel).\n');
}, 60_000);

test('a filter no entry can have is a usage error naming it', async () => {
  for (const [flag, value, problem] of [
    ['--queue', 'x y', 'queue: expected a queue name'],
    ['--schedule', 'a b', 'schedule: expected a schedule name'],
    ['--by', '', 'actor: expected a name'],
    ['--cursor', 'nope', 'cursor: expected <ms>-<seq>'],
  ]) {
    const r = await chronos('audit', flag, value);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toContain(problem);
    expect(r.err).toContain(JSON.stringify(value));
  }
}, 60_000);
