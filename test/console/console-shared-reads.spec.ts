// `GET api/schedules` and `GET api/schedule-activity` without a query read every schedule (O(schedules),
// kept for API users; the page uses neither). Requests that ask while one such read is in flight share
// it: a viewer's parallel requests cost one read, not one each. Trial 45: 10 parallel GET api/schedules
// over 20,000 schedules took 20 s and +623 MB of the app's memory (78 MB for one).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsoleHandler } from '../../lib/console/handler.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

const SCHEDULES = 200;

let rig: QueueRig;
let proxy: TcpProxy;
let inspector: Inspector;
let server: Server;
let base: string;

beforeAll(async () => {
  rig = new QueueRig();
  for (let i = 0; i < SCHEDULES; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) => rig.inspector.addSchedule({ name: `s${i + j}`, spec: '*/5 * * * *', type: 'x', queue: 'q' })),
    );
  }
  const url = new URL(redisUrl());
  proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 6379) });
  inspector = new Inspector({ connection: proxy.url, namespace: rig.namespace });
  server = createServer(createConsoleHandler({ inspector }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await inspector.close();
  await proxy.close();
  await rig.close();
});

/** What `run` read from Redis, in bytes, and its answer. */
async function bytesOf<T>(run: () => Promise<T>): Promise<{ bytes: number; answer: T }> {
  const before = proxy.bytesFromTarget;
  const answer = await run();
  return { bytes: proxy.bytesFromTarget - before, answer };
}

const get = async (path: string): Promise<string> => {
  const res = await fetch(base + path);
  expect(res.status).toBe(200);
  return res.text();
};

test.each(['schedules', 'schedule-activity'])('5 parallel GET api/%s share one read of every schedule', async (path) => {
  const one = await bytesOf(() => get(path));
  expect((JSON.parse(one.answer) as unknown[]).length).toBe(SCHEDULES);
  const five = await bytesOf(() => Promise.all(Array.from({ length: 5 }, () => get(path))));
  console.log(`GET api/${path} over ${SCHEDULES} schedules: one read ${one.bytes} B from Redis, 5 parallel ${five.bytes} B`);
  expect(five.bytes).toBeLessThan(2 * one.bytes);
  expect(new Set(five.answer.map((a) => (JSON.parse(a) as { name: string }[]).map((s) => s.name).join())).size).toBe(1);
  // the next request after them reads anew (a change is seen)
  await rig.inspector.addSchedule({ name: 'late', spec: '0 3 * * *', type: 'x', queue: 'q' });
  expect((JSON.parse(await get(path)) as { name: string }[]).some((s) => s.name === 'late')).toBe(true);
  await rig.inspector.removeSchedule('late');
});
