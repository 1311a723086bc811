// The schematics as a user runs them, on a fresh `nest new` app (NestJS 12: ES modules, Vitest,
// TypeScript 6), with @chronos/nest installed from the files its tarball ships (see
// test/helpers/fresh-nest-app.ts; no network): `nest add @chronos/nest`, then
// `nest g -c @chronos/nest job <name>` answering its schedule prompt, and the same schematic through
// the schematics CLI with `--every` (the Nest CLI passes no option of its own to a collection's
// schematic). Then the app's own `npm run build` and `npm test`, the built app against a private
// redis-server (its job fires, a SIGTERM resigns the lead: the shutdown hooks are on), and a
// changed schedule that makes the generated test fail.
import { jest } from '@jest/globals';
import { FreshNestApp, type AppProcess } from '../helpers/fresh-nest-app.js';
import { PrivateRedis } from '../helpers/redis-server.js';

jest.setTimeout(180_000);

let app: FreshNestApp;
let redis: PrivateRedis | undefined;
let running: AppProcess | undefined;

beforeAll(async () => {
  app = await FreshNestApp.create();
  expect(app.created).toMatchObject({ code: 0 });
});
afterAll(async () => {
  running?.kill('SIGKILL');
  await running?.exited;
  await redis?.kill();
  app?.remove();
});

test('nest add @chronos/nest: ChronosModule.forRoot() with REDIS_URL in AppModule, enableShutdownHooks() in main.ts; a second run changes nothing', async () => {
  const add = await app.nest(['add', '@chronos/nest', '--skip-install']);
  expect(add.output).toContain('UPDATE src/app.module.ts');
  expect(add.code).toBe(0);
  const module = app.read('src/app.module.ts');
  expect(module).toContain("import { ChronosModule } from '@chronos/nest';");
  expect(module).toMatch(
    /imports: \[\n\s+\/\/ REDIS_URL: .*\n\s+ChronosModule\.forRoot\(\{ connection: process\.env\.REDIS_URL, namespace: 'app' \}\),\n\s+\]/,
  );
  expect(app.read('src/main.ts')).toMatch(/const app = await NestFactory\.create\(AppModule\);\n\s+app\.enableShutdownHooks\(\);/);

  const again = await app.nest(['add', '@chronos/nest', '--skip-install']);
  expect(again.output).toContain('src/app.module.ts imports ChronosModule already: left as it is.');
  expect(app.read('src/app.module.ts')).toBe(module);
});

test('nest g -c @chronos/nest job: asks for the schedule; the schematics CLI takes --every; a bad cron writes nothing', async () => {
  // NG_FORCE_TTY: the schematics CLI prompts as in a terminal, reading the answer from stdin
  const g = await app.nest(['g', '-c', '@chronos/nest', 'job', 'nightly-report'], {
    env: { NG_FORCE_TTY: '1' },
    input: 'CRON_TZ=Europe/Budapest 0 3 * * *\n',
  });
  expect(g.output).toContain('CREATE src/nightly-report/nightly-report.job.ts');
  expect(g.output).toContain('CREATE src/nightly-report/nightly-report.job.spec.ts');
  expect(app.read('src/nightly-report/nightly-report.job.ts')).toContain(
    "@Cron('0 3 * * *', { name: 'nightly-report', timeZone: 'Europe/Budapest' })",
  );

  const every = await app.bin('schematics', ['@chronos/nest:job', 'heartbeat', '--every', '2s', '--path', 'health']);
  expect(every.code).toBe(0);
  expect(app.read('src/health/heartbeat/heartbeat.job.ts')).toContain("@Interval('2s', { name: 'heartbeat' })");
  const module = app.read('src/app.module.ts');
  expect(module).toContain("import { HeartbeatJob } from './health/heartbeat/heartbeat.job.js';");
  expect(module).toMatch(/providers: \[AppService, NightlyReportJob, HeartbeatJob\]/);

  const bad = await app.bin('schematics', ['@chronos/nest:job', 'broken', '--cron', '0 25 * * *']);
  expect(bad.code).toBe(1);
  expect(bad.output).toContain('Error: Invalid schedule "broken": "0 25 * * *": hour field "25": 25 is out of range 0-23');
  // without a terminal the Nest CLI cannot ask, and it exits 0 whatever a schematic says: the message is what the user sees
  const none = await app.nest(['g', '-c', '@chronos/nest', 'job', 'unscheduled']);
  expect(none.output).toContain('No schedule for job "unscheduled": give --cron');
  expect(app.read('src/app.module.ts')).toBe(module);
});

test("the app's own build and tests pass: the generated specs run with the testing kit, without Redis", async () => {
  const build = await app.npmRun('build');
  expect(build).toMatchObject({ code: 0 });
  const tests = await app.npmRun('test');
  expect(tests.output).toMatch(/✓ src\/nightly-report\/nightly-report\.job\.spec\.ts/);
  expect(tests.output).toMatch(/✓ src\/health\/heartbeat\/heartbeat\.job\.spec\.ts/);
  expect(tests.output).toMatch(/Tests\s+3 passed/);
  expect(tests.code).toBe(0);
});

test('the built app runs its job on Redis (REDIS_URL), and a SIGTERM hands the lead over (shutdown hooks on)', async () => {
  redis = await PrivateRedis.start();
  running = app.start({ REDIS_URL: redis.url, PORT: '0' });
  await running.line(/Leadership acquired/);
  await running.line(/\[HeartbeatJob\] trigger of \d{4}-/); // a trigger of its 2 s interval, run by the worker
  running.kill('SIGTERM');
  // Nest's shutdown hooks close the app, then raise the signal again (the exit is the signal's)
  expect(await running.exited).toEqual({ code: null, signal: 'SIGTERM' });
  expect(running.output).toContain('Leadership resigned'); // without the hooks a SIGTERM ends the process before
  expect(running.output).toMatch(/Worker stopped \(.*processed=[1-9]/);
});

test('the generated test fails, saying which triggers differ, when the schedule changes', async () => {
  const file = 'src/nightly-report/nightly-report.job.ts';
  app.write(file, app.read(file).replace("@Cron('0 3 * * *'", "@Cron('0 4 * * *'"));
  const tests = await app.bin('vitest', ['run', 'src/nightly-report']);
  expect(tests.code).toBe(1);
  expect(tests.output).toContain('2026-01-01T03:00:00.000Z'); // received: 04:00 in Budapest
  expect(tests.output).toContain('2026-01-01T02:00:00.000Z'); // expected
});
