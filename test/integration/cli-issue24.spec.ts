// The `chronos` CLI (issue 24): unknown queues refused, paused schedules without next runs, error
// wording. A child process (dist/lib/cli/main.js) against its own seeded namespace, as cli.spec.ts.
import { spawn } from 'node:child_process';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { seedDemo, type Seeded } from '../fixtures/cli-seed.js';
import { CLI_MAIN, cliRunner } from '../helpers/cli.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

let ns: string;
let seeded: Seeded;
const { chronos, json } = cliRunner(() => ns);

beforeAll(async () => {
  ns = newNamespace('cli');
  seeded = await seedDemo(redisUrl(), ns);
});
afterAll(async () => {
  await seeded.stop();
  await deleteNamespace(ns);
});

test('issue 24: a queue name that is not known is refused (pause, resume, task ls, --all acts, dead groups); --force pauses ahead', async () => {
  const known = 'known: default, emails, reports';
  const typo = await chronos('queue', 'pause', 'defualt');
  expect([typo.code, typo.out]).toEqual([1, '']);
  expect(typo.err).toBe(
    `error: Queue "defualt" not found in namespace "${ns}" (${known}); pass --force to pause it before its first task\n`,
  );
  expect((await chronos('queue', 'resume', 'defualt')).code).toBe(1);
  const ls = await chronos('task', 'ls', '--queue', 'nosuchqueue', '--state', 'dead');
  expect([ls.code, ls.out, ls.err]).toEqual([1, '', `error: Queue "nosuchqueue" not found in namespace "${ns}" (${known})\n`]);
  expect((await chronos('task', 'retry', '--all', '--queue', 'nosuchqueue', '--yes')).code).toBe(1);
  // dead groups of one queue: a typo is refused as for task ls, never "No dead tasks."
  const groups = await chronos('dead', 'groups', '--queue', 'nosuchqueue');
  expect([groups.code, groups.out, groups.err]).toEqual([1, '', `error: Queue "nosuchqueue" not found in namespace "${ns}" (${known})\n`]);
  expect((await chronos('dead', 'groups', '--queue', 'emails')).code).toBe(0);
  expect((await json<{ name: string }[]>('queue', 'ls')).map((q) => q.name)).toEqual(['default', 'emails', 'reports']);
  expect(await json('queue', 'pause', 'later', '--force')).toEqual({ queue: 'later', paused: true, changed: true });
  // a paused schedule shows no next run (it does not fire)
  expect((await chronos('schedule', 'ls')).out).toMatch(/│ tenant-42\.digest +│.*│ paused +│[^│]*│ - \(paused\) +│/);
  expect((await chronos('schedule', 'show', 'tenant-42.digest')).out).toContain(
    'No next trigger: the schedule is paused (chronos schedule resume tenant-42.digest).',
  );
  expect(await json('queue', 'resume', 'later', '--force')).toEqual({ queue: 'later', paused: false, changed: true });
});

test('"not Redis" still when the HTTP port reset the first attempt (the CLI connects twice at most; it gave up after the reset)', async () => {
  let connections = 0;
  const web = createTcpServer((socket: Socket) => {
    if (connections++ === 0) socket.resetAndDestroy();
    else socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => web.once('listening', resolve));
  try {
    const port = (web.address() as AddressInfo).port;
    const r = await chronos('--redis-url', `redis://127.0.0.1:${port}`, 'queue', 'ls');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`^error: 127\\.0\\.0\\.1:${port}/0 is not Redis: it answered with "H"`));
  } finally {
    web.close();
  }
});

test('"not Redis" still when the HTTP port answered the first attempt and reset the second (a later reset does not hide the foreign reply)', async () => {
  let connections = 0;
  const web = createTcpServer((socket: Socket) => {
    if (connections++ === 0) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.resetAndDestroy();
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => web.once('listening', resolve));
  try {
    const port = (web.address() as AddressInfo).port;
    const r = await chronos('--redis-url', `redis://127.0.0.1:${port}`, 'queue', 'ls');
    expect(connections).toBeGreaterThanOrEqual(2);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`^error: 127\\.0\\.0\\.1:${port}/0 is not Redis: it answered with "H"`));
  } finally {
    web.close();
  }
});

test('issue 24: error wording: one line for bad options, "not Redis" for an HTTP port', async () => {
  const bad = await chronos('--namespace', 'a b', 'queue', 'ls');
  expect([bad.code, bad.err]).toEqual([
    2,
    'error: Invalid inspector options (1 problem): namespace: expected 1-200 characters of [A-Za-z0-9_.:-], not "." or "..", got "a b"\n',
  ]);
  const web = createHttpServer((_req, res) => res.end('hello')).listen(0, '127.0.0.1');
  await new Promise((resolve) => web.once('listening', resolve));
  try {
    const port = (web.address() as AddressInfo).port;
    const r = await chronos('--redis-url', `redis://127.0.0.1:${port}`, 'queue', 'ls');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      new RegExp(`^error: 127\\.0\\.0\\.1:${port}/0 is not Redis: it answered with "H", not the Redis protocol \\(an HTTP server\\?`),
    );
    expect(r.err).not.toMatch(/Please report this/);
  } finally {
    web.close();
  }
});

test('chronos console on a port already in use fails with exit 1 (not 2: the options were fine) naming the error', async () => {
  const busy = createTcpServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  try {
    const r = await chronos('console', '--port', String((busy.address() as AddressInfo).port));
    expect([r.code, r.out]).toEqual([1, '']);
    expect(r.err).toMatch(/^error: listen EADDRINUSE/m);
  } finally {
    busy.close();
  }
});

test('chronos console refuses --basic-auth with an empty or blank password as it refuses an empty user: a usage error, exit 2, naming the problem (trial 4 F11)', async () => {
  for (const [given, message] of [
    ['admin:', 'basic auth: the password of user "admin" is empty (expected user:password with a non-empty password)'],
    ['admin:   ', 'basic auth: the password of user "admin" is empty (expected user:password with a non-empty password)'],
    [':pw', 'basic auth: expected user:password'],
    [' :pw', 'basic auth: the user is empty (expected user:password)'],
  ]) {
    const r = await chronos('console', '--host', '0.0.0.0', '--port', '0', '--basic-auth', given);
    expect([given, r.code, r.out, r.err]).toEqual([given, 2, '', `error: ${message}\n`]);
  }
});

test('issue 24: chronos console answers only its Host names: the bound address, localhost and --allowed-host (421 otherwise)', async () => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: redisUrl(),
    CHRONOS_NAMESPACE: ns,
    CHRONOS_CONSOLE_ALLOWED_HOSTS: 'b.internal',
  };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [CLI_MAIN, 'console', '--port', '0', '--allowed-host', 'a.internal'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const url = await waitFor(() => /on (http:\/\/\S+)/.exec(out)?.[1], 'the console to listen');
    const port = new URL(url).port;
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          `${url}api/overview`,
          { headers: { host }, setHost: false },
          (res) => (res.resume(), resolve(res.statusCode ?? 0)),
        );
        req.on('error', reject).end();
      });
    const answers: [string, number][] = [];
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `a.internal:${port}`, `b.internal:${port}`, `rebind.example:${port}`])
      answers.push([host, await status(host)]);
    // b.internal comes from CHRONOS_CONSOLE_ALLOWED_HOSTS, which --allowed-host overrides (as every option its env)
    expect(answers.map(([, s]) => s)).toEqual([200, 200, 200, 421, 421]);
  } finally {
    child.kill('SIGTERM');
  }
});
