// A trigger is enqueued ahead of its instant, so a schedule's last fire (its trigger instant) can be
// a moment after now. `chronos schedule ls` and `schedule show` showed it as "(in 2s)", a last fire in
// the future; they now say it is due then and already enqueued ("(due in 1m, enqueued)"), as the
// console does, and a past fire as before ("(3m ago)") (trial 32).
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { engineTime } from '../../lib/core/runtime/time.js';
import { cliRunner } from '../helpers/cli.js';
import { QueueRig } from '../helpers/queue.js';
import { registryKey, storedJson } from '../helpers/registry.js';

let rig: QueueRig;
const { chronos } = cliRunner(() => rig.namespace);
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

const MIN = 60_000;

/** Seeds the last fire of `name` at `atMs`, as the leader stores it when it enqueues a trigger. */
async function lastFired(name: string, atMs: number): Promise<void> {
  await rig.client.redis.hset(new QueueKeys(rig.namespace, 'reports').lastFired, name, String(atMs));
}

test('a last fire enqueued ahead of its instant is shown as due then and enqueued, never "in …"; a past one as "… ago"', async () => {
  await rig.inspector.addSchedule({ name: 'ahead', spec: '@every 1h', type: 'report', queue: 'reports' });
  await rig.inspector.addSchedule({ name: 'past', spec: '@every 1h', type: 'report', queue: 'reports' });
  const now = engineTime.now();
  await lastFired('ahead', now + 2 * MIN);
  // registered an hour ago (a fire before its registration is not its own: not shown)
  const stored = JSON.parse((await storedJson(rig.client.redis, rig.namespace, 'past'))!) as Record<string, unknown>;
  await rig.client.redis.hset(registryKey(rig.namespace, 'past'), 'past', JSON.stringify({ ...stored, registeredAt: now - 60 * MIN }));
  await lastFired('past', now - 3 * MIN - 10_000);
  const ls = await chronos('schedule', 'ls');
  expect([ls.code, ls.err]).toEqual([0, '']);
  const row = (name: string) => ls.out.split('\n').find((l) => l.includes(` ${name} `)) ?? '';
  const fired = (name: string) => row(name).split('│')[9]; // the "last fired" column
  expect(fired('ahead')).toMatch(/^ \d\d:\d\d:\d\d \(due in (1|2)m( \d+s)?, enqueued\)\s*$/);
  expect(fired('past')).toMatch(/^ \d\d:\d\d:\d\d \(3m( \d+s)? ago\)\s*$/);
  const show = await chronos('schedule', 'show', 'ahead');
  expect(show.out).toMatch(/last fired\s*│ \d\d:\d\d:\d\d \(due in (1|2)m( \d+s)?, enqueued\)/);
  expect(ls.out + show.out).not.toMatch(/last fired.*\(in /);
});
