// The visibility-timeout sweep on a large pending entries list (PEL). XAUTOCLAIM looks at most
// COUNT × 10 entries per call, and a sweep makes a bounded number of calls: a sweep that always began
// again at the start of the PEL never reached the entries behind the first ~10,000, so a stalled
// consumer whose entries sat behind that many live ones never had them reclaimed (review46).
// The live holders and the stalled holder are raw consumers of the queue's group (a fleet of workers
// with 10,000 tasks in flight would be 10,000 handlers); the recoverer is a real ChronosServer.
import { jest } from '@jest/globals';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { QueueRig } from '../helpers/queue.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(120_000);

let rig: QueueRig;
beforeEach(() => {
  rig = new QueueRig();
});
afterEach(async () => {
  await rig.close();
});

const LIVE = 10_500; // more than one sweep's reach (10 XAUTOCLAIM calls of COUNT 100 look at 10,000 entries)
const STALLED = 50;
const VISIBILITY_MS = 3_000;

test('entries of a stalled consumer behind more than 10,000 live pending entries are reclaimed', async () => {
  const r = rig.client.redis;
  const k = new QueueKeys(rig.namespace, 'default');
  await r.call('XGROUP', 'CREATE', k.stream, CONSUMER_GROUP, '$', 'MKSTREAM');
  for (let i = 0; i < LIVE; i += 1000) {
    await rig.client.enqueueBulk(Array.from({ length: Math.min(1000, LIVE - i) }, (_, j) => ({ type: 'held', payload: { i: i + j } })));
  }
  // the live holders take the oldest entries; the stalled one the newest (the end of the PEL)
  const read = async (consumer: string, count: number) =>
    (
      (await r.call('XREADGROUP', 'GROUP', CONSUMER_GROUP, consumer, 'COUNT', count, 'STREAMS', k.stream, '>')) as [
        string,
        [string, string[]][],
      ][]
    )[0][1].map(([id]) => id);
  const live: string[] = [];
  for (let i = 0; i < LIVE; i += 1000) live.push(...(await read(`live-${i / 1000}`, Math.min(1000, LIVE - i))));
  expect(live).toHaveLength(LIVE);
  const stalledTasks = await rig.client.enqueueBulk(Array.from({ length: STALLED }, (_, j) => ({ type: 'stalled', payload: { j } })));
  expect(await read('stalled', STALLED)).toHaveLength(STALLED);

  // the live holders keep their claims fresh, as running handlers do (every third of the visibility timeout, and more)
  let renewing = true;
  const renewals = (async () => {
    while (renewing) {
      for (let i = 0; i < live.length; i += 1000) {
        await r.call('XCLAIM', k.stream, CONSUMER_GROUP, `live-${i / 1000}`, 0, ...live.slice(i, i + 1000), 'JUSTID');
      }
      await new Promise((res) => setTimeout(res, VISIBILITY_MS / 6)); // the pace of the holders' claim renewals: the time is the point
    }
  })();

  const ran = new Set<string>();
  const server = rig.server({ visibilityTimeout: VISIBILITY_MS, recoverInterval: 200 });
  server.handle('stalled', (t) => void ran.add(t.id));
  server.handle('held', () => undefined); // never fetched: every 'held' entry is pending for a live holder
  await server.start();
  try {
    await waitFor(() => ran.size === STALLED, `the ${STALLED} stalled tasks to be reclaimed and run (ran ${ran.size})`, 30_000, 100);
    expect([...ran].sort()).toEqual(stalledTasks.map((t) => t.id).sort());
    // the live holders' entries were left alone
    const summary = (await r.call('XPENDING', k.stream, CONSUMER_GROUP)) as [number];
    expect(Number(summary[0])).toBe(LIVE);
  } finally {
    renewing = false;
    await renewals;
  }
});
