// An Inspector whose liveness window is shorter than the fleet's heartbeats (the CLI always uses
// the default 15 s; an app may run `heartbeatInterval: 30_000`) must not take a live instance for
// dead: before, it listed its code-declared schedules as orphaned (stats: SILENT, "0 alive") while
// they fired, and `removeSchedule` / `chronos schedule rm` removed one without --force, so it
// stopped firing until a replica restarted. An instance's declaration lives 3 of its own
// heartbeats: while it does, the instance is alive. Real process: the fleet's fixture.
import { jest } from '@jest/globals';
import { InspectorContext } from '../../lib/core/admin/context.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { removeSchedules } from '../../lib/core/admin/schedule-bulk.js';
import { SchedulerKeys } from '../../lib/core/redis/keys.js';
import { ChronosStateError } from '../../lib/core/runtime/errors.js';
import { Fleet } from '../helpers/fleet.js';
import { storedJson } from '../helpers/registry.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(60_000);

const WINDOW_MS = 1000; // the Inspector's window, shorter than the fleet's 3 × 20 s
let fleet: Fleet;
let inspector: Inspector;
beforeEach(() => {
  fleet = new Fleet([{ name: 'tick', spec: '@every 1s' }], { HEARTBEAT_MS: 20_000 });
  inspector = new Inspector({ connection: fleet.url, namespace: fleet.ns, livenessWindow: WINDOW_MS });
});
afterEach(async () => {
  await inspector.close();
  await fleet.close();
});

test('an instance whose last heartbeat is older than the window but whose declaration lives is alive: its schedules are not orphaned, not removable without force', async () => {
  await fleet.start('A');
  const keys = new SchedulerKeys(fleet.ns);
  // past the Inspector's window since A's last heartbeat (its next is 20 s after it)
  await waitFor(async () => {
    const [s, us] = await fleet.redis.time();
    const now = Number(s) * 1000 + Math.floor(Number(us) / 1000);
    return now - Number(await fleet.redis.zscore(keys.instances, 'A')) > WINDOW_MS;
  }, "A's last heartbeat to be older than the Inspector's window");
  expect(await fleet.redis.exists(keys.declaration('A'))).toBe(1);

  expect((await inspector.instances()).map((i) => [i.instance, i.alive])).toEqual([['A', true]]);
  const s = await inspector.schedule('tick');
  expect({ orphaned: s.orphaned, declaredBy: s.declaredBy.map((d) => [d.instance, d.alive]) }).toEqual({
    orphaned: false,
    declaredBy: [['A', true]],
  });
  await expect(inspector.removeSchedule('tick')).rejects.toThrow(ChronosStateError);
  // the bulk removal's guard (Scheduler.removeSchedules) reads liveness the same way
  await expect(removeSchedules(new InspectorContext(fleet.redis, fleet.ns, WINDOW_MS, 'test'), ['tick'])).rejects.toThrow(
    ChronosStateError,
  );
  expect(await storedJson(fleet.redis, fleet.ns, 'tick')).not.toBeNull();
  await fleet.stopAll();
});
