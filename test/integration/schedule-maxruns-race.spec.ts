// Two writers race on a schedule's maxRuns: A drops it, B sets it again, and A's last step (the
// fence, then the deletion of the runs counter: registry.ts dropStaleRuns) comes after B's change
// and after the leader fired under it (A paused between its registry write and that step: a GC
// pause, a slow network). The counter B's runs are counted in must not be deleted: before, it was,
// and the schedule ran maxRuns more times on top of what it had run. Real Redis, the real scripts
// and admin functions; the leader's fires are fire.lua calls, so the interleaving is exact.
import type { Redis } from 'ioredis';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { fireScript, type FireTrigger } from '../../lib/core/redis/commands/schedule.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { FIRE_MODE, newMeta } from '../../lib/core/redis/protocol.js';
import { dropStaleRuns, raiseFences } from '../../lib/core/scheduler/registry.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { versionOf } from '../helpers/registry.js';

const MAX_RUNS = 3;
let ns: string;
let inspector: Inspector;
beforeEach(() => {
  ns = newNamespace('runs');
  inspector = new Inspector({ connection: redisUrl(), namespace: ns });
});
afterEach(async () => {
  await inspector.close();
  await deleteNamespace(ns);
});

/** A trigger of `schedule` at `triggerAt`, as the leader plans it under `generation` with the schedule's maxRuns. */
function trigger(schedule: string, triggerAt: number, generation: number): FireTrigger {
  return {
    schedule,
    triggerAt,
    type: 't',
    payload: 'null',
    meta: JSON.stringify(newMeta(3, 0, triggerAt)),
    dedupTtlMs: 60_000,
    mode: FIRE_MODE.allowOverlap,
    generation,
    maxRuns: MAX_RUNS,
  };
}

test('a writer that dropped maxRuns and is late with its fence does not delete the counter of the maxRuns set after it (A’s step landing after 0 to 3 of B’s runs)', async () => {
  const client = inspector.redis as Redis;
  const keys = new QueueKeys(ns, 'q');
  const def = { spec: '@every 1s', queue: 'q', type: 't' };
  const enqueued: Record<string, number> = {};
  for (let late = 0; late <= MAX_RUNS; late++) {
    const name = `m${late}`;
    await inspector.addSchedule({ name, ...def, maxRuns: MAX_RUNS });
    // A drops maxRuns (its registry write; its fence and counter deletion are replayed late below)
    await inspector.addSchedule({ name, ...def });
    const a = await versionOf(client, ns, name);
    // B sets it again, wholly; the leader then fires under B's generation
    await inspector.addSchedule({ name, ...def, maxRuns: MAX_RUNS });
    const b = await versionOf(client, ns, name);
    expect(b).toBeGreaterThan(a);
    let t = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    const fire = async () => (await fireScript(client, keys, undefined, 0, [trigger(name, (t += 1000), b)])).results[0];
    const results: string[] = [];
    for (let i = 0; i < late; i++) results.push(await fire());
    // A's late step: its fence (lower than B's: a no-op) and the counter deletion for its definition without maxRuns
    const fences = [{ schedule: name, queue: 'q', generation: a }];
    await raiseFences(client, ns, fences);
    await dropStaleRuns(client, ns, fences, () => ({ queue: 'q', maxRuns: undefined }));
    for (let i = late; i < MAX_RUNS + 3; i++) results.push(await fire());
    enqueued[name] = results.filter((r) => r === 'enqueued').length;
  }
  expect(enqueued).toEqual({ m0: MAX_RUNS, m1: MAX_RUNS, m2: MAX_RUNS, m3: MAX_RUNS });
});
