// dist-cases B20 (one instance whose event loop is blocked 0–1.5 s before ticks, visibility timeout
// 2 s) failed once in four full runs with a trigger done twice by that one live instance. Not a double
// fire: one task, run twice. A stall of the event loop stops the claims round (every third of the
// visibility timeout), so the entry of a task the server runs can pass the timeout in Redis; when the
// stall ends, the server's own visibility-timeout sweep and its claims round are both due, and when the
// sweep went first it put the server's own running task back in the queue and the server ran it again.
// Another server taking it during a stall is the documented at-least-once case (README Guarantees 4);
// a server taking its own running task from itself is not: the sweep now leaves the entries its own
// slot table holds to it (recover.lua's keep list: they stay pending for it, their idle time reset).
import { jest } from '@jest/globals';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import type { Recoverer } from '../../lib/core/recovery/recoverer.js';
import type { ChronosServer } from '../../lib/core/worker/server.js';
import { QueueRig } from '../helpers/queue.js';
import { deferred, waitFor } from '../helpers/wait.js';

jest.setTimeout(30_000);

let rig: QueueRig;
/** Ends a handler still waiting, so a failed test's shutdown does not wait for it. */
let release = () => {};
beforeEach(() => {
  rig = new QueueRig();
});
afterEach(async () => {
  release();
  await rig.close();
});

const VISIBILITY_MS = 30_000; // long: the server's own claims round does not come between the test's steps

/** The pending entries of the default queue: entry id, owner (consumer), idle ms. */
async function pending(k: QueueKeys): Promise<{ entryId: string; owner: string; idleMs: number }[]> {
  const rows = (await rig.client.redis.xpending(k.stream, CONSUMER_GROUP, '-', '+', 10)) as [string, string, number, number][];
  return rows.map(([entryId, owner, idleMs]) => ({ entryId, owner, idleMs: Number(idleMs) }));
}

/** The server's visibility-timeout sweep, run now (it runs every recoverInterval; after a stall, maybe before the claims round). */
function sweep(server: ChronosServer): Promise<string[]> {
  return (server as unknown as { recoverer: Recoverer }).recoverer.recover(true);
}

test("a server's own sweep leaves its running task's entry to it, though the entry's idle time passed the visibility timeout (a stall)", async () => {
  const server = rig.server({ visibilityTimeout: VISIBILITY_MS, recoverInterval: 200 });
  const requeued: string[] = [];
  rig.events.subscribe((e) => {
    if (e.type === 'task.requeued') requeued.push(e.taskId);
  });
  const starts: string[] = [];
  const started = deferred();
  const gate = deferred();
  release = () => gate.resolve();
  server.handle('report', async (task) => {
    starts.push(task.id);
    started.resolve();
    await gate.promise;
  });
  await server.start();
  const { id } = await rig.client.enqueue('report', {});
  await started.promise;
  const k = new QueueKeys(rig.namespace, 'default');
  const [held] = await pending(k);
  expect(held.owner).toBe(server.id);
  // what a stall of the server's event loop leaves in Redis: the entry of its running task idle past the timeout, still its own
  await rig.client.redis.xclaim(k.stream, CONSUMER_GROUP, server.id, 0, held.entryId, 'IDLE', 2 * VISIBILITY_MS, 'JUSTID');
  expect((await pending(k))[0].idleMs).toBeGreaterThan(VISIBILITY_MS);

  await sweep(server); // the stall is over: the server's sweep runs (before the fix it requeued the entry, and the task ran again here)
  expect(requeued).toEqual([]);
  const after = await pending(k);
  expect(after.map((p) => [p.entryId, p.owner])).toEqual([[held.entryId, server.id]]);
  expect(after[0].idleMs).toBeLessThan(VISIBILITY_MS); // the sweep's claim renewed it

  gate.resolve();
  await waitFor(async () => (await pending(k)).length === 0, 'the task to be acked');
  expect(starts).toEqual([id]);
});

test("a server's sweep still takes its own pending entry that its slot table does not hold (a read whose reply never arrived)", async () => {
  const server = rig.server({ visibilityTimeout: VISIBILITY_MS, recoverInterval: 200 });
  const ran = deferred<string>();
  server.handle('report', (task) => ran.resolve(task.id));
  const k = new QueueKeys(rig.namespace, 'default');
  await rig.client.redis.xgroup('CREATE', k.stream, CONSUMER_GROUP, '$', 'MKSTREAM').catch(() => {}); // or the server made it
  await server.start();
  await server.pause('default'); // no fetch: the entry below is read by hand, under the server's consumer name
  const { id } = await rig.client.enqueue('report', {});
  const read = (await rig.client.redis.xreadgroup('GROUP', CONSUMER_GROUP, server.id, 'COUNT', 1, 'STREAMS', k.stream, '>')) as [
    string,
    [string, string[]][],
  ][];
  const entryId = read[0][1][0][0];
  await rig.client.redis.xclaim(k.stream, CONSUMER_GROUP, server.id, 0, entryId, 'IDLE', 2 * VISIBILITY_MS, 'JUSTID');
  await sweep(server);
  expect(await pending(k)).toEqual([]); // back in the stream as a new entry
  await server.resume('default');
  expect(await ran.promise).toBe(id);
});
