// `chronos queue limits q --force` on a queue with no task yet stores its limits and makes the queue
// known, as a schedule on it does: a later `chronos queue limits q` (show, without --force) shows them,
// and `queue ls` lists the queue. Before, the show said the queue was not found, though its limits
// were stored and applied (trial 32).
import { Inspector } from '../../lib/core/admin/inspector.js';
import { cliRunner } from '../helpers/cli.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

const ns = newNamespace('cli-limits-first');
const { chronos, json } = cliRunner(() => ns);
afterAll(() => deleteNamespace(ns));

test('limits set with --force before the first task are shown by a later `queue limits` without --force, and the queue is listed', async () => {
  const set = await chronos('queue', 'limits', 'fresh', '--concurrency', '2', '--force');
  expect([set.code, set.err]).toEqual([0, '']);
  const show = await chronos('queue', 'limits', 'fresh');
  expect([show.code, show.err]).toEqual([0, '']);
  expect(show.out).toMatch(/^Limits of queue fresh:\n.*│ concurrency │ 2 │/s);
  expect((await json<{ name: string }[]>('queue', 'ls')).map((q) => q.name)).toEqual(['fresh']);
  // a call that only clears does not make a queue known (nothing stored for it)
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns });
  try {
    await inspector.setQueueLimits('other', { concurrency: null });
    expect(await inspector.queueNames()).toEqual(['fresh']);
  } finally {
    await inspector.close();
  }
});
