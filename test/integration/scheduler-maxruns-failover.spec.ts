// maxRuns across a failing leader, with real processes: a 1 s schedule with maxRuns on two or three
// scheduler-and-worker processes whose leader is SIGKILLed or SIGSTOPped in the middle of its runs.
// fire.lua counts a trigger atomically with its enqueue (README "Jitter, start and end, maxRuns"),
// so the fleet enqueues exactly maxRuns tasks, never one more or one less, whoever fires them, and
// the Inspector shows none left. The tests wait on records, never on the wall clock.
import { jest } from '@jest/globals';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { Fleet, nextAligned, waitTriggers, type LeaderEvent } from '../helpers/fleet.js';
import { countBy } from '../helpers/records.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

const TTL = 2000;
const MAX_RUNS = 8;
let fleet: Fleet;
let inspector: Inspector | undefined;
beforeEach(() => {
  fleet = new Fleet(
    [
      { name: 'lim', spec: '@every 1s', maxRuns: MAX_RUNS, queue: 'lim' },
      { name: 'tock', spec: '@every 1s', queue: 'tock' }, // a clock: its fires count trigger instants
    ],
    { LEADER_TTL_MS: TTL },
    undefined,
    'maxruns',
  );
});
afterEach(async () => {
  await inspector?.close();
  inspector = undefined;
  await fleet.close();
});

/** How many distinct lim tasks (one per trigger: the id is `lim:<trigger-unix>`) a handler finished. */
async function limRuns(): Promise<number> {
  return [...countBy(await fleet.records(), 'done').keys()].filter((id) => id.startsWith('lim:')).length;
}

/** Waits for maxRuns runs, then for three more trigger instants (by tock), and checks that none more was enqueued. */
async function expectExactlyMaxRuns(): Promise<void> {
  await waitFor(async () => (await limRuns()) >= MAX_RUNS, { what: `${MAX_RUNS} runs of lim`, timeoutMs: 30_000 });
  const lastLim = Math.max(
    ...(await fleet.records()).filter((r) => r.phase === 'done' && r.schedule === 'lim').map((r) => r.triggerAt as number),
  );
  await waitTriggers(fleet, 'tock', lastLim + 1000, lastLim + 3000, { phase: 'fired' });
  expect(await limRuns()).toBe(MAX_RUNS);
  inspector = new Inspector({ connection: fleet.url, namespace: fleet.ns });
  expect(await inspector.schedule('lim')).toMatchObject({ maxRuns: MAX_RUNS, runsLeft: 0, ended: 'max-runs', next: [] });
}

/** The leader of lim's shard, once it fired a lim trigger. */
async function leaderAfterAFire(): Promise<LeaderEvent> {
  const first = await fleet.waitLeader();
  const T0 = nextAligned(Date.now(), 1000);
  await waitFor(
    async () =>
      (await fleet.records()).filter((r) => r.phase === 'fired' && r.schedule === 'lim' && (r.triggerAt as number) >= T0).length >= 1,
    'a lim trigger fired',
  );
  return first;
}

test('maxRuns: the leader SIGKILLed in the middle of the runs → exactly maxRuns tasks fleet-wide; runsLeft 0', async () => {
  for (const n of ['A', 'B']) await fleet.start(n);
  const first = await leaderAfterAFire();
  const killedAt = Date.now();
  first.child.kill('SIGKILL');
  await first.child.exited;
  const next = await fleet.waitLeader(killedAt, TTL * 5);
  expect(next.child).not.toBe(first.child);
  expect(await limRuns()).toBeLessThan(MAX_RUNS); // the new leader fires some of them
  await expectExactlyMaxRuns();
  await fleet.stopAll();
});

test('maxRuns: the leader SIGSTOPped past its lease, then SIGCONT → exactly maxRuns tasks fleet-wide; runsLeft 0', async () => {
  for (const n of ['A', 'B', 'C']) await fleet.start(n);
  const first = await leaderAfterAFire();
  const stoppedAt = Date.now();
  first.child.kill('SIGSTOP');
  const next = await fleet.waitLeader(stoppedAt, TTL * 5);
  expect(next.child).not.toBe(first.child);
  expect(await limRuns()).toBeLessThan(MAX_RUNS); // the new leader fires some of them
  // the stopped leader wakes three trigger instants into the new leadership: any stale fire of it shows up
  await waitTriggers(fleet, 'tock', nextAligned(next.t, 1000), nextAligned(next.t, 1000) + 2000, { phase: 'fired' });
  first.child.kill('SIGCONT');
  await fleet.lossOf(first.child, first.t);
  await expectExactlyMaxRuns();
  await fleet.stopAll();
});
