// How long a worker may stall before its running task runs elsewhere too (review46). The visibility
// timeout counts from the entry's last claim renewal, and a running handler's claim is renewed every
// third of the timeout: a process stopped when its claim was last renewed a while ago loses the task
// after the rest of the timeout, so a stall shorter than the timeout (here 5 s of a 6 s timeout) can be
// enough. README's guarantees said a task runs twice when its worker "stalls past the visibility
// timeout"; this pins what happens (it passed before: the README was corrected, not the engine).
import { jest } from '@jest/globals';
import { startWorker, useWorkerRig } from '../helpers/worker-rig.js';
import { readRecords, type Rec } from '../helpers/records.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

const rig = useWorkerRig('stall');
const VIS = 6000;
const STOP_MS = 5000; // shorter than the visibility timeout: the time is the point

/** The idle time of the only pending entry of the default queue (ms since delivered or last claimed, Redis time). */
async function idleMs(): Promise<number> {
  const rows = (await rig.redis.xpending(rig.keys.stream, 'chronos', '-', '+', 1)) as [string, string, number, number][];
  return Number(rows[0]?.[2] ?? -1);
}

test('a worker stopped for less than the visibility timeout can lose its running task to another: it runs on both', async () => {
  const env = { VISIBILITY_MS: VIS, RECOVER_MS: 200, SLOW_CAP_MS: 20, CAP_AFTER_FIRST: 1 };
  const children = { W1: await startWorker(rig, 'W1', env), W2: await startWorker(rig, 'W2', env) };
  const { id } = await rig.client.enqueue('slow', { ms: 30_000 });
  const records = async () => readRecords(rig.redis, rig.recordKey);
  const start = await waitFor(async () => (await records()).find((r: Rec) => r.phase === 'start'), 'a worker to start the task');
  const holder = children[start.instance as 'W1' | 'W2'];
  // stop the holder shortly before its next claim renewal (they come every third of the timeout)
  const aged = VIS / 3 - 300;
  let idleAtStop = -1;
  while (idleAtStop < aged) {
    await waitFor(async () => (await idleMs()) >= aged, 'the claim to age', 10_000, 10);
    holder.kill('SIGSTOP');
    idleAtStop = await idleMs(); // no renewal can come now
    if (idleAtStop < aged) holder.kill('SIGCONT'); // renewed just before the stop: again
  }
  await new Promise((r) => setTimeout(r, STOP_MS)); // the stall itself: the time is the point
  holder.kill('SIGCONT');
  // the other worker took it during the stall (its sleep is capped there), while the stopped one's run goes on
  const starts = await waitFor(
    async () => {
      const s = (await records()).filter((r: Rec) => r.phase === 'start' && r.id === id);
      return s.length === 2 ? s : undefined;
    },
    'the task to start on the other worker',
    20_000,
  );
  expect(starts.map((r) => r.instance).sort()).toEqual(['W1', 'W2']);
  expect(await rig.redis.zcard(rig.keys.reclaimed)).toBe(1);
});
