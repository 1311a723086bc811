// dist-cases B04 (Redis restarts empty), B10 (one instance's clock runs 3 s ahead) and B17 (DST
// fall-back with failovers inside the repeated hour, on a fake clock).
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { nextTriggers, parseSpec } from '../../lib/core/scheduler/spec.js';
import { alignedTriggers, expectOnceEach as expectOnce, Fleet, nextAligned, waitTriggers } from '../helpers/fleet.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';
import { Witness } from '../helpers/witness.js';
import { registryNames } from '../helpers/registry.js';

jest.setTimeout(120_000);

let fleet: Fleet | undefined;
let privateRedis: PrivateRedis | undefined;
let witness: Witness | undefined;
afterEach(async () => {
  await fleet?.close();
  await privateRedis?.kill();
  await witness?.close();
  fleet = undefined;
  privateRedis = undefined;
  witness = undefined;
});

test('B04: Redis restarts with no persistence: nobody crashes, a leader and the consumer group come back, later triggers once each', async () => {
  privateRedis = await PrivateRedis.start();
  witness = await Witness.start(); // on the shared test Redis, which stays up
  // records go to the shared test Redis so they survive the restart of the private one
  fleet = new Fleet([{ name: 'tick', spec: '@every 1s' }], { LEADER_TTL_MS: 1500, HEARTBEAT_MS: 500 }, privateRedis.url);
  const recordRedis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const recordKey = `${fleet.ns}-records:b04`;
  try {
    const a = await fleet.start('SW', { RECORD_URL: process.env.REDIS_URL ?? '', RECORD_KEY: recordKey });
    const w = await fleet.start('W', { SCHEDULER: 0, RECORD_URL: process.env.REDIS_URL ?? '', RECORD_KEY: recordKey });
    await fleet.waitLeader();
    const doneOnce = async (triggers: number[]) => {
      const recs = (await recordRedis.lrange(recordKey, 0, -1)).map((s) => JSON.parse(s) as { phase: string; triggerAt: number });
      const done = new Map<number, number>();
      for (const r of recs) if (r.phase === 'done') done.set(r.triggerAt, (done.get(r.triggerAt) ?? 0) + 1);
      return { done, all: triggers.every((t) => done.has(t)) };
    };
    const T0 = nextAligned(Date.now(), 1000);
    const before = alignedTriggers(T0, T0 + 3000, 1000);
    await waitFor(async () => (await doneOnce(before)).all, {
      what: `the triggers ${before.join(', ')} to be done before Redis goes down`,
      timeoutMs: 20_000,
    });
    await privateRedis.kill();
    const downAt = Date.now();
    // down for 3 s (2 × leaderTtl: the lease and every connection are gone). While Redis is down the
    // fleet records nothing (its loops retry quietly and log once per run of failures), so the
    // witness app on the shared Redis is what shows that 3 s of scheduler time have passed.
    await witness.reached(downAt + 3000, 'Redis down for 3 s');
    await privateRedis.restart();
    const backAt = Date.now();
    const releader = await fleet.waitLeader(backAt, 10_000);
    expect(releader.t - backAt).toBeLessThan(10_000);
    await waitFor(
      async () => {
        const groups = (await fleet!.redis.call('XINFO', 'GROUPS', new QueueKeys(fleet!.ns, 'default').stream)) as unknown[];
        return groups.length === 1;
      },
      'the consumer group to be recreated',
      10_000,
    );
    // every trigger from 3 s after Redis came back is done exactly once; nothing ever twice
    const expected = alignedTriggers(backAt + 3000, backAt + 7500, 1000);
    expect(expected.length).toBeGreaterThanOrEqual(4);
    await waitFor(async () => (await doneOnce(expected)).all, {
      what: `the triggers ${expected.join(', ')} after Redis came back to be done`,
      timeoutMs: backAt + 7500 - Date.now() + 15_000,
    });
    const { done } = await doneOnce(expected);
    expect(expected.filter((t) => done.get(t) !== 1)).toEqual([]);
    expect([...done].filter(([, n]) => n > 1)).toEqual([]);
    expect(a.alive && w.alive).toBe(true);
    // reconnect errors are rate-limited: no flood of error lines
    for (const c of [a, w]) expect((c.output.match(/ERROR/g) ?? []).length).toBeLessThan(20);
    await fleet.stopAll();
    expect(a.output + w.output).not.toMatch(/unhandledRejection/);
  } finally {
    await recordRedis.del(recordKey);
    recordRedis.disconnect();
  }
});

