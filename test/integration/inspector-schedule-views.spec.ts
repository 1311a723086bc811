// An Inspector keeps the specs of its schedule views between calls (admin/schedules.ts: a warm view
// compiles none and asks croner for none of their next triggers). What it keeps must never show a
// trigger that has passed, nor the wrong count.
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

let rig: QueueRig;
let inspector: Inspector;
beforeEach(() => {
  rig = new QueueRig();
  inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace });
});
afterEach(async () => {
  await inspector.close();
  await rig.close();
});

test('a warm view lists the triggers after its own now: the kept specs follow the clock and the count asked', async () => {
  await inspector.addSchedule({ name: 'tick', spec: '@every 1s', queue: 'jobs', type: 't' });
  await inspector.addSchedule({ name: 'tock', spec: { every: 2000, offset: 1000 }, queue: 'jobs', type: 't' });
  const first = await inspector.schedules(3);
  const firstNext = first.map((s) => s.next[0]);
  // no leader fires them: a view taken once the listed first triggers have passed must list later ones
  const later = await waitFor(async () => {
    const v = await inspector.schedules(3);
    return v.every((s, i) => s.next[0] > firstNext[i]) ? v : undefined;
  }, 'views past the first listed triggers');
  const [sec, us] = await rig.client.redis.time();
  const now = Number(sec) * 1000 + Math.floor(Number(us) / 1000);
  for (const s of later) {
    expect(s.next).toHaveLength(3);
    expect(s.next[0]).toBeGreaterThan(now - 1000); // after the view's own now (taken before this read)
    const period = s.name === 'tick' ? 1000 : 2000;
    expect(s.next[1] - s.next[0]).toBe(period);
    expect(s.next[2] - s.next[1]).toBe(period);
  }
  // another count from the same kept specs
  const five = await inspector.schedules(5);
  for (const s of five) expect(s.next).toHaveLength(5);
  expect((await inspector.schedules(0)).every((s) => s.next.length === 0)).toBe(true);
});
