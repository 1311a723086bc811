// The console's doors (issue 24): DNS rebinding on the standalone console, the body read before the
// guard in Nest, responses under the mount without the security headers, a malformed %-escape.
import { Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { startConsoleServer, type ConsoleServer } from '../../lib/console/server.js';
import { ChronosClient, InspectorService, SchedulerService } from '../../lib/index.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { GlobalKeys } from '../../lib/core/redis/keys.js';
import { ConsoleJobs } from './console-app.js';

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One HTTP request with exactly these headers (fetch cannot set `Host`). */
function raw(url: string, method: string, headers: Record<string, string>, body?: string | Buffer): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, setHost: headers.host === undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    // the server may answer (401, 413) and close before the whole body is written
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    req.end(body);
  });
}

@Injectable()
class TokenGuard implements CanActivate {
  canActivate(ctx: ExecutionContext): boolean {
    if (ctx.switchToHttp().getRequest<IncomingMessage>().headers['x-operator'] !== 'yes') throw new UnauthorizedException();
    return true;
  }
}

const json = { 'content-type': 'application/json' };
const big = JSON.stringify({ note: 'x'.repeat(200 * 1024) });

describe('console doors', () => {
  let app: ChronosTestApp;
  let base: string;
  let inspector: InspectorService;

  beforeAll(async () => {
    app = await createChronosTestApp({
      http: true,
      providers: [ConsoleJobs],
      options: { console: { path: '/chronos', guard: TokenGuard } },
    });
    base = `${app.url}/chronos/`;
    inspector = app.get(InspectorService);
  });

  afterAll(() => app?.close());

  describe('mounted in Nest: authentication comes before the body', () => {
    const pause = 'api/schedules/console.nightly/pause';

    test('an unauthenticated POST gets 401 whatever its body (malformed, 200 KB)', async () => {
      expect((await raw(base + pause, 'POST', json, '{not json')).status).toBe(401);
      expect((await raw(base + pause, 'POST', json, big)).status).toBe(401);
      expect((await raw(base + pause, 'POST', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1')).status).toBe(401);
      expect((await inspector.schedule('console.nightly')).paused).toBe(false);
    });

    test("authenticated, the console's own body handling answers: 400 for bad JSON, 413 over 64 KB", async () => {
      const bad = await raw(base + pause, 'POST', { ...json, 'x-operator': 'yes' }, '{not json');
      expect([bad.status, JSON.parse(bad.body)]).toEqual([400, { error: 'body: not valid JSON', code: 'BAD_REQUEST' }]);
      const large = await raw(base + pause, 'POST', { ...json, 'x-operator': 'yes' }, big);
      expect(large.status).toBe(413);
      expect(JSON.parse(large.body).error).toMatch(/more than 65536 bytes/);
      expect((await inspector.schedule('console.nightly')).paused).toBe(false);
      // the mount path matches without regard to case, as express routes it
      const upper = await raw(`${app.url}/CHRONOS/${pause}`, 'POST', { ...json, 'x-operator': 'yes' }, big);
      expect(upper.status).toBe(413);
      // and a good act still works
      const done = await raw(base + pause, 'POST', { ...json, 'x-operator': 'yes' }, JSON.stringify({ note: 'doors' }));
      expect(done.status).toBe(200);
      expect((await inspector.schedule('console.nightly')).pause?.note).toBe('doors');
      await inspector.resumeSchedule('console.nightly');
    });
  });

  test('every response under the mount carries the security headers, Nest’s 404 and error replies too', async () => {
    const answers = [
      await raw(`${base}no-such-file.js`, 'GET', { 'x-operator': 'yes' }),
      await raw(`${base}no-such-file.js`, 'GET', {}),
      await raw(`${base}api/schedules/console.nightly/pause`, 'POST', { ...json, 'x-operator': 'yes' }, '{not json'),
      await raw(`${base}api/schedules/console.nightly/pause`, 'POST', { ...json, 'x-operator': 'yes' }, big),
      await raw(`${base}api/overview`, 'GET', { 'x-operator': 'yes' }),
    ];
    expect(answers.map((a) => a.status)).toEqual([404, 401, 400, 413, 200]);
    for (const a of answers) {
      expect(a.headers['content-security-policy']).toMatch(/^default-src 'self'; script-src 'self';/);
      expect(a.headers['x-content-type-options']).toBe('nosniff');
      expect(a.headers['x-frame-options']).toBe('DENY');
    }
  });

  test('a queue named by hand that does not exist is a 404 naming it (as the CLI says), never paused; a limit that is not a number names its text', async () => {
    const ops = { 'x-operator': 'yes' };
    const pause = await raw(`${base}api/queues/nosuch/pause`, 'POST', { ...json, ...ops }, '{}');
    expect([pause.status, JSON.parse(pause.body)]).toEqual([
      404,
      {
        error: expect.stringMatching(/^Queue "nosuch" not found in namespace "[^"]+" \((known: .*|it has no queue yet)\)$/),
        code: 'QUEUE_NOT_FOUND',
      },
    ]);
    expect((await inspector.inspector.queueNames()).includes('nosuch')).toBe(false);
    expect((await inspector.queues()).some((q) => q.name === 'nosuch')).toBe(false);
    expect((await raw(`${base}api/queues/nosuch/resume`, 'POST', { ...json, ...ops }, '{}')).status).toBe(404);
    expect((await raw(`${base}api/queues/nosuch/tasks?state=pending`, 'GET', ops)).status).toBe(404);
    expect((await raw(`${base}api/queues/nosuch/history?window=day`, 'GET', ops)).status).toBe(404);
    const act = await raw(
      `${base}api/queues/nosuch/tasks/act`,
      'POST',
      { ...json, ...ops },
      '{"action":"delete","state":"dead","all":true}',
    );
    expect([act.status, JSON.parse(act.body).code]).toEqual([404, 'QUEUE_NOT_FOUND']);
    const audit = await raw(`${base}api/audit?limit=abc`, 'GET', ops);
    expect([audit.status, JSON.parse(audit.body)]).toEqual([400, { error: 'limit: expected an integer, got "abc"', code: 'BAD_REQUEST' }]);
    const limit = await raw(`${base}api/schedule-page?limit=abc`, 'GET', ops);
    expect([limit.status, JSON.parse(limit.body).error]).toEqual([400, 'limit: expected an integer, got "abc"']);
  });

  test('a task act with both ids and all: true (or a filter with ids) is a 400 naming the conflict, and nothing is touched (trial 4 F4)', async () => {
    const ops = { ...json, 'x-operator': 'yes' };
    const client = app.get(ChronosClient);
    const named = await client.enqueue('hold', {}, { delay: 3_600_000 });
    const other = await client.enqueue('hold', {}, { delay: 3_600_000 });
    const act = (body: object): Promise<Raw> => raw(`${base}api/queues/default/tasks/act`, 'POST', ops, JSON.stringify(body));
    const both = await act({ action: 'delete', state: 'scheduled', all: true, ids: [named.id] });
    expect([both.status, JSON.parse(both.body)]).toEqual([400, { error: 'give ids or all: true, not both', code: 'BAD_REQUEST' }]);
    const filtered = await act({ action: 'delete', state: 'scheduled', ids: [named.id], type: 'other' });
    expect([filtered.status, JSON.parse(filtered.body)]).toEqual([
      400,
      { error: 'type, error and group go with all: true, not with ids', code: 'BAD_REQUEST' },
    ]);
    const left = (await inspector.inspector.tasks('default', 'scheduled', { limit: 1000 })).map((t) => t.id);
    expect(left).toEqual(expect.arrayContaining([named.id, other.id]));
    // trial 9: the state named is the one acted on (run with state retry ran a scheduled task), and one of
    // many that cannot be done is named with why (was { count: 0, ids: [] }); a flag is true or false
    const wrong = await act({ action: 'run', state: 'retry', ids: [other.id] });
    expect([wrong.status, JSON.parse(wrong.body).code]).toEqual([404, 'TASK_NOT_FOUND']);
    const many = await act({ action: 'run', state: 'retry', ids: [other.id, 'nope-1'] });
    expect([many.status, JSON.parse(many.body)]).toEqual([
      200,
      { count: 0, ids: [], skipped: [expect.objectContaining({ id: other.id }), expect.objectContaining({ id: 'nope-1' })] },
    ]);
    expect((await inspector.inspector.findTask(other.id))?.state).toBe('scheduled');
    const forced = await raw(`${base}api/schedules/nosuch/remove`, 'POST', ops, '{"force":"yes"}');
    expect([forced.status, JSON.parse(forced.body).error]).toEqual([400, 'force: expected true or false, got "yes"']);
    const one = await act({ action: 'delete', state: 'scheduled', ids: [named.id] });
    expect([one.status, JSON.parse(one.body)]).toEqual([200, { count: 1, ids: [named.id] }]);
    await inspector.inspector.deleteTask('default', other.id, { state: 'scheduled' });
    // limits: a queue nobody uses is a 404, as for pause (trial 9: accepted)
    expect((await raw(`${base}api/queues/nosuch/limits`, 'POST', ops, '{"concurrency":2}')).status).toBe(404);
    expect(await inspector.inspector.queueLimits('nosuch')).toEqual({});
    // the audit trail refuses a filter no entry can match
    expect((await raw(`${base}api/audit?result=maybe`, 'GET', ops)).status).toBe(400);
  });

  test('a task act whose all or ids is malformed is a 400 naming the value (trial 15), and nothing is touched', async () => {
    const ops = { ...json, 'x-operator': 'yes' };
    const task = await app.get(ChronosClient).enqueue('hold', {}, { delay: 3_600_000 });
    const act = async (body: object): Promise<[number, string]> => {
      const r = await raw(`${base}api/queues/default/tasks/act`, 'POST', ops, JSON.stringify(body));
      return [r.status, JSON.parse(r.body).error];
    };
    const scheduled = { action: 'delete', state: 'scheduled' };
    expect(await act({ ...scheduled, all: 'yes' })).toEqual([400, 'all: expected true or false, got "yes"']);
    expect(await act({ ...scheduled, ids: task.id })).toEqual([
      400,
      `ids: expected an array of 1-1000 task ids (or all: true), got ${JSON.stringify(task.id)}`,
    ]);
    expect(await act({ ...scheduled, ids: [] })).toEqual([400, 'ids: expected 1-1000 task ids, got 0']);
    expect(await act({ ...scheduled, ids: Array(1001).fill(task.id) })).toEqual([400, 'ids: expected 1-1000 task ids, got 1001']);
    expect(await act({ ...scheduled, ids: [task.id, 7] })).toEqual([400, 'ids[1]: expected a task id (a non-empty string), got 7']);
    expect(await act({ ...scheduled, ids: [task.id, ''] })).toEqual([400, 'ids[1]: expected a task id (a non-empty string), got ""']);
    expect((await inspector.inspector.findTask(task.id))?.state).toBe('scheduled');
    await inspector.inspector.deleteTask('default', task.id, { state: 'scheduled' });
  });

  test('a queue or schedule may not be named "." or ".." (trial 15: the console listed such a queue, but a URL cannot address it)', async () => {
    const client = app.get(ChronosClient);
    for (const queue of ['.', '..']) {
      await expect(client.enqueue('hold', {}, { queue })).rejects.toThrow(
        `queue: expected 1-200 characters of [A-Za-z0-9_.:-], not "." or "..", got ${JSON.stringify(queue)}`,
      );
    }
    await expect(app.get(SchedulerService).addSchedule({ name: '..', spec: '0 3 * * *', type: 'hold' })).rejects.toThrow(
      'name: expected 1-200 characters of [A-Za-z0-9_.:-], not "." or ".."',
    );
    // names that only start with dots are names, and a dot prefix still filters them
    expect((await client.enqueue('hold', {}, { queue: '..q', delay: 3_600_000 })).queue).toBe('..q');
    expect((await inspector.inspector.schedulePage({ prefix: '..' })).items).toEqual([]);
    const page = await raw(`${base}api/queues/..q/tasks?state=scheduled`, 'GET', { 'x-operator': 'yes' });
    expect([page.status, JSON.parse(page.body).tasks.length]).toEqual([200, 1]);
    // a queue '..' made before is still read (the overview, the CLI), not an error for the whole namespace
    await inspector.inspector.redis.sadd(new GlobalKeys(app.namespace).queues, '..');
    expect((await inspector.inspector.queues()).map((q) => q.name)).toContain('..');
    const overview = await raw(`${base}api/overview`, 'GET', { 'x-operator': 'yes' });
    expect(overview.status).toBe(200);
  });

  test("every error reply carries a code: the Chronos error's own, else the one of its HTTP status", async () => {
    const ops = { 'x-operator': 'yes' };
    const replies = [
      await raw(`${base}api/tasks/nope`, 'GET', ops),
      await raw(`${base}api/tasks/nope?queue=default`, 'GET', ops),
      await raw(`${base}api/dead-groups?queue=nosuch`, 'GET', ops),
      await raw(`${base}api/no-such-route`, 'GET', ops),
      await raw(`${base}api/schedule-page?label=a%20b=1`, 'GET', ops),
      await raw(`${base}api/schedules/console.nightly/pause`, 'POST', { ...ops, 'content-type': 'text/plain' }, '{}'),
      await raw(`${base}api/overview`, 'POST', ops, '{}'),
      await raw(`${base}api/overview`, 'GET', {}),
    ];
    expect(replies.map((r) => [r.status, JSON.parse(r.body).code])).toEqual([
      [404, 'TASK_NOT_FOUND'],
      [404, 'TASK_NOT_FOUND'],
      [404, 'QUEUE_NOT_FOUND'],
      [404, 'NOT_FOUND'],
      [400, 'BAD_REQUEST'],
      [415, 'UNSUPPORTED_MEDIA_TYPE'],
      [405, 'METHOD_NOT_ALLOWED'],
      [401, 'UNAUTHORIZED'],
    ]);
    // a task the console cannot find is named as the Inspector and the CLI name it
    expect(JSON.parse(replies[0].body).error).toBe('Task nope not found in any queue');
    expect(JSON.parse(replies[1].body).error).toBe('Task nope not found in queue "default"');
  });

  test('a malformed %-escape in a path parameter is a 400 naming it, not a 500', async () => {
    const r = await raw(`${base}api/tasks/%E0%A4%A`, 'GET', { 'x-operator': 'yes' });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).error).toBe('path: malformed %-escape in "%E0%A4%A"');
    const s = await raw(`${base}api/schedules/%FF/pause`, 'POST', { ...json, 'x-operator': 'yes' }, '{}');
    expect(s.status).toBe(400);
  });

  describe('standalone without credentials: DNS rebinding', () => {
    let srv: ConsoleServer;
    let named: ConsoleServer;
    beforeAll(async () => {
      srv = await startConsoleServer({ inspector: inspector.inspector, port: 0, warn: () => {} });
      named = await startConsoleServer({ inspector: inspector.inspector, port: 0, warn: () => {}, allowedHosts: ['ops.internal'] });
    });
    afterAll(async () => {
      await srv?.close();
      await named?.close();
    });

    test('a request whose Host is not a name it serves is refused with 421, reads and acts, and nothing changes', async () => {
      const port = new URL(srv.url).port;
      const evil = { host: `rebind.example:${port}`, origin: `http://rebind.example:${port}` };
      const read = await raw(`${srv.url}api/overview`, 'GET', evil);
      expect(read.status).toBe(421);
      expect(JSON.parse(read.body).error).toMatch(/rebind\.example/);
      expect(JSON.parse(read.body).code).toBe('MISDIRECTED_REQUEST');
      expect(read.headers['content-security-policy']).toBeDefined();
      expect((await raw(srv.url, 'GET', evil)).status).toBe(421);
      const act = await raw(`${srv.url}api/queues/default/pause`, 'POST', { ...evil, ...json }, '{}');
      expect(act.status).toBe(421);
      expect((await inspector.queues()).find((q) => q.name === 'default')?.paused ?? false).toBe(false);
      expect((await raw(`${srv.url}api/overview`, 'GET', { host: `ops.internal:${port}` })).status).toBe(421);
    });

    test('the bound address, localhost and the names given are served', async () => {
      const port = new URL(srv.url).port;
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST.:${port}`, '127.0.0.1'])
        expect([host, (await raw(`${srv.url}api/overview`, 'GET', { host })).status]).toEqual([host, 200]);
      const p2 = new URL(named.url).port;
      expect((await raw(`${named.url}api/overview`, 'GET', { host: `ops.internal:${p2}` })).status).toBe(200);
      expect((await raw(`${named.url}api/overview`, 'GET', { host: `localhost:${p2}` })).status).toBe(200);
      expect((await raw(`${named.url}api/overview`, 'GET', { host: `other.internal:${p2}` })).status).toBe(421);
    });
  });
});
