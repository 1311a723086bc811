// dist-cases B02, B11, B13, B15, B20: many replicas, two apps on one Redis, restarts, a failing
// trigger, slow and doubled ticks — each trigger still enqueued exactly once.
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { expectOnceEach as expectOnce, Fleet, nextAligned, perTrigger, waitTriggers } from '../helpers/fleet.js';
import { waitFor } from '../helpers/wait.js';
import { redisUrl } from '../helpers/redis.js';
import { registrySize, storedJson } from '../helpers/registry.js';

jest.setTimeout(90_000);

const fleets: Fleet[] = [];
function fleet(...args: ConstructorParameters<typeof Fleet>): Fleet {
  const f = new Fleet(...args);
  fleets.push(f);
  return f;
}
afterEach(async () => {
  await Promise.all(fleets.splice(0).map((f) => f.close()));
});

test('B02: five replicas register the same schedule: one definition, one enqueue per trigger, no error flood', async () => {
  const f = fleet([{ name: 'report', spec: '@every 2s' }], { LEADER_TTL_MS: 2000 });
  await Promise.all(['A', 'B', 'C', 'D', 'E'].map((n) => f.start(n)));
  await f.waitLeader();
  const T0 = nextAligned(Date.now(), 2000);
  await expectOnce(f, 'report', T0, T0 + 8000, 2000); // five triggers, once each
  expect(await registrySize(f.redis, f.ns)).toBe(1);
  await f.stopAll();
  expect(f.children).toHaveLength(5);
  for (const c of f.children) expect(c.output).not.toMatch(/ERROR/);
});

test('B11: two apps (namespaces) on one Redis with the same schedule and task names never see each other', async () => {
  const alpha = fleet([{ name: 'tick', spec: '@every 1s', type: 'send' }], { LEADER_TTL_MS: 1500 }, undefined, 'alpha');
  const beta = fleet([{ name: 'tick', spec: '@every 1s', type: 'send' }], { LEADER_TTL_MS: 1500 }, undefined, 'beta');
  await Promise.all([alpha.start('A1'), alpha.start('A2'), beta.start('B1'), beta.start('B2')]);
  const [la] = await Promise.all([alpha.waitLeader(), beta.waitLeader()]);
  const T0 = nextAligned(Date.now(), 1000);
  await Promise.all([alpha, beta].map((f) => waitTriggers(f, 'tick', T0, T0 + 3000)));
  la.child.kill('SIGKILL'); // app 1 loses its leader: app 2's trigger sequence is not affected
  const next = await alpha.waitLeader(Date.now());
  const end = Math.max(T0 + 6000, nextAligned(next.t, 1000) + 2000); // past app 1's hand-over
  await expectOnce(alpha, 'tick', T0, end, 1000);
  await expectOnce(beta, 'tick', T0, end, 1000);
  // each app's handlers ran only its own tasks (records go to per-app lists; instances are per app):
  // fired, start and done of each trigger in [T0, end] at least
  const triggers = (end - T0) / 1000 + 1;
  for (const [f, initial] of [
    [alpha, 'A'],
    [beta, 'B'],
  ] as const) {
    const recs = await f.records();
    expect(recs.length).toBeGreaterThanOrEqual(3 * triggers);
    expect(recs.filter((r) => !r.instance.startsWith(initial))).toEqual([]);
  }
  // every key either app created starts with its namespace, and one script's keys share a hash tag
  const r = new Redis(redisUrl());
  try {
    for (const f of [alpha, beta]) {
      const keys = (await r.scan('0', 'MATCH', `*${f.ns}*`, 'COUNT', 100_000))[1].filter((k) => k !== f.recordKey);
      expect(keys.length).toBeGreaterThan(5);
      for (const k of keys) expect(k.startsWith(`${f.ns}:`)).toBe(true);
      const q = new QueueKeys(f.ns, 'default');
      for (const k of [q.stream, q.lastFired, q.dedup('tick:1'), q.retry]) expect(k).toContain(`{${f.ns}:default}`);
    }
    // deleting all of app 1's keys does not disturb app 2
    const [, alphaKeys] = await r.scan('0', 'MATCH', `${alpha.ns}:*`, 'COUNT', 100_000);
    await r.del(...alphaKeys);
    const T1 = nextAligned(Date.now(), 1000);
    await expectOnce(beta, 'tick', T0, T1 + 1000, 1000);
  } finally {
    r.disconnect();
  }
  await Promise.all([alpha.stopAll(), beta.stopAll()]);
});

