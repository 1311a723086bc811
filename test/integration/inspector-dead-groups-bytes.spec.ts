// Dead groups (the console's dead tab reads them at every poll, 3 s) look at each dead task's type,
// error and group, never at its payload: they read the tasks without their payloads (page-tasks.lua,
// payloads off). Trial 45: 200 dead tasks of 500 KB took 2.4 s and 256 MB of the app's memory per
// read, and the scan goes to 10,000 tasks of up to 1 MB (maxPayloadBytes) each.
import { Inspector } from '../../lib/core/admin/inspector.js';
import type { ChronosServer } from '../../lib/core/worker/server.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { pageTasksScript } from '../../lib/core/redis/commands/admin.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { connect } from '../helpers/redis.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

const N = 20;
const PAYLOAD = 100_000;

let rig: QueueRig;
let proxy: TcpProxy;
let inspector: Inspector;
let server: ChronosServer;

beforeEach(async () => {
  rig = new QueueRig();
  const url = new URL(redisUrl());
  proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 6379) });
  inspector = new Inspector({ connection: proxy.url, namespace: rig.namespace });
  // N dead `report` tasks (two errors) and one dead `mail` task in group acme, each with 100 KB of payload
  server = rig.server({ queues: ['big'], concurrency: 5 });
  server.handle('report', (task) => {
    throw new Error(`render failed ${(task.payload as { i: number }).i % 2}`);
  });
  server.handle('mail', () => {
    throw new Error('smtp down');
  });
  await server.start();
  const blob = 'x'.repeat(PAYLOAD);
  for (let i = 0; i < N; i++) await rig.client.enqueue('report', { i, blob }, { queue: 'big', maxRetry: 0 });
  await rig.client.enqueue('mail', { to: 'a@example.com', blob }, { queue: 'big', maxRetry: 0, group: 'acme' });
  await waitFor(async () => (await rig.inspector.queue('big')).dead === N + 1, 'every task dead');
});
afterEach(async () => {
  await inspector.close();
  await proxy.close();
  await rig.close();
});

test('dead groups of 20 dead tasks of 100 KB read a few KB, not their 2 MB of payloads; the groups are as before', async () => {
  const before = proxy.bytesFromTarget;
  const groups = await inspector.deadGroups({ queue: 'big' });
  const read = proxy.bytesFromTarget - before;
  console.log(`dead groups of ${N + 1} dead tasks of ${PAYLOAD} B payloads: ${read} bytes read from Redis`);
  expect(read).toBeLessThan(PAYLOAD); // less than one payload: none was read (each task's meta and error: about 1 KB)

  expect(groups).toMatchObject({ scanned: N + 1, truncated: false });
  const byMessage = [...groups.groups].sort((a, b) => a.message.localeCompare(b.message));
  expect(byMessage.map((g) => [g.message, g.count, g.types, g.queues])).toEqual([
    ['Error: render failed 0', N / 2, ['report'], ['big']],
    ['Error: render failed 1', N / 2, ['report'], ['big']],
    ['Error: smtp down', 1, ['mail'], ['big']],
  ]);
  // a filter by group reads the group from the meta, which the cut keeps
  expect((await inspector.deadGroups({ queue: 'big', group: 'acme' })).groups.map((g) => g.message)).toEqual(['Error: smtp down']);
  // the listing still has the payloads
  const page = await inspector.taskPage('big', 'dead', { limit: 1 });
  expect((page.tasks[0].payload as { blob: string }).blob).toHaveLength(PAYLOAD);
});

