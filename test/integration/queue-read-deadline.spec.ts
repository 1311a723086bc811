// The blocking read's client-side deadline (fetch/readers.ts withDeadline) after the event loop stood
// still, with real processes and a real Redis (trial 4, F10): a worker stopped (SIGSTOP) longer than
// the deadline while a task is delivered to its blocking read runs that task as soon as it is resumed,
// not after the visibility timeout, and the deadline alone does not judge a read whose reply is in its socket.
import { beforeEach, jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { ReadDeadlineError, readDeadlineMs, withDeadline } from '../../lib/core/fetch/readers.js';
import { startWorker, useWorkerRig } from '../helpers/worker-rig.js';
import { readRecords } from '../helpers/records.js';
import { connect, redisUrl } from '../helpers/redis.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(60_000);

const rig = useWorkerRig('rdl');
let recordKey: string;
let client: QueueClient;
let redis: Redis;
let keys: QueueKeys;
beforeEach(() => {
  ({ recordKey, client, redis, keys } = rig);
});

/** Blocks this process's event loop for `ms` (as a SIGSTOP or a long GC would; timers and sockets wait). */
function standStill(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The pending entries of the default queue: [entry id, consumer, idle ms, deliveries]. */
async function pending(): Promise<[string, string, number, number][]> {
  return (await redis.xpending(keys.stream, 'chronos', '-', '+', 10)) as [string, string, number, number][];
}

test('a task delivered to a stopped worker’s blocking read runs once it is resumed, not after the visibility timeout', async () => {
  const block = 1000;
  const deadline = readDeadlineMs(block); // 3 s
  const w1 = await startWorker(rig, 'W1', { BLOCK_MS: block, VISIBILITY_MS: 60_000 });
  // W1 idles in its blocking read
  await waitFor(async () => /flags=\w*b\w* .*cmd=xreadgroup/.test(String(await redis.call('CLIENT', 'LIST'))), 'W1 blocked in XREADGROUP');
  w1.kill('SIGSTOP');
  let id: string;
  try {
    ({ id } = await client.enqueue('slow', { ms: 3000 }));
    // Redis delivers it to the stopped worker's read: pending for W1, its reply unread in W1's socket
    await waitFor(async () => (await pending()).some((r) => r[1] === 'W1'), 'the entry delivered to W1');
    // stopped past the read's deadline (counted from about now: the read was sent before)
    await waitFor(async () => (await pending())[0][2] > deadline + 500, 'the stop to outlast the read deadline', 10_000, 100);
  } finally {
    w1.kill('SIGCONT');
  }
  const resumedAt = Date.now();
  const start = await waitFor(
    async () => (await readRecords(redis, recordKey)).find((r) => r.phase === 'start'),
    'W1 to start the task',
    15_000,
  );
  expect([start.instance, start.id]).toEqual(['W1', id]);
  expect(start.t - resumedAt).toBeLessThan(10_000); // well before the 60 s visibility timeout
  const rows = await pending();
  expect(rows.map((r) => [r[1], Number(r[3])])).toEqual([['W1', 1]]); // delivered once: no reclaim, no poison count
  await waitFor(async () => (await readRecords(redis, recordKey)).some((r) => r.phase === 'done'), 'the task done');
  expect((await readRecords(redis, recordKey)).filter((r) => r.phase === 'start')).toHaveLength(1);
  expect(w1.output).not.toMatch(/ERROR|Fetching tasks failed|got no reply/); // the read was not judged hung
});

test('a read abandoned at its deadline (its reply held by a silent network) gives up its entry at once: the worker runs it, delivered once', async () => {
  const block = 1000;
  const deadline = readDeadlineMs(block); // 3 s
  const url = new URL(redisUrl());
  const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port) });
  try {
    const w1 = await startWorker(rig, 'W1', { CHRONOS_URL: proxy.url, BLOCK_MS: block, VISIBILITY_MS: 60_000 });
    await waitFor(
      async () => /flags=\w*b\w* .*cmd=xreadgroup/.test(String(await redis.call('CLIENT', 'LIST'))),
      'W1 blocked in XREADGROUP',
    );
    proxy.blackhole(); // W1's read stays blocked in Redis; its reply will be held
    try {
      await client.enqueue('slow', { ms: 3000 }); // straight to Redis (the rig's client does not go through the proxy)
      await waitFor(async () => (await pending()).some((r) => r[1] === 'W1'), 'the entry delivered to W1');
      // silent past the read's deadline: W1 rebuilds its blocking connection, the held reply is lost with the old one
      await waitFor(async () => (await pending())[0][2] > deadline + 1000, 'the silence to outlast the read deadline', 10_000, 100);
    } finally {
      proxy.heal();
    }
    const healedAt = Date.now();
    const start = await waitFor(
      async () => (await readRecords(redis, recordKey)).find((r) => r.phase === 'start'),
      'W1 to start the task',
      15_000,
    );
    expect(start.instance).toBe('W1');
    expect(start.t - healedAt).toBeLessThan(10_000); // well before the 60 s visibility timeout
    expect((await pending()).map((r) => [r[1], Number(r[3])])).toEqual([['W1', 1]]); // delivered once
    await waitFor(async () => (await readRecords(redis, recordKey)).some((r) => r.phase === 'done'), 'the task done');
    expect((await readRecords(redis, recordKey)).filter((r) => r.phase === 'start')).toHaveLength(1);
    expect(w1.output).toMatch(/took 1 task\(s\) Redis had delivered to it/);
    expect(w1.output).not.toMatch(/Fetching tasks failed/);
  } finally {
    await proxy.close();
  }
});

test('withDeadline: a reply that came while the event loop stood still past the deadline is taken, not judged hung', async () => {
  const r = connect();
  try {
    await r.ping();
    let hung = 0;
    const read = r.blpop(`${rig.ns}:nothing`, 0.1); // Redis answers nil after 100 ms
    const got = withDeadline(read, 300, () => hung++);
    standStill(1500); // the deadline timer is due long before this turn ends; the reply waits in the socket
    await expect(got).resolves.toBeNull();
    expect(hung).toBe(0);
  } finally {
    r.disconnect();
  }
});

test('withDeadline: a read with no reply is still judged hung at its deadline', async () => {
  const r = connect();
  try {
    await r.ping();
    let hung = 0;
    const t0 = Date.now();
    const got = withDeadline(r.blpop(`${rig.ns}:nothing`, 0), 300, () => {
      hung++;
      r.disconnect();
    });
    await expect(got).rejects.toBeInstanceOf(ReadDeadlineError);
    expect(hung).toBe(1);
    expect(Date.now() - t0).toBeLessThan(2000);
  } finally {
    r.disconnect();
  }
});
