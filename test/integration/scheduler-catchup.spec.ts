// Catch-up of triggers missed while nobody led (the scheduler issue and dist-cases B12): stop every
// instance, start again later → `all` fires each missed trigger once (with its original trigger
// instant), `latest` only the newest, `none` nothing; later triggers continue.
import { jest } from '@jest/globals';
import { alignedTriggers, Fleet, nextAligned, perTrigger } from '../helpers/fleet.js';
import { until, waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

let fleet: Fleet;
afterEach(async () => {
  await fleet.close();
});

test('catch-up policies all / latest / none after the whole fleet was down for 5 s; two instances restarting together fire once', async () => {
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
  await until(T0 + 2500);
  await fleet.stopAll();
  const downAt = Date.now();
  // down for 6 s: the old leader had already enqueued the next trigger (up to half a period
  // ahead), so at least 5 come due while nobody leads
  await until(downAt + 6000);
  const upAt = Date.now();
  await Promise.all([fleet.start('A2'), fleet.start('B2')]); // booting together
  const acquired = await fleet.waitLeader(upAt);
  await until(Math.max(Date.now(), acquired.t) + 3500);
  const recs = await fleet.records();
  // the triggers that came due while nobody led: after the last one the old fleet enqueued (it
  // enqueues up to half a period ahead), up to the new leader's acquisition
  const missedOf = (name: string) => {
    const lastBefore = Math.max(
      ...recs.filter((r) => r.phase === 'fired' && r.schedule === name && r.t < downAt).map((r) => r.triggerAt as number),
    );
    return alignedTriggers(lastBefore + 1, acquired.t, 1000);
  };
  const missed = missedOf('all');
  expect(missed.length).toBeGreaterThanOrEqual(5);
  const later = alignedTriggers(acquired.t + 1, Date.now() - 1500, 1000);

  await waitFor(async () => {
    const done = perTrigger(await fleet.records(), 'all', 'done');
    return [...missed, ...later].every((t) => done.has(t));
  }, 'all missed and later triggers of `all` to be done');
  const final = await fleet.records();
  for (const name of ['all', 'latest', 'none']) {
    expect([...perTrigger(final, name, 'fired')].filter(([, n]) => n > 1)).toEqual([]); // never twice
  }
  const fired = (name: string) => new Set(perTrigger(final, name, 'fired').keys());
  // all: each missed trigger once, with its original trigger instant, in order
  expect(missed.filter((t) => !fired('all').has(t))).toEqual([]);
  const allOrder = final.filter((r) => r.phase === 'fired' && r.schedule === 'all').map((r) => r.triggerAt as number);
  expect(allOrder).toEqual([...allOrder].sort((a, b) => a - b));
  // latest: only the newest missed trigger
  const missedLatest = missedOf('latest');
  expect(missedLatest.filter((t) => fired('latest').has(t))).toEqual([missedLatest[missedLatest.length - 1]]);
  // none: none of them
  const missedNone = missedOf('none');
  expect(missedNone.filter((t) => fired('none').has(t))).toEqual([]);
  // later triggers continue normally for every policy
  for (const name of ['all', 'latest', 'none']) expect(later.filter((t) => !fired(name).has(t))).toEqual([]);
  // what was skipped is logged
  const leader = acquired.child;
  expect(leader.output).toMatch(new RegExp(`Skipped ${missedLatest.length - 1} missed trigger\\(s\\) \\(schedule=latest`));
  expect(leader.output).toMatch(new RegExp(`Skipped ${missedNone.length} missed trigger\\(s\\) \\(schedule=none`));
  await fleet.stopAll();
});

test('B12: with a catch-up cap, only the newest N missed triggers are enqueued and the rest are counted', async () => {
  fleet = new Fleet([{ name: 'capped', spec: '@every 1s', catchUpCap: 2 }], { LEADER_TTL_MS: 1500 });
  await fleet.start('A1');
  await fleet.waitLeader();
  const first = await waitFor(async () => (await fleet.records()).find((r) => r.phase === 'fired'), 'a first fire');
  await fleet.stopAll();
  const downAt = Date.now();
  await until(downAt + 4500);
  const upAt = Date.now();
  await fleet.start('A2');
  const acquired = await fleet.waitLeader(upAt);
  await until(acquired.t + 500);
  const recs = await fleet.records();
  const lastBefore = Math.max(
    ...recs.filter((r) => r.phase === 'fired' && r.t < downAt).map((r) => r.triggerAt as number),
    first.triggerAt as number,
  );
  const missed = alignedTriggers(lastBefore + 1, acquired.t, 1000);
  const fired = new Set(perTrigger(recs, 'capped', 'fired').keys());
  expect(missed.filter((t) => fired.has(t))).toEqual(missed.slice(-2));
  expect(acquired.child.output).toMatch(new RegExp(`Skipped ${missed.length - 2} missed trigger\\(s\\) \\(schedule=capped`));
  await fleet.stopAll();
});
