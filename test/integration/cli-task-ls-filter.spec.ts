// `chronos task ls` with --type/--error: a filtered page looks at up to 10,000 tasks. When none of
// those matches, the page is empty but has a cursor (more tasks to look at): the CLI must not say
// there are no such tasks, only that none matched so far, and how to go on. A child process against
// its own namespace with 10,001 pending tasks (no worker), the last one matching.
import { QueueClient } from '../../lib/core/index.js';
import { cliRunner } from '../helpers/cli.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

let ns: string;
const { chronos, json } = cliRunner(() => ns);

beforeAll(async () => {
  ns = newNamespace('cli-filter');
  const client = new QueueClient({ connection: redisUrl(), namespace: ns });
  for (let i = 0; i < 10_000; i += 1000)
    await client.enqueueBulk(Array.from({ length: 1000 }, (_, j) => ({ type: 'common', payload: { n: i + j } })));
  await client.enqueue('rare', { n: 10_000 });
  await client.close();
}, 60_000);
afterAll(async () => {
  await deleteNamespace(ns);
});

test('a filtered listing whose first 10,000 tasks hold no match says so and gives the cursor, never "No pending tasks."', async () => {
  const page = await json<{ tasks: unknown[]; cursor?: string }>(
    'task',
    'ls',
    '--queue',
    'default',
    '--state',
    'pending',
    '--type',
    'rare',
  );
  expect(page.tasks).toEqual([]);
  expect(page.cursor).toEqual(expect.any(String));

  const r = await chronos('task', 'ls', '--queue', 'default', '--state', 'pending', '--type', 'rare');
  expect(r.code).toBe(0);
  expect(r.out).not.toContain('No pending tasks.');
  expect(r.out).toContain('No pending tasks match (type rare) among the 10,000 looked at; more to look at:');
  expect(r.out).toContain(`more: --cursor '${page.cursor}'`);

  const next = await chronos('task', 'ls', '--queue', 'default', '--state', 'pending', '--type', 'rare', '--cursor', page.cursor!);
  expect(next.out).toContain('rare');

  // a filter with nothing left to look at: none match, and the whole queue was looked at
  const none = await chronos('task', 'ls', '--queue', 'default', '--state', 'pending', '--error', 'nothing', '--cursor', page.cursor!);
  expect(none.out.trim()).toBe('No pending tasks match (error containing "nothing").');
}, 60_000);
