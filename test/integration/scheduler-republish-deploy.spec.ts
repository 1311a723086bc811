// A rolling deploy that changes a schedule, while a replica of the old version still runs: when
// that old replica's declarations expire (a paused process, a network blip longer than 3
// heartbeats) and it publishes them again, it must not put its old definition back over the one
// the new version registered (README "Catch-up, pause, changes, overlap": the last replica to
// *register* wins; a re-publish is not a registration). Real processes: the old one is SIGSTOPped.
import { jest } from '@jest/globals';
import { SchedulerKeys } from '../../lib/core/redis/keys.js';
import { Fleet } from '../helpers/fleet.js';
import { storedDefinition } from '../helpers/registry.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(60_000);

const HEARTBEAT = 200; // declarations live 3 × 200 ms
let fleet: Fleet;
beforeEach(() => {
  fleet = new Fleet([], { HEARTBEAT_MS: HEARTBEAT, LEADER_TTL_MS: 1000 });
});
afterEach(async () => {
  await fleet.close();
});

const spec = async () => (await storedDefinition<{ expression: string }>(fleet.redis, fleet.ns, 'tick'))?.expression;

test("an old replica's re-publish after its declarations expired keeps the definition a newer replica registered", async () => {
  const oldOne = await fleet.start('old', { SCHEDULES: JSON.stringify([{ name: 'tick', spec: '@every 1s', type: 'tick' }]) });
  const before = await spec();
  const newOne = await fleet.start('new', { SCHEDULES: JSON.stringify([{ name: 'tick', spec: '@every 3s', type: 'tick' }]) });
  const registered = await spec();
  expect([before, registered]).toEqual(['@every 1s', '@every 3s']); // the new version's registration replaced the old definition
  oldOne.kill('SIGSTOP');
  const lost = waitFor(() => /lost this instance's declarations/.test(oldOne.output), "the old replica's re-publish", 20_000);
  // paused past its declarations' TTL (3 heartbeats): they expire, and it publishes them again at SIGCONT
  await waitFor(async () => !(await oldDeclared()), "the old replica's declaration to expire", 20_000);
  oldOne.kill('SIGCONT');
  await lost;
  await waitFor(oldDeclared, 'the old replica to declare again', 20_000);
  // its re-publish runs inside the heartbeat that found the loss, and the next beat waits for it:
  // two more beats of the old replica (its instances score rising twice) and the re-publish is over
  for (let i = 0, seen = await lastBeat(); i < 2; i++) {
    await waitFor(async () => (await lastBeat()) > seen, 'a later heartbeat of the old replica', 20_000);
    seen = await lastBeat();
  }
  expect(await spec()).toEqual(registered);
  expect(newOne.alive).toBe(true);
  await fleet.stopAll();
});

async function lastBeat(): Promise<number> {
  return Number(await fleet.redis.zscore(new SchedulerKeys(fleet.ns).instances, 'old'));
}

async function oldDeclared(): Promise<boolean> {
  return (await fleet.redis.exists(new SchedulerKeys(fleet.ns).declaration('old'))) === 1;
}
