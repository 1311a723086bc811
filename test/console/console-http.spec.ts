// The console's HTTP surface as an operator checks it (trial 41): the Allow header of a 405, the
// cross-site check behind a reverse proxy (Host rewritten, X-Forwarded-Host, a default port in Host)
// and without an Origin (a Referer). Over plain HTTP against the framework-free handler on node:http.
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsoleHandler } from '../../lib/console/handler.js';
import { Inspector, QueueClient } from '../../lib/core/index.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One HTTP request with exactly these headers (fetch cannot set `Host`, nor `Origin` and `Sec-Fetch-Site` as a browser does). */
function raw(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, setHost: headers.host === undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const json = { 'content-type': 'application/json' };

describe('console HTTP surface', () => {
  const namespace = newNamespace('console-http');
  let client: QueueClient;
  let inspector: Inspector;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    client = new QueueClient({ connection: redisUrl(), namespace });
    await client.enqueue('later', { n: 1 }, { delay: 3_600_000 }); // makes the queue `default` known
    inspector = new Inspector({ connection: redisUrl(), namespace });
    const handler = createConsoleHandler({ inspector, actor: (req) => `console:${String(req.headers['x-user'] ?? 'anonymous')}` });
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await inspector?.close();
    await client?.close();
    await deleteNamespace(namespace);
  });

  test('a 405 names in Allow every method the route answers: HEAD with GET (RFC 9110: Allow lists them all)', async () => {
    for (const path of ['api/overview', 'api/queues/default/tasks', 'api/audit']) {
      const r = await raw(base + path, 'PUT', {});
      expect([path, r.status, r.headers.allow]).toEqual([path, 405, 'GET, HEAD']);
      expect((await raw(base + path + '?state=scheduled', 'HEAD', {})).status).toBe(200);
    }
    const act = await raw(base + 'api/queues/default/pause', 'GET', {});
    expect([act.status, act.headers.allow]).toEqual([405, 'POST']);
  });

  test('a request target starting with // is a path, not a URL with a host: //x/api/… is not the API', async () => {
    // new URL('//x/chronos/api/…', base) took `x` as a host and served /chronos/api/…: a front check by
    // path prefix (an auth middleware on /chronos, a proxy location) passed it, the console acted
    const prefixed = createConsoleHandler({ inspector, basePath: '/chronos' });
    const front = createServer((req, res) => {
      if ((req.url ?? '').startsWith('/chronos')) return void res.writeHead(401).end(); // the operator's guard of /chronos
      prefixed(req, res, () => void res.writeHead(404).end());
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
      expect((await raw(`${url}/chronos/api/queues/default/pause`, 'POST', json, '{}')).status).toBe(401);
      expect((await raw(`${url}//x/chronos/api/queues/default/pause`, 'POST', json, '{}')).status).toBe(404);
      expect((await inspector.queues()).find((q) => q.name === 'default')?.paused).toBe(false);
    } finally {
      await new Promise<void>((resolve) => front.close(() => resolve()));
    }
    const r = await raw(`${base}/x/api/overview`, 'GET', {});
    expect([r.status, JSON.parse(r.body).code]).toEqual([404, 'NOT_FOUND']);
    // nor a redirect to another site: //evil.example was taken as the page `/` asked without its slash
    const away = await raw(`${base}/evil.example`, 'GET', {});
    expect([away.status, away.headers.location]).toEqual([404, undefined]);
  });

  describe('behind a reverse proxy', () => {
    const resume = 'api/queues/default/resume';
    const act = (headers: Record<string, string>): Promise<Raw> => raw(base + resume, 'POST', { ...json, ...headers }, '{}');

    test('a same-origin act through a proxy that rewrites Host (nginx proxy_pass default) is done', async () => {
      // the browser says same-origin (a header no page can set); Origin is the public name, Host the upstream's
      const r = await act({ host: '127.0.0.1:8080', origin: 'https://ops.example.com', 'sec-fetch-site': 'same-origin' });
      expect([r.status, r.body]).toEqual([200, '{"ok":true,"changed":false}']);
    });

    test('without Sec-Fetch-Site (older browsers), Origin matching X-Forwarded-Host is same-origin; another is not', async () => {
      const ok = await act({ host: '127.0.0.1:8080', origin: 'https://ops.example.com', 'x-forwarded-host': 'ops.example.com' });
      expect(ok.status).toBe(200);
      const evil = await act({ host: '127.0.0.1:8080', origin: 'https://evil.example', 'x-forwarded-host': 'ops.example.com' });
      expect([evil.status, JSON.parse(evil.body).code]).toEqual([403, 'FORBIDDEN']);
    });

    test("a Host with the default port of the Origin's scheme (ops.example.com:443) is the same host", async () => {
      expect((await act({ host: 'ops.example.com:443', origin: 'https://ops.example.com' })).status).toBe(200);
      expect((await act({ host: 'ops.example.com:80', origin: 'http://ops.example.com' })).status).toBe(200);
      // another port is another origin
      expect((await act({ host: 'ops.example.com:8443', origin: 'https://ops.example.com' })).status).toBe(403);
    });

    test('a cross-site request is refused whatever the proxy headers: Sec-Fetch-Site cross-site, Origin null', async () => {
      const site = await act({ host: 'ops.example.com', origin: 'https://ops.example.com', 'sec-fetch-site': 'cross-site' });
      expect(site.status).toBe(403);
      expect((await act({ host: 'ops.example.com', origin: 'null', 'x-forwarded-host': 'ops.example.com' })).status).toBe(403);
    });
  });

  test('without an Origin, a Referer from another site is refused; the same host or none is not', async () => {
    const pause = 'api/queues/default/pause';
    const evil = await raw(base + pause, 'POST', { ...json, referer: 'https://evil.example/page' }, '{}');
    expect([evil.status, JSON.parse(evil.body).error]).toEqual([403, expect.stringMatching(/cross-site request refused \(Referer/)]);
    expect((await inspector.queues()).find((q) => q.name === 'default')?.paused).toBe(false);
    const own = await raw(base + pause, 'POST', { ...json, referer: `${base}#/queues/default/pending` }, '{}');
    expect(own.status).toBe(200);
    const none = await raw(base + 'api/queues/default/resume', 'POST', json, '{}'); // curl, or Referrer-Policy: no-referrer
    expect(none.status).toBe(200);
  });
});
