// The console's server-side guards, over HTTP against a real app: authentication on every API route,
// cross-site refusal, read-only 405, JSON-only acts, security headers, redaction.
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { startConsoleServer, type ConsoleServer } from '../../lib/console/server.js';
import { ROUTES as API_ROUTES } from '../../lib/console/api.js';
import { OPS_ROUTES } from '../../lib/console/routes-ops.js';
import { ChronosClient, InspectorService } from '../../lib/index.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { ConsoleJobs } from './console-app.js';

/** Every API route with a request that would work when allowed. */
const ROUTES: [string, string, unknown?][] = [
  ['GET', 'api/overview'],
  ['GET', 'api/queues/default/tasks?state=dead'],
  ['GET', 'api/tasks/some-id'],
  ['GET', 'api/dead-groups'],
  ['GET', 'api/schedules'],
  ['GET', 'api/schedule-page?limit=5'],
  ['GET', 'api/schedules/console.nightly'],
  ['GET', 'api/history?window=day'],
  ['GET', 'api/queues/default/history'],
  ['GET', 'api/schedule-activity'],
  ['GET', 'api/audit'],
  ['POST', 'api/queues/default/tasks/act', { action: 'retry', state: 'dead', all: true }],
  ['POST', 'api/queues/default/pause', {}],
  ['POST', 'api/queues/default/resume', {}],
  ['POST', 'api/queues/default/limits', { concurrency: 1 }],
  ['POST', 'api/schedules/console.nightly/pause', { note: 'x' }],
  ['POST', 'api/schedules/console.nightly/resume', {}],
  ['POST', 'api/schedules/console.nightly/trigger', {}],
  ['POST', 'api/schedules/console.nightly/remove', {}],
];

