// A task's group as the Inspector, the CLI and the console's API show it, and the bulk acts filtered by
// group: "retry the dead tasks of tenant acme" (trial 43). Before, TaskInfo had no group (a dead grouped
// task's listing and `chronos task show` did not say its group) and no act or listing took one.
import { Inspector } from '../../lib/core/admin/inspector.js';
import { NonRetryableError } from '../../lib/core/runtime/errors.js';
import { cliRunner } from '../helpers/cli.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

let rig: QueueRig;
let inspector: Inspector;
const { chronos } = cliRunner(() => rig.namespace);
beforeEach(() => {
  rig = new QueueRig();
  inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace, actor: 'test' });
});
afterEach(async () => {
  await inspector.close();
  await rig.close();
});

/** Dead tasks of queue d, made by a real server whose handler throws NonRetryableError; ids by group. */
async function seedDead(groups: (string | undefined)[]): Promise<string[]> {
  const s = rig.server({ queues: ['d'] });
  s.handle('t', () => {
    throw new NonRetryableError('no');
  });
  await s.start();
  const ids: string[] = [];
  for (const group of groups) ids.push((await rig.client.enqueue('t', {}, { queue: 'd', group })).id);
  await waitFor(async () => (await inspector.queue('d')).dead === groups.length, `${groups.length} dead`);
  await s.shutdown();
  return ids;
}

test("a task's group is shown, and listings and bulk acts take a group filter", async () => {
  const [a1, a2, b1, none] = await seedDead(['acme', 'acme', 'bolt', undefined]);
  expect((await inspector.findTask(a1))?.group).toBe('acme');
  expect((await inspector.findTask(none))?.group).toBeUndefined();
  const page = await inspector.taskPage('d', 'dead', { group: 'acme' });
  expect(page.tasks.map((t) => t.id).sort()).toEqual([a1, a2].sort());
  expect((await inspector.deadGroups({ queue: 'd', group: 'bolt' })).groups.map((g) => g.count)).toEqual([1]);
  await expect(inspector.taskPage('d', 'dead', { group: '' })).rejects.toThrow(
    'group: expected a group name (1 to 200 characters), got ""',
  );

  const r = await inspector.retryAllDead('d', { group: 'acme' });
  expect(r.ids.sort()).toEqual([a1, a2].sort());
  expect((await inspector.taskPage('d', 'dead')).tasks.map((t) => t.id).sort()).toEqual([b1, none].sort());
  const pending = await inspector.taskPage('d', 'pending');
  expect(pending.tasks.map((t) => t.group)).toEqual(expect.arrayContaining(['acme', 'acme']));

  // the CLI: show names the group, ls has a group column, retry --all --group retries that group's only
  const show = await chronos('task', 'show', b1);
  expect(show.out).toMatch(/│ group\s+│ bolt\s+│/);
  const ls = await chronos('task', 'ls', '--queue', 'd', '--state', 'dead');
  expect(ls.out).toMatch(/│ id\s+│ type\s+│ payload\s+│ group\s+│ failed/);
  expect(ls.out).toContain('│ bolt ');
  const retry = await chronos('task', 'retry', '--all', '--queue', 'd', '--group', 'bolt', '--yes');
  expect([retry.code, retry.out]).toEqual([0, 'Retried 1 dead task(s) of queue d (group bolt).\n']);
  expect((await inspector.taskPage('d', 'dead')).tasks.map((t) => t.id)).toEqual([none]);
  const misuse = await chronos('task', 'retry', none, '--group', 'bolt');
  expect([misuse.code, misuse.err]).toEqual([2, 'error: task retry: --type, --error and --group go with --all\n']);
});
