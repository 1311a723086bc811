// Trial 15: `chronos task ls --state pending` and `task delete --all --state pending` on a queue whose
// pending tasks wait in groups (README "Limits and groups": counted in pending, neither listed nor
// reached by an act). Before, `queue ls` said pending 6, `task ls` said "No pending tasks.", and
// `delete --all` asked to "Delete all 6 pending tasks" then answered "Deleted 0". A child process
// (dist/lib/cli/main.js) against its own namespace, no worker.
import { QueueClient } from '../../lib/core/index.js';
import { cliRunner } from '../helpers/cli.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

let ns: string;
const { chronos, json } = cliRunner(() => ns);

beforeAll(async () => {
  ns = newNamespace('cli-grouped');
  const client = new QueueClient({ connection: redisUrl(), namespace: ns });
  for (let i = 0; i < 6; i++) await client.enqueue('import', { i }, { queue: 'imports', group: `tenant-${i % 2}` });
  await client.enqueue('import', { i: 6 }, { queue: 'imports' }); // ungrouped: in the stream
  await client.close();
});
afterAll(async () => {
  await deleteNamespace(ns);
});

test('the pending listing and delete --all say how many pending tasks wait in groups, unlisted and not reached', async () => {
  const ls = await chronos('task', 'ls', '--queue', 'imports', '--state', 'pending');
  expect(ls.code).toBe(0);
  expect(ls.out).toMatch(/\n6 more pending task\(s\) wait in groups: not listed \(chronos queue show imports\)\n$/);
  // JSON keeps its shape
  expect((await json<{ tasks: unknown[] }>('task', 'ls', '--queue', 'imports', '--state', 'pending')).tasks).toHaveLength(1);
  const del = await chronos('task', 'delete', '--all', '--queue', 'imports', '--state', 'pending', '--yes');
  expect(del.out).toBe(
    'Deleted 1 pending task(s) of queue imports. 6 task(s) waiting in groups were not reached (README "Limits and groups").\n',
  );
  expect((await json<{ pending: number }[]>('queue', 'ls'))[0].pending).toBe(6);
});
