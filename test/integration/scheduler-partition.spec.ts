// Issue 20, faults 2 and 7: a leader whose connection goes silent (a TCP proxy that stops
// forwarding without closing a socket) must step down by its own monotonic deadline — logging and
// emitting `leader.lost` then, not when Redis answers again — and, after the heal, fire nothing and
// report the loss once; a leader whose acquire reply came late must renew at once instead of
// losing the lease a moment later. Real child processes; one of them reaches Redis through the proxy.
import { jest } from '@jest/globals';
import { SchedulerKeys } from '../../lib/core/redis/keys.js';
import { SHARD_COUNT } from '../../lib/core/redis/protocol.js';
import { expectOnceEach, Fleet, nextAligned, waitTriggers } from '../helpers/fleet.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { within } from '../helpers/wait.js';

jest.setTimeout(90_000);

const TTL = 2000;
/** Slack on top of a protocol delay for a loaded machine (order and generous bounds only). */
const SLACK = 5000;
let fleet: Fleet;
let proxy: TcpProxy;

/** The fleet's Redis address, for the proxy's upstream. */
function target(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 6379) };
}

function count(text: string, re: RegExp): number {
  return text.match(new RegExp(re.source, 'g'))?.length ?? 0;
}

afterEach(async () => {
  await fleet.close();
  await proxy.close();
});

test('a leader whose socket goes silent steps down by its own deadline, before the heal; after it, it fires nothing until it takes the shard again and reports the loss once', async () => {
  fleet = new Fleet([{ name: 'tick', spec: '@every 1s' }], { LEADER_TTL_MS: TTL }, undefined, 'partition');
  proxy = await TcpProxy.start(target(fleet.url));
  // A leads through the proxy (its records go straight to Redis); B, on Redis directly, runs the tasks
  const a = await fleet.start('A', { REDIS_URL: proxy.url, RECORD_URL: fleet.url, WORKER: 0 });
  const first = await fleet.waitLeader();
  expect(first.child).toBe(a);
  await fleet.start('B');
  const T0 = nextAligned(Date.now(), 1000);
  await waitTriggers(fleet, 'tick', T0, T0 + 2000, { phase: 'fired' });

  proxy.blackhole();
  const blackholedAt = proxy.blackholedAt!;
  // the loss is reported while the socket is still silent: no reply can have driven it
  const lost = await within(fleet.lossOf(a, blackholedAt), 2 * TTL + SLACK, 'the silent leader to report the loss before the heal');
  expect(String(lost.reason)).toMatch(/lease expired by the local clock/);
  expect(lost.t as number).toBeGreaterThanOrEqual(blackholedAt);
  expect((lost.t as number) - blackholedAt).toBeLessThanOrEqual(TTL + SLACK);
  expect(a.output).toMatch(/Lost leadership/);
  const next = await fleet.waitLeader(blackholedAt, TTL + SLACK);
  expect(next.child).not.toBe(a);
  // silent for 2 × TTL, counted in triggers the new leader enqueued
  await waitTriggers(fleet, 'tick', T0, blackholedAt + 2 * TTL, { phase: 'fired' });
  const healedAt = Date.now();
  expect(lost.t as number).toBeLessThan(healedAt);
  proxy.heal();

  // four triggers after the heal: time for what A had queued on its socket to reach Redis
  await expectOnceEach(fleet, 'tick', T0, nextAligned(Date.now(), 1000) + 3000);
  const recs = await fleet.records();
  // of tick's shard: taken, lost once during the silence; after the heal A may take it back (B gives back
  // the shards it took last, so a blip does not swap owners), with a new term, and only then fire it
  const ofTick = (m: Record<string, unknown>) => m.event === 'leader' && (m.shards as number[]).includes(fleet.shardOf());
  const events = a.messages.filter(ofTick);
  expect(events.slice(0, 2).map((m) => m.acquired)).toEqual([true, false]);
  expect(events.slice(2).map((m) => m.acquired)).toEqual(events.length > 2 ? [true] : []);
  const retakenAt = (events[2]?.t as number | undefined) ?? Infinity;
  expect(retakenAt).toBeGreaterThanOrEqual(healedAt);
  expect(recs.filter((r) => r.phase === 'fired' && r.instance === 'A' && r.t >= healedAt && r.t < retakenAt)).toEqual([]);
  expect(count(a.output, /Lost leadership/)).toBe(1);
  expect(count(a.output, /publishing them again/)).toBeLessThanOrEqual(1);
  await fleet.stopAll();
});

// 0.7 × TTL late: less than half the lease is left when the reply comes (renew at once); 1.2 × TTL
// late: the lease is spent by the local clock when it comes (the acquire's deadline has passed: the
// next attempt finds the lease its own)
test.each([[0.7], [1.2]])('a leader whose acquire reply came %f × TTL late keeps the lease: one acquisition, no loss', async (late) => {
  const TTL7 = 3000;
  fleet = new Fleet([{ name: 'tick', spec: '@every 1s' }], { LEADER_TTL_MS: TTL7 }, undefined, 'late-acquire');
  proxy = await TcpProxy.start(target(fleet.url));
  // another holder's leases of every shard run out at a known instant, once A campaigns for them through the proxy
  const ghost = async (ms: number) => {
    const [sec, us] = await fleet.redis.time();
    const until = Number(sec) * 1000 + Math.floor(Number(us) / 1000) + ms;
    await fleet.redis.hset(
      new SchedulerKeys(fleet.ns).shards,
      Object.fromEntries([...Array(SHARD_COUNT).keys()].map((k) => [k, `ghost|1|${until}`])),
    );
  };
  await ghost(60_000);
  const a = await fleet.start('A', { REDIS_URL: proxy.url, RECORD_URL: fleet.url, WORKER: 0 });
  const ghostMs = 1500;
  const setAt = Date.now();
  await ghost(ghostMs); // A's next attempt comes right after they run out
  // silent from just before it runs out until `late` × TTL after: A's acquire is answered that late
  const expiresAt = setAt + ghostMs;
  await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - 200 - Date.now()))); // the time is the point: silence starts just before the ghost lease runs out
  expect(a.messages.filter((m) => m.event === 'leader')).toEqual([]);
  proxy.blackhole();
  await new Promise((r) => setTimeout(r, Math.max(0, expiresAt + late * TTL7 - Date.now()))); // the time is the point: the reply is held this late
  proxy.heal();
  const acquired = await fleet.waitLeader(0, TTL7 + SLACK);
  expect(acquired.child).toBe(a);
  // a few renewals later (counted in triggers it fired), it still holds the one leadership it took
  const T0 = nextAligned(acquired.t, 1000);
  await waitTriggers(fleet, 'tick', T0, T0 + 2 * TTL7, { phase: 'fired' });
  expect(a.messages.filter((m) => m.event === 'leader').map((m) => m.acquired)).toEqual([true]);
  expect(a.output).not.toMatch(/Lost leadership/);
  await fleet.stopAll();
});
