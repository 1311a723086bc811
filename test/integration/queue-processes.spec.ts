// Multi-process queue scenarios (dist-cases B05, B06, B18 and the SIGKILL test of the queue issue):
// real worker processes, SIGKILLed and SIGTERMed, on a real Redis.
import { beforeEach, jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { stopChild } from '../helpers/children.js';
import { startWorker, useWorkerRig } from '../helpers/worker-rig.js';
import { countBy, readRecords } from '../helpers/records.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(60_000);

const rig = useWorkerRig('proc');
let recordKey: string;
let client: QueueClient;
let redis: Redis;
let keys: QueueKeys;
beforeEach(() => {
  ({ recordKey, client, redis, keys } = rig);
});

const worker = (name: string, env: Record<string, number | string> = {}) => startWorker(rig, name, env);

async function pendingCount(): Promise<number> {
  return ((await redis.call('XPENDING', keys.stream, 'chronos')) as [number])[0];
}

/** The idle time (ms) of a task's entry in the pending entries list, or undefined when it is not there. */
async function pendingIdleMs(id: string): Promise<number | undefined> {
  const rows = (await redis.call('XPENDING', keys.stream, 'chronos', '-', '+', 100)) as [string, string, number, number][];
  const entryIds = (await redis.xrange(keys.stream, '-', '+')).filter(([, fields]) => fields.includes(id)).map(([entryId]) => entryId);
  return rows.find(([entryId]) => entryIds.includes(entryId))?.[2];
}

test('a worker SIGKILLed while holding 20 tasks: another finishes every one, none lost, each run at most twice', async () => {
  const w1 = await worker('W1', { CONCURRENCY: 20, VISIBILITY_MS: 2000, RECOVER_MS: 200 });
  const enqueued = await client.enqueueBulk(Array.from({ length: 20 }, (_, i) => ({ type: 'slow', payload: { ms: 60_000, i } })));
  await waitFor(async () => countBy(await readRecords(redis, recordKey), 'start').size === 20, 'W1 to start all 20');
  w1.kill('SIGKILL');
  await w1.exited;
  const w2 = await worker('W2', { CONCURRENCY: 20, VISIBILITY_MS: 2000, RECOVER_MS: 200, SLOW_CAP_MS: 20 });
  await waitFor(async () => countBy(await readRecords(redis, recordKey), 'done').size === 20, 'W2 to finish all 20', 15_000);
  const recs = await readRecords(redis, recordKey);
  const starts = countBy(recs, 'start');
  const dones = countBy(recs, 'done');
  expect([...dones.keys()].sort()).toEqual(enqueued.map((e) => e.id).sort()); // every task, none lost
  for (const id of dones.keys()) {
    expect(dones.get(id)).toBe(1);
    expect(starts.get(id)).toBe(2); // once on W1 (killed), once on W2: at most twice
  }
  expect(recs.filter((r) => r.phase === 'done')).toHaveLength(20);
  expect(recs.filter((r) => r.phase === 'done').every((r) => r.instance === 'W2')).toBe(true);
  await waitFor(async () => (await pendingCount()) === 0 && (await redis.xlen(keys.stream)) === 0, 'the stream to drain');
  expect(w2.alive).toBe(true);
});

test("B05: a crashed worker's task is redelivered after the visibility timeout, not before; runs at most twice; done once", async () => {
  const vis = 3000;
  const recoverEvery = 250;
  const w1 = await worker('W1', { VISIBILITY_MS: vis, RECOVER_MS: recoverEvery });
  const { id } = await client.enqueue('slow', { ms: 2500 });
  const start1 = await waitFor(async () => (await readRecords(redis, recordKey)).find((r) => r.phase === 'start'), 'W1 to start T');
  // W1 works on T until it has extended its claim once (every vis/3 = 1 s): the entry's idle time in
  // the PEL falls behind the time since T started, which only an extension (XCLAIM … JUSTID) does
  await waitFor(
    async () => {
      const now = Date.now();
      const idle = await pendingIdleMs(id);
      return idle !== undefined && idle < now - start1.t - 200;
    },
    { what: 'W1 to extend its claim on T (1 s of work)', timeoutMs: 10_000 },
  );
  const killedAt = Date.now();
  w1.kill('SIGKILL');
  await w1.exited;
  const w2 = await worker('W2', { VISIBILITY_MS: vis, RECOVER_MS: recoverEvery });
  const done = await waitFor(async () => (await readRecords(redis, recordKey)).find((r) => r.phase === 'done'), 'T done on W2', 15_000);
  const recs = await readRecords(redis, recordKey);
  const starts = recs.filter((r) => r.phase === 'start');
  expect(starts.map((r) => r.instance)).toEqual(['W1', 'W2']);
  expect(done.instance).toBe('W2');
  expect(recs.filter((r) => r.phase === 'done')).toHaveLength(1);
  // W1's last claim extension was at most vis/3 before its start-to-kill time; redelivery no earlier than vis after its last touch
  const redelivery = starts[1].t - start1.t;
  expect(redelivery).toBeGreaterThanOrEqual(vis - vis / 3);
  // was ≤ 1 s (kill) + vis + poll + 2 s: now vis + poll + 5 s of slack after the kill (bench/workloads/recovery.ts measures recovery times)
  expect(starts[1].t - killedAt).toBeLessThanOrEqual(vis + recoverEvery + 5000);
  expect(starts[1].id).toBe(id);
  await waitFor(async () => (await pendingCount()) === 0 && (await redis.xlen(keys.stream)) === 0, 'the stream to drain');
  expect(w2.alive).toBe(true);
});

test('a task whose worker was SIGKILLed and whose entry was deleted does not block its id for ever (its uid marker expires)', async () => {
  const vis = 300;
  const w1 = await worker('W1', { VISIBILITY_MS: vis, RECOVER_MS: 100 });
  await client.enqueue('slow', { ms: 60_000 }, { taskId: 'job-1' });
  const uid = keys.uniqueId('job-1');
  // while the task runs, its worker renews the marker with its claims, to a few visibility timeouts
  await waitFor(async () => {
    const ttl = await redis.pttl(uid);
    return ttl > 0 && ttl <= 3 * vis;
  }, 'the worker to renew the uid marker');
  w1.kill('SIGKILL');
  await w1.exited;
  const [[entryId]] = await redis.xrange(keys.stream, '-', '+');
  await redis.xdel(keys.stream, entryId);
  await waitFor(async () => (await redis.exists(uid)) === 0, 'the uid marker to expire', 10_000);
  expect((await client.enqueue('slow', { ms: 1 }, { taskId: 'job-1' })).deduplicated).toBe(false);
});

test('B05b: with maxRetry 0 a crash still leads to a redelivery (a crash is not a handler error)', async () => {
  const w1 = await worker('W1', { VISIBILITY_MS: 1000, RECOVER_MS: 100 });
  await client.enqueue('slow', { ms: 1500 }, { maxRetry: 0 });
  await waitFor(async () => (await readRecords(redis, recordKey)).some((r) => r.phase === 'start'), 'W1 to start');
  w1.kill('SIGKILL');
  await worker('W2', { VISIBILITY_MS: 1000, RECOVER_MS: 100 });
  await waitFor(async () => (await readRecords(redis, recordKey)).some((r) => r.phase === 'done'), 'done on W2', 10_000);
  expect(await redis.zcard(keys.dead)).toBe(0);
});

test('B05: three reclaimers polling every 100 ms never both start the orphaned task', async () => {
  const w0 = await worker('W0', { VISIBILITY_MS: 1000, RECOVER_MS: 100 });
  await client.enqueue('slow', { ms: 1500 });
  await waitFor(async () => (await readRecords(redis, recordKey)).some((r) => r.phase === 'start'), 'W0 to start');
  w0.kill('SIGKILL');
  await Promise.all(['W1', 'W2', 'W3'].map((n) => worker(n, { VISIBILITY_MS: 1000, RECOVER_MS: 100 })));
  await waitFor(async () => (await readRecords(redis, recordKey)).some((r) => r.phase === 'done'), 'done', 10_000);
  await waitFor(async () => (await pendingCount()) === 0, 'the ack');
  const recs = await readRecords(redis, recordKey);
  expect(recs.filter((r) => r.phase === 'start')).toHaveLength(2);
  expect(recs.filter((r) => r.phase === 'done')).toHaveLength(1);
});

test('B06: a slow handler that is alive keeps its claim: never started twice', async () => {
  // handler runs 4 × the visibility timeout; its claim is extended every vis/3
  await worker('W1', { VISIBILITY_MS: 1000, RECOVER_MS: 100 });
  await client.enqueue('slow', { ms: 4000 });
  await waitFor(async () => (await readRecords(redis, recordKey)).some((r) => r.phase === 'start'), 'W1 to start');
  await worker('W2', { VISIBILITY_MS: 1000, RECOVER_MS: 100 });
  await waitFor(async () => (await readRecords(redis, recordKey)).some((r) => r.phase === 'done'), 'done', 10_000);
  const recs = await readRecords(redis, recordKey);
  expect(recs.map((r) => `${r.instance}:${r.phase}`)).toEqual(['W1:start', 'W1:done']);
});

test('B18a: SIGTERM with enough grace: stops fetching at once, finishes its task, exits 0; the other worker does the rest', async () => {
  const w1 = await worker('W1', { CONCURRENCY: 1, SHUTDOWN_MS: 10_000 });
  await client.enqueueBulk([0, 1, 2].map((i) => ({ type: 'slow', payload: { ms: 1500, i, followUp: `follow-${i}` } })));
  const first = await waitFor(async () => (await readRecords(redis, recordKey)).find((r) => r.phase === 'start'), 'W1 to start one');
  // SIGTERM while the first task runs (1.5 s), then start the other worker: started first, on a loaded machine
  // its start could outlast the task, and W1 then rightly fetched the next one before its SIGTERM
  const t0 = Date.now();
  const exiting = stopChild(w1);
  const w2 = await worker('W2', { CONCURRENCY: 1 });
  const exit = await exiting;
  expect(exit.code).toBe(0);
  expect(Date.now() - t0).toBeLessThan(10_000 + 5000); // within the grace (+ 5 s of slack for a loaded machine)
  await waitFor(async () => countBy(await readRecords(redis, recordKey), 'done').size === 6, '3 slow + 3 follow-ups done', 20_000);
  const recs = await readRecords(redis, recordKey);
  const w1Starts = recs.filter((r) => r.instance === 'W1' && r.phase === 'start');
  expect(w1Starts.map((r) => r.id)).toEqual([first.id]); // nothing fetched after SIGTERM
  expect(recs.find((r) => r.instance === 'W1' && r.phase === 'done')?.id).toBe(first.id);
  // enqueuing from inside the handler during shutdown worked: its follow-up ran
  expect(recs.some((r) => r.type === 'quick' && r.phase === 'done')).toBe(true);
  expect(countBy(recs, 'done').size).toBe(6);
  for (const n of countBy(recs, 'done').values()) expect(n).toBe(1);
  await waitFor(async () => (await pendingCount()) === 0, 'nothing pending');
  expect(w2.alive).toBe(true);
});

test('B18b: SIGTERM with too short a grace: the running task goes straight back to the queue and completes elsewhere', async () => {
  const w1 = await worker('W1', { CONCURRENCY: 1, SHUTDOWN_MS: 300, VISIBILITY_MS: 30_000 });
  await client.enqueueBulk([0, 1, 2].map((i) => ({ type: 'slow', payload: { ms: 1500, i } })));
  const first = await waitFor(async () => (await readRecords(redis, recordKey)).find((r) => r.phase === 'start'), 'W1 to start one');
  const t0 = Date.now();
  expect((await stopChild(w1)).code).toBe(0);
  // was < 300 + 1500 ms (before the task could finish): now the grace + 5 s of slack; that W1 gave the task
  // up instead of finishing it is checked by order below (its only done is on W2)
  expect(Date.now() - t0).toBeLessThan(300 + 5000);
  expect((await readRecords(redis, recordKey)).filter((r) => r.instance === 'W1' && r.phase === 'done')).toEqual([]);
  await worker('W2', { CONCURRENCY: 3, VISIBILITY_MS: 30_000 });
  // the visibility timeout is 30 s: finishing well before it proves the task was put back, not reclaimed
  await waitFor(async () => countBy(await readRecords(redis, recordKey), 'done').size === 3, 'all 3 done', 10_000);
  const recs = await readRecords(redis, recordKey);
  expect(recs.filter((r) => r.id === first.id && r.phase === 'done').map((r) => r.instance)).toEqual(['W2']);
  await waitFor(async () => (await pendingCount()) === 0, 'nothing pending');
});
