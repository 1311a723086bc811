// Sentinel (1 primary, 1 replica, 3 sentinels, started here on loopback), three worker processes: the
// primary is SIGKILLed. Every worker must come back on the promoted replica, each connection of it:
// its heartbeat (listed by the Inspector) and its blocking reads (it runs tasks again). Before, the
// failover detector's disconnect at +switch-master could land while a connection was reconnecting
// (asking a sentinel for the primary); ioredis then ended that client for good ("Connection is
// closed." on every command, no reconnect): in trial 45 one replica of three stopped working
// entirely and another fetched no task again, both processes alive.
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { killAllChildren, startChild, type Child } from '../helpers/children.js';
import { RedisSentinel } from '../helpers/redis-cluster.js';
import { newNamespace, redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(120_000);

// reconnect attempts this far apart, ms: a connection spends most of the failover asking a sentinel for
// the primary (the window the detector's disconnect must not end it in), as a busy process's does
const RETRY_MS = 5;

let sentinel: RedisSentinel;
beforeAll(async () => {
  sentinel = await RedisSentinel.start({ replicas: 1, sentinels: 3, downAfterMs: 1000, failoverTimeoutMs: 3000 });
});
afterAll(async () => {
  await killAllChildren();
  await sentinel?.stop();
});

test('after the primary is SIGKILLed, every worker process is back on the new primary: heartbeats and fetches', async () => {
  const ns = newNamespace('senre');
  const recordKey = `${ns}-records:calls`;
  const records = new Redis(redisUrl());
  const connection = { ...sentinel.connection, maxRetriesPerRequest: null };
  const client = new QueueClient({ connection, namespace: ns });
  const inspector = new Inspector({ connection, namespace: ns });
  const names = ['w1', 'w2', 'w3'];
  const workers: Child[] = [];
  const ran = async () =>
    (await records.lrange(recordKey, 0, -1))
      .map((s) => JSON.parse(s) as { id: string; instance: string; phase: string })
      .filter((r) => r.phase === 'done');
  try {
    const sentinels = sentinel.connection.sentinels.map((s) => `${s.host}:${s.port}`).join(',');
    for (const name of names) {
      workers.push(
        await startChild('worker', name, {
          REDIS_URL: redisUrl(),
          NS: ns,
          RECORD_KEY: recordKey,
          SENTINELS: sentinels,
          SENTINEL_NAME: sentinel.name,
          CONCURRENCY: 1,
          RETRY_MS: RETRY_MS,
        }),
      );
    }
    await client.enqueue('quick', null, { taskId: 'before' });
    await waitFor(async () => (await ran()).some((r) => r.id === 'before'), 'a task run before the kill');

    const oldPort = sentinel.primaryPort();
    await [sentinel.primary, ...sentinel.replicas].find((n) => n.port === oldPort)!.kill();
    await waitFor(() => sentinel.primaryPort() !== oldPort, { what: 'the replica promoted', timeoutMs: 30_000 });

    // every worker heartbeats on the new primary
    await waitFor(async () => (await inspector.servers()).length === names.length, {
      what: 'all three workers listed by their heartbeat on the new primary',
      timeoutMs: 30_000,
    });
    // every worker fetches: nine 1 s tasks, one at a time per worker, reach each of the three
    const after = Array.from({ length: 9 }, (_, i) => `after-${i}`);
    for (const id of after) await client.enqueue('slow', { ms: 1000 }, { taskId: id });
    await waitFor(async () => (await ran()).filter((r) => r.id.startsWith('after-')).length === after.length, {
      what: 'the nine tasks enqueued after the failover to run',
      timeoutMs: 60_000,
    });
    const by = new Set((await ran()).filter((r) => r.id.startsWith('after-')).map((r) => r.instance));
    expect([...by].sort()).toEqual(names);
    const listed = (await inspector.servers()).map((s) => s.id).sort();
    expect(listed).toEqual(names);
    for (const w of workers) expect(w.alive).toBe(true);
  } finally {
    await killAllChildren();
    await client.close();
    await inspector.close();
    await records.del(recordKey);
    records.disconnect();
  }
});
