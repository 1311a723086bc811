// Issue 25 items 1 and 2 (docs/scheduler-shards.md): the schedules are spread over 16 shards, each
// with a due index and a lease, led by the fleet's instances in fair shares. Real child processes
// (test/fixtures/scheduler-node.ts), SIGKILLed and SIGTERMed; the tests wait on recorded triggers.
import { jest } from '@jest/globals';
import { SHARD_COUNT } from '../../lib/core/redis/protocol.js';
import { shardOf } from '../../lib/core/redis/keys.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { alignedTriggers, Fleet, nextAligned, perTrigger, waitTriggers } from '../helpers/fleet.js';

jest.setTimeout(90_000);

const TTL = 2000;
/** 48 schedules every second, named so that every shard holds some. */
const SCHEDULES = Array.from({ length: 48 }, (_, i) => ({ name: `s${i}`, spec: '@every 1s' }));
let fleet: Fleet;
beforeEach(() => {
  fleet = new Fleet(SCHEDULES, { LEADER_TTL_MS: TTL });
});
afterEach(async () => {
  await fleet.close();
});

/**
 * Every trigger of every schedule in [from, to] done exactly once and enqueued once. "Enqueued" is read
 * from the schedule's fire history, which fire.lua writes in the same script as the enqueue: a process's
 * own 'fired' record comes after it, and a SIGKILL in between loses that record, not the trigger.
 */
async function expectEachOnce(from: number, to: number): Promise<void> {
  for (const { name } of SCHEDULES) await waitTriggers(fleet, name, from, to);
  const recs = await fleet.records();
  const expected = alignedTriggers(from, to, 1000);
  const wrong: string[] = [];
  const inspector = new Inspector({ connection: fleet.url, namespace: fleet.ns });
  const histories = await Promise.all(SCHEDULES.map(({ name }) => inspector.scheduleHistory(name, 100))).finally(() => inspector.close());
  for (const [i, { name }] of SCHEDULES.entries()) {
    const done = perTrigger(recs, name, 'done');
    const fired = new Map<number, number>();
    for (const h of histories[i]) if (h.outcome === 'enqueued') fired.set(h.triggerAt, (fired.get(h.triggerAt) ?? 0) + 1);
    for (const t of expected)
      if (done.get(t) !== 1 || fired.get(t) !== 1) wrong.push(`${name}@${t}: done ${done.get(t) ?? 0} fired ${fired.get(t) ?? 0}`);
  }
  expect(wrong).toEqual([]);
}

test('a fleet of one leads all 16 shards and fires every schedule of every shard', async () => {
  expect(new Set(SCHEDULES.map((s) => shardOf(s.name))).size).toBe(SHARD_COUNT); // the names cover every shard
  await fleet.start('A');
  await fleet.waitBalanced();
  const T0 = nextAligned(Date.now(), 1000);
  await expectEachOnce(T0, T0 + 3000);
  await fleet.stopAll();
});

test('three instances share the shards fairly; the shards of a SIGKILLed one are led again, and every trigger fires once', async () => {
  for (const n of ['A', 'B', 'C']) await fleet.start(n);
  const led = await fleet.waitBalanced();
  const T0 = nextAligned(Date.now(), 1000);
  await waitTriggers(fleet, 's0', T0, T0 + 2000, { phase: 'fired' });
  const [victim, shards] = [...led.entries()].find(([c]) => c.name === 'B')!;
  const killedAt = Date.now();
  victim.kill('SIGKILL');
  await victim.exited;
  // its shards are taken by the two others, in fair shares again
  const after = await fleet.waitBalanced();
  for (const k of shards) expect([...after.values()].some((s) => s.has(k))).toBe(true);
  const retakenAt = Math.max(
    ...fleet
      .leaderEvents()
      .filter((e) => e.acquired && e.t >= killedAt)
      .map((e) => e.t),
  );
  await expectEachOnce(T0, nextAligned(retakenAt, 1000) + 3000);
  await fleet.stopAll();
});

test('an instance that stops hands over only its own shards, at once; one that joins takes its share', async () => {
  await fleet.start('A');
  await fleet.start('B');
  const two = await fleet.waitBalanced();
  const [a, aShards] = [...two.entries()].find(([c]) => c.name === 'A')!;
  const bShards = [...two.entries()].find(([c]) => c.name === 'B')![1];
  const stoppedAt = Date.now();
  a.kill('SIGTERM');
  await a.exited;
  const one = await fleet.waitBalanced();
  // B kept what it led (no lost event for its own shards) and took A's
  const bLost = fleet.leaderEvents().filter((e) => e.child.name === 'B' && !e.acquired && e.t >= stoppedAt);
  expect(bLost).toEqual([]);
  expect([...one.values()][0].size).toBe(SHARD_COUNT);
  for (const k of [...aShards, ...bShards]) expect([...one.values()][0].has(k)).toBe(true);
  const T0 = nextAligned(Date.now(), 1000);
  await fleet.start('C');
  await fleet.waitBalanced();
  await expectEachOnce(T0, nextAligned(Date.now(), 1000) + 2000);
  await fleet.stopAll();
});
