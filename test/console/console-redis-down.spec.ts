// Trial 15: the console while its Redis is down, and after. Before, every read and act answered 500
// INTERNAL with ioredis's "Reached the max retries per request limit (which is 20). Refer to
// "maxRetriesPerRequest" option for details." (the page: "Cannot reach the console API: …"). Now a
// request Redis did not serve within the client's retry bound is a 503 REDIS_UNAVAILABLE saying so, and
// the console answers again once Redis is back, with the data Redis kept.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConsoleHandler } from '../../lib/console/handler.js';
import { Inspector, QueueClient } from '../../lib/core/index.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';

describe('the console while Redis is down (trial 15)', () => {
  let redis: PrivateRedis;
  let inspector: Inspector;
  let server: Server;
  let base: string;
  const dir = mkdtempSync(join(tmpdir(), 'chronos-console-down-'));

  beforeAll(async () => {
    redis = await PrivateRedis.start(['--dir', dir]);
    // one reconnect before a command is given up, so that the outage is seen at once
    const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: 1 };
    const client = new QueueClient({ connection, namespace: 'console-down' });
    await client.enqueue('report', { n: 1 }, { queue: 'reports' });
    await client.close();
    inspector = new Inspector({ connection, namespace: 'console-down' });
    server = createServer(createConsoleHandler({ inspector }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
  });

  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    await inspector?.close();
    await redis?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a read or an act is a 503 REDIS_UNAVAILABLE saying so while Redis is down; the console answers again once it is back', async () => {
    expect((await fetch(base + 'overview')).status).toBe(200);
    await redis.stopSaving();
    const read = await fetch(base + 'queues/reports/tasks?state=pending');
    const body = (await read.json()) as { error: string; code: string };
    expect([read.status, body.code]).toEqual([503, 'REDIS_UNAVAILABLE']);
    expect(body.error).toMatch(/^Redis is unavailable: it did not serve this request within the client's retry bound \(/);
    const act = await fetch(base + 'queues/reports/pause', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect([act.status, ((await act.json()) as { code: string }).code]).toEqual([503, 'REDIS_UNAVAILABLE']);
    redis.startFrom(dir);
    await redis.answering();
    await waitFor(async () => (await fetch(base + 'overview')).status === 200, 'the console to answer again');
    const page = (await (await fetch(base + 'queues/reports/tasks?state=pending')).json()) as { tasks: { type: string }[] };
    expect(page.tasks.map((t) => t.type)).toEqual(['report']);
  });
});
