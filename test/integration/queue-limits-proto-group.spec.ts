// A group named "__proto__" (any text of 1 to 200 characters is a group: a tenant id, a customer name)
// has its override read back, shown and cleared like any other (trial 43). Before, getQueueLimits built
// the overrides with `groups[group] = …`, which for "__proto__" set the object's prototype instead of a
// field: the override was stored and applied by the fetch, but getQueueLimits, the Inspector, `chronos
// queue limits` ("set. none") and the console did not show it, and `--clear-group __proto__` said the
// group had no override, so it could not be dropped but by deleting the Redis field by hand.
import { cliRunner } from '../helpers/cli.js';
import { QueueRig } from '../helpers/queue.js';

let rig: QueueRig;
const { chronos } = cliRunner(() => rig.namespace);
beforeEach(() => {
  rig = new QueueRig();
});
afterEach(async () => {
  await rig.close();
});

test('an override of group "__proto__" is read back, shown by the CLI and cleared', async () => {
  await rig.client.enqueue('t', {}, { queue: 'l' });
  const set = await rig.client.setQueueLimits(
    'l',
    JSON.parse('{ "groups": { "__proto__": { "concurrency": 3 }, "b": { "concurrency": 1 } } }'),
  );
  expect(Object.entries(set.groups ?? {})).toEqual([
    ['__proto__', { concurrency: 3 }],
    ['b', { concurrency: 1 }],
  ]);
  expect(Object.keys((await rig.client.getQueueLimits('l')).groups ?? {}).sort()).toEqual(['__proto__', 'b']);
  const shown = await chronos('queue', 'limits', 'l');
  expect(shown.out).toMatch(/│ group __proto__ │ concurrency 3 │/);
  const cleared = await chronos('queue', 'limits', 'l', '--clear-group', '__proto__');
  expect([cleared.code, cleared.err]).toEqual([0, '']);
  expect(await rig.client.getQueueLimits('l')).toEqual({ groups: { b: { concurrency: 1 } } });
});