test('a filtered listing (the dead tab after a click on a group) reads the payloads of the tasks it lists only', async () => {
  const before = proxy.bytesFromTarget;
  const smtp = await inspector.taskPage('big', 'dead', { error: 'smtp', limit: 25 });
  expect(proxy.bytesFromTarget - before).toBeLessThan(2 * PAYLOAD);
  expect(smtp.tasks.map((t) => [t.type, t.group, (t.payload as { blob: string }).blob.length])).toEqual([['mail', 'acme', PAYLOAD]]);
  expect(smtp.tasks[0]).toMatchObject({
    state: 'dead',
    queue: 'big',
    payload: { to: 'a@example.com' },
    lastError: expect.stringContaining('smtp down'),
  });
  const reports = await inspector.taskPage('big', 'dead', { type: 'report', limit: 4 });
  expect(reports.tasks).toHaveLength(4);
  expect(reports.tasks.every((t) => (t.payload as { blob: string }).blob.length === PAYLOAD)).toBe(true);
  expect(reports.cursor).toBeDefined();
});

test('a bulk act by filter reads ids and meta, no payload', async () => {
  await server.shutdown();
  const before = proxy.bytesFromTarget;
  expect(await inspector.retryAllDead('big', { type: 'report' })).toMatchObject({ count: N });
  expect(proxy.bytesFromTarget - before).toBeLessThan(PAYLOAD);
  expect(await rig.inspector.queue('big')).toMatchObject({ pending: N, dead: 1 });
});

test('scheduled tasks (stored "<meta>\\n<payload>\\n<type>") by filter: listed with their payloads, acted on without', async () => {
  await rig.client.enqueue('later', { n: 1, blob: 'y'.repeat(PAYLOAD) }, { queue: 'big', delay: 3_600_000, group: 'acme' });
  await rig.client.enqueue('later', { n: 2 }, { queue: 'big', delay: 3_600_000 });
  await rig.client.enqueue('other', { n: 3 }, { queue: 'big', delay: 3_601_000 }); // due after the two: the listing's order (two enqueues within one ms had the same due time)
  const page = await inspector.taskPage('big', 'scheduled', { type: 'later' });
  expect(page.tasks.map((t) => [t.type, t.group, (t.payload as { n: number }).n])).toEqual([
    ['later', 'acme', 1],
    ['later', undefined, 2],
  ]);
  expect((page.tasks[0].payload as { blob: string }).blob).toHaveLength(PAYLOAD);
  const before = proxy.bytesFromTarget;
  expect(await inspector.deleteAllTasks('big', 'scheduled', { group: 'acme' })).toMatchObject({ count: 1 });
  expect(proxy.bytesFromTarget - before).toBeLessThan(PAYLOAD);
  expect((await inspector.taskPage('big', 'scheduled')).tasks.map((t) => t.type)).toEqual(['later', 'other']);
});

test('one page-tasks call without payloads stops after its byte bound (at least one task), with a cursor: the scan still sees every task', async () => {
  const k = new QueueKeys(rig.namespace, 'big');
  const set = { zset: k.dead, hash: k.deadTasks };
  const redis = connect();
  try {
    const seen: string[] = [];
    let after: { id: string; score: string } | undefined;
    let calls = 0;
    for (;;) {
      const { tasks, cut } = await pageTasksScript(redis, set, after, 1000, false, 2.5 * PAYLOAD);
      calls++;
      expect(tasks.length).toBeLessThanOrEqual(3); // 3 tasks of 100 KB pass 250 KB
      expect(tasks.every((t) => t.stored.length < PAYLOAD)).toBe(true);
      seen.push(...tasks.map((t) => t.id));
      if (!cut) break;
      after = { id: tasks.at(-1)!.id, score: tasks.at(-1)!.score };
    }
    expect(new Set(seen).size).toBe(N + 1);
    expect(calls).toBe(Math.ceil((N + 1) / 3));
    // a bound under one task still reads one per call; with payloads too (review48), the payload whole
    expect((await pageTasksScript(redis, set, undefined, 1000, false, 1)).tasks).toHaveLength(1);
    const whole = await pageTasksScript(redis, set, undefined, 1000, true, 1);
    expect(whole.tasks).toHaveLength(1);
    expect(whole.cut).toBe(true);
    expect(whole.tasks[0].stored.length).toBeGreaterThan(PAYLOAD);
  } finally {
    redis.disconnect();
  }
});