function call(base: string, [method, path, body]: [string, string, unknown?], headers: Record<string, string> = {}): Promise<Response> {
  return fetch(base + path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

@Injectable()
class HeaderGuard implements CanActivate {
  canActivate(ctx: ExecutionContext): boolean {
    return ctx.switchToHttp().getRequest<IncomingMessage>().headers['x-operator'] === 'yes';
  }
}

describe('console security', () => {
  let app: ChronosTestApp;
  let base: string;
  let inspector: InspectorService;

  beforeAll(async () => {
    app = await createChronosTestApp({
      http: true,
      providers: [ConsoleJobs],
      options: {
        console: {
          path: '/ops/chronos',
          guard: HeaderGuard,
          // a tenant may not see this console at all; a viewer may read, not act (roles)
          authorize: (req, act) => req.headers['x-tenant'] !== 'other' && (act === 'read' || req.headers['x-role'] !== 'viewer'),
          redact: (payload) => (payload && typeof payload === 'object' ? { ...payload, secret: '***' } : payload),
        },
      },
    });
    base = `${app.url}/ops/chronos/`;
    inspector = app.get(InspectorService);
  });

  afterAll(() => app?.close());

  const ok = { 'x-operator': 'yes' };

  test('a request the guard or authorize refuses gets 403 on every route, and nothing changes', async () => {
    for (const r of ROUTES) {
      expect([r[1], (await call(base, r)).status]).toEqual([r[1], 403]);
      expect([r[1], (await call(base, r, { ...ok, 'x-tenant': 'other' })).status]).toEqual([r[1], 403]);
    }
    expect((await fetch(base)).status).toBe(403);
    expect((await inspector.schedule('console.nightly')).paused).toBe(false);
    expect((await inspector.schedules()).map((s) => s.name)).toContain('console.nightly');
  });

  test('allowed: the page and its API answer with a strict CSP and nosniff; payloads are redacted', async () => {
    const page = await fetch(base, { headers: ok });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(
      /default-src 'self'; script-src 'self';.*object-src 'none'; frame-ancestors 'none'; base-uri 'none'/,
    );
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).not.toMatch(/<script>|<script [^>]*>[^<]/); // no inline script
    const { id } = await app.get(ChronosClient).enqueue('nobody-handles-this', { secret: 'hunter2', n: 1 }, { queue: 'elsewhere' });
    const task = (await (await fetch(`${base}api/tasks/${id}`, { headers: ok })).json()) as { payload: unknown };
    expect(task.payload).toEqual({ secret: '***', n: 1 });
    expect((await fetch(`${app.url}/ops/chronos`, { headers: ok, redirect: 'manual' })).headers.get('location')).toBe('/ops/chronos/');
  });

  test('cross-site requests are refused with 403, by Sec-Fetch-Site and by Origin', async () => {
    const pause = ROUTES.find((r) => r[1].endsWith('console.nightly/pause'))!;
    expect((await call(base, pause, { ...ok, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await call(base, pause, { ...ok, 'sec-fetch-site': 'same-site' })).status).toBe(403);
    expect((await call(base, pause, { ...ok, origin: 'http://evil.example' })).status).toBe(403);
    expect((await call(base, ['GET', 'api/overview'], { ...ok, origin: 'http://evil.example' })).status).toBe(403);
    expect((await inspector.schedule('console.nightly')).paused).toBe(false);
    // a same-origin act is done
    expect((await call(base, pause, { ...ok, origin: app.url!, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    expect((await inspector.schedule('console.nightly')).pause?.note).toBe('x');
    await inspector.resumeSchedule('console.nightly');
  });

  test('acts need POST with a JSON body', async () => {
    const r = await fetch(`${base}api/schedules/console.nightly/pause`, {
      method: 'POST',
      headers: { ...ok, 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(r.status).toBe(415);
    expect((await fetch(`${base}api/schedules/console.nightly/pause`, { headers: ok })).status).toBe(405);
    expect((await inspector.schedule('console.nightly')).paused).toBe(false);
  });

  describe('standalone', () => {
    let srv: ConsoleServer;
    let ro: ConsoleServer;
    beforeAll(async () => {
      srv = await startConsoleServer({ inspector: inspector.inspector, port: 0, basicAuth: 'ops:s3cret' });
      ro = await startConsoleServer({ inspector: inspector.inspector, port: 0, readOnly: true, warn: () => {} });
    });
    afterAll(async () => {
      await srv?.close();
      await ro?.close();
    });

    test('without credentials every route gets 401 with a Basic challenge; with them it answers', async () => {
      for (const r of ROUTES) {
        const res = await call(srv.url, r);
        expect([r[1], res.status]).toEqual([r[1], 401]);
        expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
        expect((await call(srv.url, r, { authorization: 'Basic ' + Buffer.from('ops:wrong').toString('base64') })).status).toBe(401);
      }
      expect((await fetch(srv.url)).status).toBe(401);
      const auth = { authorization: 'Basic ' + Buffer.from('ops:s3cret').toString('base64') };
      expect((await call(srv.url, ['GET', 'api/overview'], auth)).status).toBe(200);
      expect((await inspector.schedule('console.nightly')).paused).toBe(false);
    });

    test('read-only refuses every act with 405 and changes nothing', async () => {
      for (const r of ROUTES.filter((x) => x[0] === 'POST')) expect([r[1], (await call(ro.url, r)).status]).toEqual([r[1], 405]);
      expect((await call(ro.url, ['GET', 'api/overview'])).status).toBe(200);
      expect((await inspector.schedule('console.nightly')).paused).toBe(false);
      expect((await inspector.schedules()).map((s) => s.name)).toContain('console.nightly');
    });

    /** The security matrix: every API route × {no auth, wrong auth, cross-site, read-only, a read-only role}. */
    const basic = (cred: string) => ({ authorization: 'Basic ' + Buffer.from(cred).toString('base64') });
    const MATRIX: [string, () => string, Record<string, string>, (method: string) => number | 'answered'][] = [
      ['standalone, no auth', () => srv.url, {}, () => 401],
      ['standalone, wrong auth', () => srv.url, basic('ops:nope'), () => 401],
      ['standalone, cross-site', () => srv.url, { ...basic('ops:s3cret'), 'sec-fetch-site': 'cross-site' }, () => 403],
      ['standalone, other Origin', () => srv.url, { ...basic('ops:s3cret'), origin: 'http://evil.example' }, () => 403],
      ['read-only', () => ro.url, {}, (m) => (m === 'POST' ? 405 : 'answered')],
      ['read-only, cross-site', () => ro.url, { 'sec-fetch-site': 'cross-site' }, () => 403],
      ['mounted, no auth', () => base, {}, () => 403],
      ['mounted, wrong auth', () => base, { 'x-operator': 'no' }, () => 403],
      ['mounted, not authorized', () => base, { ...ok, 'x-tenant': 'other' }, () => 403],
      ['mounted, cross-site', () => base, { ...ok, 'sec-fetch-site': 'cross-site' }, () => 403],
      ['mounted, other Origin', () => base, { ...ok, origin: 'http://evil.example' }, () => 403],
      [
        'mounted, read-only role (authorize(req, act) allows read only)',
        () => base,
        { ...ok, 'x-role': 'viewer' },
        (m) => (m === 'POST' ? 403 : 'answered'),
      ],
    ];
    test('the matrix covers every API route the console has (trial 9: the limits route was missing, and unguarded)', () => {
      const uncovered = [...API_ROUTES, ...OPS_ROUTES].filter(
        (r) => !ROUTES.some(([method, path]) => method === r.method && r.pattern.test('/' + path.slice(4).split('?')[0])),
      );
      expect(uncovered.map((r) => `${r.method} ${r.pattern.source}`)).toEqual([]);
    });

    test.each(MATRIX)('matrix: %s, on every API route', async (_name, url, headers, expected) => {
      const got: string[] = [];
      const want: string[] = [];
      for (const r of ROUTES) {
        const res = await call(url(), r, headers);
        await res.arrayBuffer();
        const status = expected(r[0]) === 'answered' && [200, 404].includes(res.status) ? 'answered' : res.status; // 404: some-id
        got.push(`${r[0]} ${r[1]} ${status} ${res.headers.get('x-content-type-options')}`);
        want.push(`${r[0]} ${r[1]} ${expected(r[0])} nosniff`);
      }
      expect(got).toEqual(want);
      expect((await inspector.schedule('console.nightly')).paused).toBe(false);
      expect((await inspector.schedules()).map((s) => s.name)).toContain('console.nightly');
      expect((await inspector.queues()).some((q) => q.paused)).toBe(false);
      expect(await inspector.queueLimits('default')).toEqual({}); // a refused limits act set nothing
    });

    test('without authentication it binds to loopback only', async () => {
      await expect(startConsoleServer({ inspector: inspector.inspector, port: 0, host: '0.0.0.0' })).rejects.toThrow(
        /without authentication/,
      );
    });
  });
});
