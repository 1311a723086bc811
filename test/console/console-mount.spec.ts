// The console mounted under the app's global prefix (trial 31): at `/admin/chronos/`, and at the
// app's root under the prefix (`path: '/'` → `/admin/`), where the app's own routes live beside it
// and keep their JSON bodies and their own headers; the console's acts still read their body after
// the guards.
import { Body, Controller, Get, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ChronosModule, InspectorService } from '../../lib/index.js';
import { fastOptions } from '../helpers/nest-app.js';
import { deleteNamespace, newNamespace } from '../helpers/redis.js';

@Controller('things')
class ThingsController {
  @Get()
  list(): { things: string[] } {
    return { things: ['a'] };
  }

  @Post()
  add(@Body() body: unknown): { got: unknown } {
    return { got: body ?? null };
  }
}

/** An app with a global prefix, its own JSON route, and the console at `path` (a viewer may read, not act). */
async function prefixedApp(path: string): Promise<{ app: INestApplication; url: string; namespace: string }> {
  const namespace = newNamespace('mount');
  const module = await Test.createTestingModule({
    imports: [
      ChronosModule.forRoot({
        ...fastOptions(namespace),
        worker: false,
        scheduler: false,
        console: { path, authorize: (req, act) => act === 'read' || req.headers['x-role'] === 'operator' },
      }),
    ],
    controllers: [ThingsController],
  }).compile();
  const app = module.createNestApplication({ logger: false });
  app.setGlobalPrefix('admin');
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}`, namespace };
}

const json = { 'content-type': 'application/json' };

describe.each([
  ['/chronos', '/admin/chronos/'],
  ['/', '/admin/'],
])('the console at path %s under setGlobalPrefix("admin")', (path, at) => {
  let app: INestApplication;
  let url: string;
  let namespace: string;
  beforeAll(async () => ({ app, url, namespace } = await prefixedApp(path)));
  afterAll(async () => {
    await app?.close();
    await deleteNamespace(namespace);
  });

  test(`the app's own routes keep their JSON body and their headers; the console answers at ${at}`, async () => {
    const posted = await fetch(`${url}/admin/things`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'b' }) });
    expect([posted.status, await posted.json()]).toEqual([201, { got: { name: 'b' } }]);
    const listed = await fetch(`${url}/admin/things`);
    expect([listed.status, listed.headers.get('content-security-policy')]).toEqual([200, null]);
    const page = await fetch(url + at);
    expect([page.status, page.headers.get('content-security-policy')]).toEqual([200, expect.stringContaining("script-src 'self'")]);
    const overview = await fetch(`${url}${at}api/overview`);
    expect([overview.status, ((await overview.json()) as { namespace: string }).namespace]).toEqual([200, namespace]);
  });

  test("the console's acts: refused to a viewer, done for an operator (the body read by the console)", async () => {
    const inspector = app.get(InspectorService);
    await inspector.inspector.addSchedule({ name: 'digest', spec: '0 3 * * *', type: 'mail.send', queue: 'mail' });
    const pause = `${url}${at}api/schedules/digest/pause`;
    const refused = await fetch(pause, { method: 'POST', headers: json, body: JSON.stringify({ note: 'viewer' }) });
    expect(refused.status).toBe(403);
    expect((await inspector.schedule('digest')).paused).toBe(false);
    const done = await fetch(pause, { method: 'POST', headers: { ...json, 'x-role': 'operator' }, body: JSON.stringify({ note: 'n' }) });
    expect([done.status, await done.json()]).toEqual([200, { ok: true, changed: true }]);
    expect((await inspector.schedule('digest')).pause?.note).toBe('n');
  });
});
