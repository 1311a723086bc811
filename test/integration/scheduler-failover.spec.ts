// The scheduler issue's three-process tests and dist-cases B01, B03: a 1 s schedule on three
// scheduler-and-worker processes; the leader is SIGKILLed, SIGTERMed, SIGSTOPped. Every trigger
// second must be enqueued exactly once and none may be missing.
import { jest } from '@jest/globals';
import { expectOnceEach, Fleet, nextAligned } from '../helpers/fleet.js';
import { until, waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

const TTL = 2000;
let fleet: Fleet;
beforeEach(() => {
  fleet = new Fleet([{ name: 'tick', spec: '@every 1s' }], { LEADER_TTL_MS: TTL });
});
afterEach(async () => {
  await fleet.close();
});

test('B01: leader SIGKILLed → a new leader within TTL + renew interval; each trigger exactly once, none missing', async () => {
  for (const n of ['A', 'B', 'C']) await fleet.start(n);
  const first = await fleet.waitLeader();
  const T0 = nextAligned(Date.now(), 1000);
  await until(T0 + 4500);
  const killedAt = Date.now();
  first.child.kill('SIGKILL');
  const next = await fleet.waitLeader(killedAt);
  expect(next.child).not.toBe(first.child);
  expect(next.t - killedAt).toBeLessThanOrEqual(TTL + TTL / 2 + 500);
  await until(T0 + 10_500);
  const end = Date.now();
  await expectOnceEach(fleet, 'tick', T0, end - 1000);
  // the triggers that came due while the dead leader still held the lease were fired late, by catch-up
  const recs = await fleet.records();
  const lateness = recs
    .filter((r) => r.phase === 'fired' && (r.triggerAt as number) > killedAt - 1000 && (r.triggerAt as number) < killedAt + TTL)
    .map((r) => r.t - (r.triggerAt as number));
  expect(Math.max(...lateness)).toBeLessThanOrEqual(TTL + 1000);
  await fleet.stopAll();
});

test('leader SIGTERMed → it resigns and a follower leads within 500 ms; no gap, no duplicate', async () => {
  for (const n of ['A', 'B', 'C']) await fleet.start(n);
  const first = await fleet.waitLeader();
  const T0 = nextAligned(Date.now(), 1000);
  await until(T0 + 3300);
  const stoppedAt = Date.now();
  first.child.kill('SIGTERM');
  const next = await fleet.waitLeader(stoppedAt);
  expect(next.t - stoppedAt).toBeLessThan(500);
  expect((await first.child.exited).code).toBe(0);
  await until(T0 + 7500);
  await expectOnceEach(fleet, 'tick', T0, Date.now() - 1000);
  await fleet.stopAll();
});

test('B03: leader SIGSTOPped for 3 × TTL then SIGCONT → it steps down; still no trigger twice, none missing', async () => {
  for (const n of ['A', 'B', 'C']) await fleet.start(n);
  const first = await fleet.waitLeader();
  const T0 = nextAligned(Date.now(), 1000);
  await until(T0 + 2500);
  const stoppedAt = Date.now();
  first.child.kill('SIGSTOP');
  const next = await fleet.waitLeader(stoppedAt);
  expect(next.child).not.toBe(first.child);
  await until(stoppedAt + 3 * TTL);
  first.child.kill('SIGCONT');
  // it says it lost leadership, and never reports itself leader alongside the new one
  const lost = await first.child.message((m) => m.event === 'leader' && m.acquired === false);
  expect(String(lost.reason)).toMatch(/lease expired by the local clock|token mismatch/);
  await until(T0 + 12_500);
  await expectOnceEach(fleet, 'tick', T0, Date.now() - 1000);
  expect(first.child.output).toMatch(/Lost leadership/);
  await fleet.stopAll();
});

test("B03b: the leader's event loop blocked for 3 × TTL by a busy loop → it steps down when it wakes; no trigger twice, none missing", async () => {
  for (const n of ['A', 'B', 'C']) await fleet.start(n);
  const first = await fleet.waitLeader();
  const T0 = nextAligned(Date.now(), 1000);
  await until(T0 + 2500);
  const blockedAt = Date.now();
  first.child.proc.send({ cmd: 'block', ms: 3 * TTL });
  const next = await fleet.waitLeader(blockedAt);
  expect(next.child).not.toBe(first.child);
  const lost = await first.child.message((m) => m.event === 'leader' && m.acquired === false);
  expect(String(lost.reason)).toMatch(/lease expired by the local clock|token mismatch/);
  await until(T0 + 11_500);
  await expectOnceEach(fleet, 'tick', T0, Date.now() - 1000);
  await fleet.stopAll();
});