test('B10: an instance whose clock runs 3 s ahead never fires early and never double-fires across handovers', async () => {
  fleet = new Fleet([{ name: 'tick', spec: '@every 1s' }], { LEADER_TTL_MS: 1500 });
  const a = await fleet.start('A', { CLOCK_OFFSET_MS: 3000 });
  const leaderA = await fleet.waitLeader();
  expect(leaderA.child).toBe(a);
  await Promise.all([fleet.start('B'), fleet.start('C')]);
  const T0 = nextAligned(Date.now(), 1000);
  await waitTriggers(fleet, 'tick', T0, T0 + 3000); // four triggers under A's leadership
  a.kill('SIGKILL');
  const second = await fleet.waitLeader(Date.now());
  // the second leader leads until it has enqueued three triggers
  await waitFor(async () => (await fleet!.records()).filter((r) => r.phase === 'fired' && r.instance === second.child.name).length >= 3, {
    what: `${second.child.name} to fire three triggers`,
    timeoutMs: 15_000,
  });
  await fleet.start('A2', { CLOCK_OFFSET_MS: 3000 });
  // settled again: A2's share may include tick's shard (the second gives back the newest-taken first,
  // A's old ones); whoever leads it now is killed
  const holder = await fleet.waitLeader();
  holder.child.kill('SIGKILL');
  const third = await fleet.waitLeader(Date.now());
  const end = nextAligned(third.t, 1000) + 2000; // three triggers under the third leadership
  await expectOnce(fleet, 'tick', T0, end);
  // no task ran before its trigger instant (all processes share this machine's true clock for records)
  const starts = (await fleet.records()).filter((r) => r.phase === 'start');
  expect(starts.length).toBeGreaterThanOrEqual(alignedTriggers(T0, end, 1000).length);
  const early = starts.filter((r) => r.t < (r.triggerAt as number));
  expect(early).toEqual([]);
  await fleet.stopAll();
});

test('B17: DST fall-back with a leader failover inside the repeated hour: 30 1 * * * America/New_York fires once, at 01:30 EDT', async () => {
  const at = (iso: string) => Date.parse(iso);
  // `marker` (02:00 EST = 07:00Z) comes due only when the clock reaches 02:10 EST: its run is the
  // positive marker that the last leader's firing pass has gone past 01:30 EST
  const schedules = [
    { name: 'nightly', spec: '30 1 * * *', timeZone: 'America/New_York' },
    { name: 'marker', spec: '0 2 * * *', timeZone: 'America/New_York' },
  ];
  fleet = new Fleet(schedules, { LEADER_TTL_MS: 1500, FAKE_CLOCK: 1 });
  const setClock = (iso: string) => {
    for (const c of fleet!.children) if (c.alive) c.proc.send({ cmd: 'clock', at: at(iso) });
  };
  const start = at('2025-11-02T01:20:00-04:00');
  await fleet.start('A', { FAKE_CLOCK_AT: start });
  await fleet.start('B', { FAKE_CLOCK_AT: start });
  const first = await fleet.waitLeader();
  setClock('2025-11-02T01:29:59-04:00');
  const nightlyDone = async () => (await fleet!.records()).some((r) => r.phase === 'done' && r.schedule === 'nightly');
  await waitFor(nightlyDone, '01:30 EDT to fire', 10_000);
  setClock('2025-11-02T01:35:00-04:00');
  first.child.kill('SIGKILL');
  const second = await fleet.waitLeader(Date.now());
  setClock('2025-11-02T01:20:00-05:00'); // the second pass of the repeated hour
  second.child.kill('SIGKILL');
  const fresh = await fleet.start('C', { FAKE_CLOCK_AT: at('2025-11-02T01:20:00-05:00') });
  const third = await fleet.waitLeader(Date.now());
  expect(third.child).toBe(fresh);
  setClock('2025-11-02T02:10:00-05:00');
  // one firing pass plans every schedule: once marker's task has run (its records follow that pass's
  // fired records on C's one recording connection), a fire of 01:30 EST would have been recorded
  await waitFor(async () => (await fleet!.records()).some((r) => r.phase === 'done' && r.schedule === 'marker'), {
    what: 'the 02:00 EST marker trigger to run',
  });
  const recs = await fleet.records();
  expect(recs.filter((r) => r.phase === 'fired' && r.schedule === 'marker').map((r) => r.triggerAt)).toEqual([at('2025-11-02T07:00:00Z')]);
  const fired = recs.filter((r) => r.phase === 'fired' && r.schedule === 'nightly').map((r) => r.triggerAt as number);
  expect(fired).toEqual([1762061400000]); // 05:30Z = 01:30 EDT; never 06:30Z (01:30 EST)
  const spec = parseSpec('30 1 * * *', { timeZone: 'America/New_York' });
  expect(nextTriggers(spec, at('2025-11-02T02:10:00-05:00'), 1)).toEqual([at('2025-11-03T01:30:00-05:00')]);
  const last = await fleet.redis.hget(new QueueKeys(fleet.ns, 'default').lastFired, 'nightly');
  expect(Number(last)).toBe(1762061400000);
  expect(await registryNames(fleet.redis, fleet.ns)).toEqual(['marker', 'nightly']); // one definition each
  await fleet.stopAll();
});
