// dist-cases B04 (Redis restarts empty), B10 (one instance's clock runs 3 s ahead) and B17 (DST
// fall-back with failovers inside the repeated hour, on a fake clock).
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueKeys, SchedulerKeys } from '../../lib/core/redis/keys.js';
import { nextTriggers, parseSpec } from '../../lib/core/scheduler/spec.js';
import { alignedTriggers, expectOnceEach as expectOnce, Fleet, nextAligned } from '../helpers/fleet.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { until, waitFor } from '../helpers/wait.js';

jest.setTimeout(120_000);

let fleet: Fleet | undefined;
let privateRedis: PrivateRedis | undefined;
afterEach(async () => {
  await fleet?.close();
  await privateRedis?.kill();
  fleet = undefined;
  privateRedis = undefined;
});

test('B04: Redis restarts with no persistence: nobody crashes, a leader and the consumer group come back, later triggers once each', async () => {
  privateRedis = await PrivateRedis.start();
  // records go to the shared test Redis so they survive the restart of the private one
  fleet = new Fleet([{ name: 'tick', spec: '@every 1s' }], { LEADER_TTL_MS: 1500, HEARTBEAT_MS: 500 }, privateRedis.url);
  const recordRedis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const recordKey = `${fleet.ns}-records:b04`;
  try {
    const a = await fleet.start('SW', { RECORD_URL: process.env.REDIS_URL ?? '', RECORD_KEY: recordKey });
    const w = await fleet.start('W', { SCHEDULER: 0, RECORD_URL: process.env.REDIS_URL ?? '', RECORD_KEY: recordKey });
    await fleet.waitLeader();
    const T0 = nextAligned(Date.now(), 1000);
    await until(T0 + 3500);
    await privateRedis.kill();
    const downAt = Date.now();
    await until(downAt + 3000);
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
    await until(backAt + 9000);
    const recs = (await recordRedis.lrange(recordKey, 0, -1)).map((s) => JSON.parse(s) as { phase: string; triggerAt: number });
    const done = new Map<number, number>();
    for (const r of recs) if (r.phase === 'done') done.set(r.triggerAt, (done.get(r.triggerAt) ?? 0) + 1);
    // every trigger from 3 s after Redis came back is done exactly once; nothing ever twice
    const expected = alignedTriggers(backAt + 3000, Date.now() - 1500, 1000);
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
  await until(T0 + 4500);
  a.kill('SIGKILL');
  const second = await fleet.waitLeader(Date.now());
  await until(Date.now() + 3000);
  await fleet.start('A2', { CLOCK_OFFSET_MS: 3000 });
  second.child.kill('SIGKILL');
  await fleet.waitLeader(Date.now());
  await until(Date.now() + 4000);
  await expectOnce(fleet, 'tick', T0, Date.now() - 1000);
  // no task ran before its trigger instant (all processes share this machine's true clock for records)
  const early = (await fleet.records()).filter((r) => r.phase === 'start' && r.t < (r.triggerAt as number));
  expect(early).toEqual([]);
  await fleet.stopAll();
});

test('B17: DST fall-back with a leader failover inside the repeated hour: 30 1 * * * America/New_York fires once, at 01:30 EDT', async () => {
  const at = (iso: string) => Date.parse(iso);
  fleet = new Fleet([{ name: 'nightly', spec: '30 1 * * *', timeZone: 'America/New_York' }], { LEADER_TTL_MS: 1500, FAKE_CLOCK: 1 });
  const setClock = (iso: string) => {
    for (const c of fleet!.children) if (c.alive) c.proc.send({ cmd: 'clock', at: at(iso) });
  };
  const start = at('2025-11-02T01:20:00-04:00');
  await fleet.start('A', { FAKE_CLOCK_AT: start });
  await fleet.start('B', { FAKE_CLOCK_AT: start });
  const first = await fleet.waitLeader();
  setClock('2025-11-02T01:29:59-04:00');
  await waitFor(async () => (await fleet!.records()).some((r) => r.phase === 'done'), '01:30 EDT to fire', 10_000);
  setClock('2025-11-02T01:35:00-04:00');
  first.child.kill('SIGKILL');
  const second = await fleet.waitLeader(Date.now());
  setClock('2025-11-02T01:20:00-05:00'); // the second pass of the repeated hour
  second.child.kill('SIGKILL');
  const fresh = await fleet.start('C', { FAKE_CLOCK_AT: at('2025-11-02T01:20:00-05:00') });
  const third = await fleet.waitLeader(Date.now());
  expect(third.child).toBe(fresh);
  setClock('2025-11-02T02:10:00-05:00');
  await until(Date.now() + 1500);
  const fired = (await fleet.records()).filter((r) => r.phase === 'fired').map((r) => r.triggerAt as number);
  expect(fired).toEqual([1762061400000]); // 05:30Z = 01:30 EDT; never 06:30Z (01:30 EST)
  const spec = parseSpec('30 1 * * *', { timeZone: 'America/New_York' });
  expect(nextTriggers(spec, at('2025-11-02T02:10:00-05:00'), 1)).toEqual([at('2025-11-03T01:30:00-05:00')]);
  const last = await fleet.redis.hget(new QueueKeys(fleet.ns, 'default').lastFired, 'nightly');
  expect(Number(last)).toBe(1762061400000);
  expect(await fleet.redis.hlen(new SchedulerKeys(fleet.ns).schedules)).toBe(1);
  await fleet.stopAll();
});
