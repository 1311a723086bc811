// Catch-up of triggers missed while nobody led (the scheduler issue and dist-cases B12): stop every
// instance, start again later → `all` fires each missed trigger once (with its original trigger
// instant), `latest` only the newest, `none` nothing; later triggers continue.
import { jest } from '@jest/globals';
import { alignedTriggers, Fleet, nextAligned, perTrigger, waitTriggers } from '../helpers/fleet.js';
import type { Rec } from '../helpers/records.js';
import { waitFor } from '../helpers/wait.js';
import { Witness } from '../helpers/witness.js';

jest.setTimeout(90_000);

let fleet: Fleet;
let witness: Witness | undefined;
afterEach(async () => {
  await fleet.close();
  await witness?.close();
  witness = undefined;
});

/** The newest trigger of `schedule` the old fleet enqueued before it went down at `downAt`. */
function lastFiredBefore(recs: Rec[], schedule: string, downAt: number): number {
  const fired = recs.filter((r) => r.phase === 'fired' && r.schedule === schedule && r.t < downAt).map((r) => r.triggerAt as number);
  expect(fired.length).toBeGreaterThan(0);
  return Math.max(...fired);
}

test('catch-up policies all / latest / none after the whole fleet was down for 5 triggers; two instances restarting together fire once', async () => {
  witness = await Witness.start();
  fleet = new Fleet(
    [
      { name: 'all', spec: '@every 1s' },
      { name: 'latest', spec: '@every 1s', catchUp: 'latest' },
      { name: 'none', spec: '@every 1s', catchUp: 'none' },
    ],
    { LEADER_TTL_MS: 1500 },
  );
  await Promise.all([fleet.start('A1'), fleet.start('B1')]);
  await fleet.waitLeader();
  const T0 = nextAligned(Date.now(), 1000);
  for (const name of ['all', 'latest', 'none']) await waitTriggers(fleet, name, T0, T0 + 2000);
  await fleet.stopAll();
  const downAt = Date.now();
  const before = await fleet.records();
  const newestBefore = Math.max(...['all', 'latest', 'none'].map((name) => lastFiredBefore(before, name, downAt)));
  // down until 5 triggers after the last one the old fleet enqueued (up to half a period ahead) have
  // come due: the witness app on the same Redis has passed the fifth
  await witness.reached(newestBefore + 5000, 'five triggers due while nobody leads');
  const upAt = Date.now();
  await Promise.all([fleet.start('A2'), fleet.start('B2')]); // booting together
  const acquired = await fleet.waitLeader(upAt);
  // the first to lead takes every shard, and gives half back when the other's membership is in: a
  // schedule's skips are logged by whichever of the two planned its shard first
  const restarted = fleet.children.filter((c) => c.name === 'A2' || c.name === 'B2');
  const logs = () => restarted.map((c) => c.output).join('\n');
  // the triggers that came due while nobody led: after the last one the old fleet enqueued, up to
  // the new leader's acquisition
  const missedOf = (name: string) => alignedTriggers(lastFiredBefore(before, name, downAt) + 1, acquired.t, 1000);
  const missed = missedOf('all');
  expect(missed.length).toBeGreaterThanOrEqual(5);
  // two triggers after the acquisition, fired by the new leader for every policy
  const later = alignedTriggers(acquired.t + 1, nextAligned(acquired.t, 1000) + 1000, 1000);
  expect(later).toHaveLength(2);

  await waitFor(
    async () => {
      const recs = await fleet.records();
      const done = perTrigger(recs, 'all', 'done');
      const laterFired = ['latest', 'none'].every((name) => later.every((t) => perTrigger(recs, name, 'fired').has(t)));
      const logged =
        /Skipped \d+ missed trigger\(s\) \(schedule=latest/.test(logs()) && /Skipped \d+ missed trigger\(s\) \(schedule=none/.test(logs());
      return [...missed, ...later].every((t) => done.has(t)) && laterFired && logged;
    },
    { what: 'the missed and later triggers of `all` done, the later ones of `latest`/`none` fired, the skips logged', timeoutMs: 15_000 },
  );
  const final = await fleet.records();
  for (const name of ['all', 'latest', 'none']) {
    expect([...perTrigger(final, name, 'fired')].filter(([, n]) => n > 1)).toEqual([]); // never twice
  }
  const fired = (name: string) => new Set(perTrigger(final, name, 'fired').keys());
  // all: each missed trigger once, with its original trigger instant, in order
  expect(missed.filter((t) => !fired('all').has(t))).toEqual([]);
  const allOrder = final.filter((r) => r.phase === 'fired' && r.schedule === 'all').map((r) => r.triggerAt as number);
  expect(allOrder.length).toBeGreaterThanOrEqual(missed.length + later.length);
  expect(allOrder).toEqual([...allOrder].sort((a, b) => a - b));
  // latest and none: the triggers due before anyone restarted (<= upAt) came due while nobody led,
  // for sure; one due between the acquisition and the new leader's first tick is on time by the
  // plan's rules (so `latest` fires it instead of an older missed one), which the test cannot time
  // from outside: each policy is judged from the first trigger it fired after the gap
  const firstAfterGap = (name: string) => Math.min(...[...fired(name)].filter((t) => t > lastFiredBefore(before, name, downAt)));
  const skippedBefore = (name: string) => alignedTriggers(lastFiredBefore(before, name, downAt) + 1, firstAfterGap(name) - 1, 1000);
  // latest: only the newest trigger due at the first tick; every older missed one skipped
  const sureLatest = alignedTriggers(lastFiredBefore(before, 'latest', downAt) + 1, upAt, 1000);
  expect(sureLatest.length).toBeGreaterThanOrEqual(5);
  expect(firstAfterGap('latest')).toBeGreaterThanOrEqual(sureLatest[sureLatest.length - 1]);
  expect(skippedBefore('latest').length).toBeGreaterThanOrEqual(sureLatest.length - 1);
  // none: none of the missed ones
  const sureNone = alignedTriggers(lastFiredBefore(before, 'none', downAt) + 1, upAt, 1000);
  expect(sureNone.length).toBeGreaterThanOrEqual(5);
  expect(sureNone.filter((t) => fired('none').has(t))).toEqual([]);
  // later triggers continue normally for every policy, with no gap after the first fire
  for (const name of ['all', 'latest', 'none']) expect(later.filter((t) => !fired(name).has(t))).toEqual([]);
  for (const name of ['latest', 'none']) {
    const since = alignedTriggers(firstAfterGap(name), later[later.length - 1], 1000);
    expect(since.filter((t) => !fired(name).has(t))).toEqual([]);
  }
  // what was skipped is logged, with the count the fires show
  expect(logs()).toMatch(new RegExp(`Skipped ${skippedBefore('latest').length} missed trigger\\(s\\) \\(schedule=latest`));
  expect(logs()).toMatch(new RegExp(`Skipped ${skippedBefore('none').length} missed trigger\\(s\\) \\(schedule=none`));
  await fleet.stopAll();
});

test('B12: with a catch-up cap, only the newest N missed triggers are enqueued and the rest are counted', async () => {
  witness = await Witness.start();
  fleet = new Fleet([{ name: 'capped', spec: '@every 1s', catchUpCap: 2 }], { LEADER_TTL_MS: 1500 });
  await fleet.start('A1');
  await fleet.waitLeader();
  await waitFor(async () => (await fleet.records()).find((r) => r.phase === 'fired'), 'a first fire');
  await fleet.stopAll();
  const downAt = Date.now();
  const lastBefore = lastFiredBefore(await fleet.records(), 'capped', downAt);
  // down until 4 triggers after the last one enqueued have come due (the witness has passed the fourth)
  await witness.reached(lastBefore + 4000, 'four triggers due while nobody leads');
  const upAt = Date.now();
  await fleet.start('A2');
  const acquired = await fleet.waitLeader(upAt);
  // triggers due before anyone restarted came due while nobody led, for sure (one due between the
  // acquisition and the first tick is on time, and counts among the newest two: judged from the fires)
  const sure = alignedTriggers(lastBefore + 1, upAt, 1000);
  expect(sure.length).toBeGreaterThanOrEqual(4);
  const after = (recs: Rec[]) => [...perTrigger(recs, 'capped', 'fired').keys()].filter((t) => t > lastBefore).sort((a, b) => a - b);
  // the acquisition's catch-up: the newest two enqueued, the skip logged
  await waitFor(async () => after(await fleet.records()).length >= 2 && /schedule=capped/.test(acquired.child.output), {
    what: 'the newest two missed triggers to be fired and the skip logged',
  });
  const firedAfter = after(await fleet.records());
  expect(firedAfter[0]).toBeGreaterThanOrEqual(sure[sure.length - 2]); // no more than the newest two
  expect(firedAfter.slice(0, 2)).toEqual([firedAfter[0], firedAfter[0] + 1000]); // the two in a row
  const skipped = alignedTriggers(lastBefore + 1, firedAfter[0] - 1, 1000);
  expect(skipped.length).toBeGreaterThanOrEqual(sure.length - 2);
  expect(acquired.child.output).toMatch(new RegExp(`Skipped ${skipped.length} missed trigger\\(s\\) \\(schedule=capped`));
  await fleet.stopAll();
});