test('B13: restarting an instance 5 times (new metadata each boot) keeps one schedule and one enqueue per trigger', async () => {
  const schedules = (build: number) => [{ name: 'tick', spec: '@every 1s', payload: { build } }];
  const f = fleet(schedules(0), { LEADER_TTL_MS: 1500 });
  const T0 = nextAligned(Date.now(), 1000);
  for (let build = 1; build <= 5; build++) {
    const c = await f.start(`boot${build}`, { SCHEDULES: JSON.stringify(schedules(build)) });
    await f.waitLeader(0);
    // each boot leads until it has enqueued a trigger of its own
    await waitFor(async () => (await f.records()).some((r) => r.phase === 'fired' && r.instance === c.name), {
      what: `${c.name} to fire a trigger`,
      timeoutMs: 15_000,
    });
    c.kill('SIGTERM');
    expect((await c.exited).code).toBe(0);
  }
  await f.start('final', { SCHEDULES: JSON.stringify(schedules(6)) });
  const tail = nextAligned(Date.now(), 1000);
  await expectOnce(f, 'tick', tail, tail + 3000, 1000);
  const recs = await f.records();
  const doneSinceT0 = [...perTrigger(recs, 'tick', 'done')].filter(([t]) => t >= T0);
  expect(doneSinceT0.length).toBeGreaterThanOrEqual(5 + 3); // one per boot, and the tail's four (its first may be boot 5's)
  expect(doneSinceT0.filter(([, n]) => n > 1)).toEqual([]);
  expect(await registrySize(f.redis, f.ns)).toBe(1);
  expect(JSON.parse((await storedJson(f.redis, f.ns, 'tick'))!).payload).toBe('{"build":6}');
  // no growing set of future triggers: nothing is pre-created
  const q = new QueueKeys(f.ns, 'default');
  expect(await f.redis.zcard(q.scheduled)).toBe(0);
  await f.stopAll();
});

test('B15: a failed trigger does not block later ones; dedup keys are per trigger and expire', async () => {
  const f = fleet([{ name: 'report', spec: '@every 1s', maxRetry: 0 }], { LEADER_TTL_MS: 1500, FAIL_FIRST: 1 });
  await f.start('A');
  await f.waitLeader();
  const first = await waitFor(async () => (await f.records()).find((r) => r.phase === 'start'), 'the first trigger to run');
  const T0 = (first.triggerAt as number) + 1000;
  await expectOnce(f, 'report', T0, T0 + 3000, 1000);
  const q = new QueueKeys(f.ns, 'default');
  expect(await f.redis.zrange(q.dead, 0, -1)).toEqual([first.id]);
  const dedupKeys = (await f.redis.scan('0', 'MATCH', q.dedup('report:*'), 'COUNT', 10_000))[1];
  expect(dedupKeys.length).toBeGreaterThan(4);
  for (const k of dedupKeys) {
    const ttl = await f.redis.pttl(k);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60 * 60_000 + 60_000); // catch-up window (1 h) + 1 min: bounded, never forever
  }
  await f.stopAll();
});

test('B20: slow (blocked event loop) and doubled ticks: each trigger once, no drift', async () => {
  const f = fleet([{ name: 'tick', spec: '@every 1s' }], { LEADER_TTL_MS: 3000, TICK_HOOK: 1 });
  await f.start('A');
  await f.waitLeader();
  const T0 = nextAligned(Date.now(), 1000);
  await expectOnce(f, 'tick', T0, T0 + 13_000, 1000); // fourteen triggers through slow and doubled ticks
  await f.stopAll();
});
