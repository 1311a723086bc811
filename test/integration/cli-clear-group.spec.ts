// `chronos queue limits <q> --clear-group <g>` for a group with no override: an error naming the
// group (exit 1, as `schedule rm` / `queue pause` of a name that does not exist), nothing written.
import { Inspector } from '../../lib/core/admin/inspector.js';
import { cliRunner } from '../helpers/cli.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';

let rig: QueueRig;
let inspector: Inspector;
const { chronos } = cliRunner(() => rig.namespace);
beforeEach(() => {
  rig = new QueueRig();
  inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace, events: rig.events });
});
afterEach(async () => {
  await inspector.close();
  await rig.close();
});

test('--clear-group of a group without an override says there was nothing to clear, naming it, and writes nothing', async () => {
  // before: "Limits of queue l set." and exit 0, as if an override had been dropped
  await rig.client.enqueue('t', {}, { queue: 'l' });
  await inspector.setQueueLimits('l', { groups: { vip: { concurrency: 3 } } });
  const none = await chronos('queue', 'limits', 'l', '--clear-group', 'nosuch');
  expect([none.code, none.out]).toEqual([1, '']);
  expect(none.err).toBe('error: Queue "l" has no override for group "nosuch": nothing to clear (groups with an override: vip)\n');
  // with other changes too: nothing is written
  expect((await chronos('queue', 'limits', 'l', '--concurrency', '2', '--clear-group', 'nosuch')).code).toBe(1);
  expect(await inspector.queueLimits('l')).toEqual({ groups: { vip: { concurrency: 3 } } });
  // a group that has one is cleared as before
  const vip = await chronos('queue', 'limits', 'l', '--clear-group', 'vip');
  expect([vip.code, vip.out]).toEqual([0, 'Limits of queue l set.\nnone\n']);
  expect(await inspector.queueLimits('l')).toEqual({});
});

test('--group g with --clear-group g is a usage error naming both, and writes nothing', async () => {
  // before: "Limits of queue l set.", exit 0: the override was dropped and --concurrency 5 silently ignored (trial 37)
  await rig.client.enqueue('t', {}, { queue: 'l' });
  await inspector.setQueueLimits('l', { groups: { vip: { concurrency: 3 } } });
  const both = await chronos('queue', 'limits', 'l', '--group', 'vip', '--concurrency', '5', '--clear-group', 'vip');
  expect([both.code, both.out]).toEqual([2, '']);
  expect(both.err).toBe(
    "error: --group vip with --clear-group vip: set the group's override or drop it, not both (two calls do both, in the order you mean)\n",
  );
  expect(await inspector.queueLimits('l')).toEqual({ groups: { vip: { concurrency: 3 } } });
  // another group's override beside a clear is fine
  expect((await chronos('queue', 'limits', 'l', '--group', 'std', '--concurrency', '1', '--clear-group', 'vip')).code).toBe(0);
  expect(await inspector.queueLimits('l')).toEqual({ groups: { std: { concurrency: 1 } } });
});

test('--group and --clear-group given twice act on every group named, not only the last (trial 43)', async () => {
  // before: commander kept the last of each: '--clear-group a --clear-group b' printed 'set.', exit 0, and
  // dropped b's override only (a kept its limit); '--group a --group b --concurrency 2' set b's override only
  await rig.client.enqueue('t', {}, { queue: 'l' });
  await inspector.setQueueLimits('l', { groups: { a: { concurrency: 3 }, b: { concurrency: 4 }, c: { concurrency: 5 } } });
  const cleared = await chronos('queue', 'limits', 'l', '--clear-group', 'a', '--clear-group', 'b');
  expect(cleared.code).toBe(0);
  expect(await inspector.queueLimits('l')).toEqual({ groups: { c: { concurrency: 5 } } });
  const set = await chronos('queue', 'limits', 'l', '--group', 'x', '--group', 'y', '--rate', '5/1000');
  expect(set.code).toBe(0);
  const rate = { max: 5, duration: 1000 };
  expect(await inspector.queueLimits('l')).toEqual({ groups: { c: { concurrency: 5 }, x: { rate }, y: { rate } } });
  // one of several not there: named, nothing written
  const none = await chronos('queue', 'limits', 'l', '--clear-group', 'c', '--clear-group', 'nosuch');
  expect([none.code, none.err]).toEqual([
    1,
    'error: Queue "l" has no override for group "nosuch": nothing to clear (groups with an override: c, x, y)\n',
  ]);
  expect((await inspector.queueLimits('l')).groups?.c).toEqual({ concurrency: 5 });
  // a group both set and cleared, among others: the usage error names it
  const both = await chronos(
    'queue',
    'limits',
    'l',
    '--group',
    'x',
    '--group',
    'c',
    '--concurrency',
    '1',
    '--clear-group',
    'y',
    '--clear-group',
    'c',
  );
  expect([both.code, both.err]).toEqual([
    2,
    "error: --group c with --clear-group c: set the group's override or drop it, not both (two calls do both, in the order you mean)\n",
  ]);
});
