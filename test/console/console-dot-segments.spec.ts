// A request path with a "." or ".." segment (raw or %2e) or a backslash is a 400: the console never
// serves another path than the one the request names. Trial 45: WHATWG URL parsing resolved
// `/chronos/x/%2e%2e/api/…` and `/chronos/x\..\api/…` to `/chronos/api/…`, where a proxy or router
// in front (which does not resolve them) saw another path: a rule of its that kept some users away
// from `/chronos/api/schedules/` did not apply, and the act was done.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsoleHandler } from '../../lib/console/handler.js';
import { QueueRig } from '../helpers/queue.js';

let rig: QueueRig;
let server: Server;
let port: number;

beforeEach(async () => {
  rig = new QueueRig();
  await rig.client.enqueue('mail.send', {}, { queue: 'mail.v2', delay: 3_600_000 });
  await rig.inspector.addSchedule({ name: 'digest', spec: '0 3 * * *', type: 'mail.send', queue: 'mail.v2' });
  const handler = createConsoleHandler({ inspector: rig.inspector, basePath: '/chronos' });
  server = createServer((req, res) => {
    // the front's rule, by path prefix (as a proxy's `location`): nobody removes schedules here
    if (req.method === 'POST' && (req.url ?? '').startsWith('/chronos/api/schedules/')) return void res.writeHead(403).end();
    handler(req, res, () => res.writeHead(404).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rig.close();
});

/** One request with its path exactly as given (fetch would resolve the dot segments first, as a browser does). */
function raw(method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json' };
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test.each([
  '/chronos/x/%2e%2e/api/schedules/digest/remove',
  '/chronos/x/%2E./api/schedules/digest/remove',
  '/chronos/x/../api/schedules/digest/remove',
  '/chronos/x\\..\\api/schedules/digest/remove',
  '/chronos/./api/schedules/digest/remove',
])('POST %s: a 400 naming the path, and the schedule is still there', async (path) => {
  const r = await raw('POST', path, '{}');
  expect(r.status).toBe(400);
  expect(JSON.parse(r.body)).toEqual({
    error: expect.stringContaining(`path: ${JSON.stringify(path.slice('/chronos'.length))} has a "." or ".." segment or a backslash`),
    code: 'BAD_REQUEST',
  });
  expect((await rig.inspector.schedule('digest')).name).toBe('digest');
});

test('a read through a dot segment is a 400 too; names with dots and %-escapes are served', async () => {
  expect((await raw('GET', '/chronos/x/%2e%2e/api/overview')).status).toBe(400);
  expect((await raw('GET', '/chronos/%2e%2e/chronos/index.html')).status).toBe(400);
  expect((await raw('GET', '/chronos/api/queues/mail.v2/tasks?state=scheduled')).status).toBe(200);
  expect((await raw('GET', '/chronos/api/queues/mail%2Ev2/tasks?state=scheduled')).status).toBe(200);
  expect((await raw('GET', '/chronos/api/tasks/a..b')).status).toBe(404); // no such task: looked up, not refused
  expect((await raw('GET', '/chronos/api/tasks/..%2Fx')).status).toBe(404);
  expect((await raw('POST', '/chronos/api/schedules/digest/remove', '{}')).status).toBe(403); // the front's rule
});
