// A worker server that stops answering (SIGSTOP: hung, not dead) while it runs tasks keeps them in its
// queues' pending entries lists until the visibility timeout or its death hands them on. Before, its
// heartbeat (info key and `servers` score, 3 beats = 15 s) expired and the Inspector (`chronos
// servers`, the console) stopped listing it while it still held them: tasks "active" held by nobody.
// Now it stays listed, overdue, with the entries it holds; it comes back live when it resumes, and
// leaves the list once found dead (its tasks reclaimed). Real processes, real Redis.
import { jest } from '@jest/globals';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { GlobalKeys } from '../../lib/core/redis/keys.js';
import { cliRunner } from '../helpers/cli.js';
import { startWorker, useWorkerRig } from '../helpers/worker-rig.js';
import { readRecords } from '../helpers/records.js';
import { redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

const rig = useWorkerRig('overdue');
const { chronos } = cliRunner(() => rig.ns);
let inspector: Inspector;
beforeEach(() => {
  inspector = new Inspector({ connection: redisUrl(), namespace: rig.ns });
});
afterEach(async () => {
  await inspector.close();
});

async function redisNow(): Promise<number> {
  const [s, us] = await rig.redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

const listed = async (id: string) => (await inspector.servers()).find((s) => s.id === id);

test('a stopped worker holding tasks stays listed, overdue, past its last heartbeat; live again when it resumes; gone once found dead', async () => {
  // a long visibility timeout: nothing hands the stopped worker's tasks on while the test looks
  const w1 = await startWorker(rig, 'W1', { VISIBILITY_MS: 600_000, CONCURRENCY: 2 });
  await rig.client.enqueue('slow', { ms: 60_000 });
  await rig.client.enqueue('slow', { ms: 60_000 });
  await waitFor(
    async () => (await readRecords(rig.redis, rig.recordKey)).filter((r) => r.phase === 'start').length === 2,
    'W1 to start both',
  );
  await waitFor(async () => (await listed('W1'))?.active === 2, 'a heartbeat of W1 naming both');
  expect((await listed('W1'))?.state).toBe('live');

  w1.kill('SIGSTOP');
  const g = new GlobalKeys(rig.ns);
  await waitFor(
    async () => Number(await rig.redis.zscore(g.servers, 'W1')) < (await redisNow()),
    "W1's last heartbeat to pass",
    30_000,
    200,
  );
  const stopped = await listed('W1');
  expect(stopped).toMatchObject({ id: 'W1', state: 'overdue', pending: 2, active: 2, queues: { default: 1 } });
  expect(await rig.redis.exists(g.server('W1'))).toBe(1);
  expect((await chronos('servers')).out).toMatch(/│ W1 +│ OVERDUE \(holds 2\) │/);
  expect((await chronos('stats')).out).toContain('Workers: 1 server(s), 1 OVERDUE (holding 2 tasks)');

  w1.kill('SIGCONT');
  await waitFor(async () => (await listed('W1'))?.state === 'live', 'W1 to be live again');
  expect((await listed('W1'))?.pending).toBeUndefined();

  // a death is found by another server: its tasks reclaimed, it is no longer listed
  await startWorker(rig, 'W2', { VISIBILITY_MS: 600_000, CONCURRENCY: 2, SLOW_CAP_MS: 10 });
  w1.kill('SIGKILL');
  await waitFor(async () => (await listed('W1')) === undefined, 'W1 to leave the list once found dead');
  expect(await rig.redis.exists(g.server('W1'))).toBe(0);
});

test('an overdue worker that holds no entry leaves the list once its heartbeat passes', async () => {
  const w1 = await startWorker(rig, 'W1', { VISIBILITY_MS: 600_000 });
  await waitFor(async () => (await listed('W1'))?.state === 'live', 'W1 to be listed');
  w1.kill('SIGSTOP');
  await waitFor(async () => (await listed('W1'))?.state === 'overdue', 'W1 to be overdue');
  expect((await listed('W1'))?.pending).toBe(0);
  const g = new GlobalKeys(rig.ns);
  await waitFor(
    async () => Number(await rig.redis.zscore(g.servers, 'W1')) < (await redisNow()),
    "W1's last heartbeat to pass",
    30_000,
    200,
  );
  expect(await listed('W1')).toBeUndefined();
  w1.kill('SIGCONT');
});
