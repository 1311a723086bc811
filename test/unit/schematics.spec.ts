// The schematics' parts in process (no CLI, no app on disk): the source edits on the shapes a Nest
// app's files take, the schedule options checked by the engine's spec code, and both factories
// applied to an in-memory file tree. test/nest/schematics-app.spec.ts runs them through the real
// Nest CLI and schematics engine on a fresh `nest new` app.
import type { SchematicContext, Tree } from '@angular-devkit/schematics';
import { job } from '../../schematics/job/index.js';
import { resolveSchedule } from '../../schematics/job/schedule.js';
import { nestAdd } from '../../schematics/nest-add/index.js';
import { defaultNamespace, relativeImport, SchematicInputError } from '../../schematics/utils/project.js';
import { addNamedImport, addShutdownHooks, addToModuleArray } from '../../schematics/utils/source-edits.js';

/**
 * The part of the devkit's `Tree` the factories use (read, exists, create, overwrite, getDir's
 * subfiles), over a Map. The devkit's own HostTree does not load under Jest's ESM mode (it
 * require()s magic-string's ES module), so the unit tests bring this one.
 */
class MemoryTree {
  readonly files = new Map<string, string>();
  private key = (path: string) => path.replace(/^\/+/, '');
  read = (path: string) => (this.files.has(this.key(path)) ? Buffer.from(this.files.get(this.key(path))!) : null);
  readText = (path: string) => this.files.get(this.key(path)) ?? '';
  exists = (path: string) => this.files.has(this.key(path));
  create(path: string, text: string) {
    if (this.exists(path)) throw new Error(`${path} already exists`);
    this.files.set(this.key(path), text);
  }
  overwrite(path: string, text: string) {
    if (!this.exists(path)) throw new Error(`${path} does not exist`);
    this.files.set(this.key(path), text);
  }
  getDir(dir: string) {
    const prefix = this.key(dir) === '' ? '' : `${this.key(dir)}/`;
    const subfiles = [...this.files.keys()]
      .filter((f) => f.startsWith(prefix) && !f.slice(prefix.length).includes('/'))
      .map((f) => f.slice(prefix.length));
    return { subfiles };
  }
  get tree(): Tree {
    return this as unknown as Tree;
  }
}

const FOR_ROOT = "ChronosModule.forRoot({ namespace: 'x' })";

describe('addToModuleArray', () => {
  test('an empty array becomes a multi-line one, with the comment above the element', () => {
    const text = '@Module({\n  imports: [],\n  providers: [AppService],\n})\nexport class AppModule {}\n';
    expect(addToModuleArray(text, 'imports', FOR_ROOT, 'why')).toBe(
      `@Module({\n  imports: [\n    // why\n    ${FOR_ROOT},\n  ],\n  providers: [AppService],\n})\nexport class AppModule {}\n`,
    );
  });

  test('a one-line array gets ", element"; a multi-line one a line of its own, with or without a trailing comma', () => {
    expect(addToModuleArray('@Module({ providers: [A, B] })\nclass M {}', 'providers', 'C')).toBe(
      '@Module({ providers: [A, B, C] })\nclass M {}',
    );
    const multi = '@Module({\n  imports: [\n    ConfigModule.forRoot(),\n    HttpModule\n  ],\n})\nclass M {}';
    expect(addToModuleArray(multi, 'imports', 'X')).toBe(
      '@Module({\n  imports: [\n    ConfigModule.forRoot(),\n    HttpModule,\n    X\n  ],\n})\nclass M {}',
    );
    const trailing = '@Module({\n  imports: [\n    HttpModule,\n  ],\n})\nclass M {}';
    expect(addToModuleArray(trailing, 'imports', 'X')).toBe('@Module({\n  imports: [\n    HttpModule,\n    X,\n  ],\n})\nclass M {}');
  });

  test('an absent property is created first in the metadata; an empty @Module({}) gets one', () => {
    const text = '@Module({\n  controllers: [AppController],\n})\nexport class AppModule {}';
    expect(addToModuleArray(text, 'imports', 'X')).toBe(
      '@Module({\n  imports: [\n    X,\n  ],\n  controllers: [AppController],\n})\nexport class AppModule {}',
    );
    expect(addToModuleArray('@Module({})\nexport class AppModule {}', 'providers', 'P')).toBe(
      '@Module({\n  providers: [\n    P,\n  ],\n})\nexport class AppModule {}',
    );
  });

  test('no @Module({ ... }), or a property that is not an array literal: undefined (nothing to splice into)', () => {
    expect(addToModuleArray('export class NotAModule {}', 'imports', 'X')).toBeUndefined();
    expect(addToModuleArray('@Module({ imports: shared })\nclass M {}', 'imports', 'X')).toBeUndefined();
  });
});

test('addNamedImport: into an import from the same module, else after the last import of its kind', () => {
  const text = "import { Module } from '@nestjs/common';\nimport { AppService } from './app.service.js';\n\n@Module({})\nclass M {}";
  expect(addNamedImport(text, 'ChronosModule', '@chronos/nest')).toBe(
    "import { Module } from '@nestjs/common';\nimport { ChronosModule } from '@chronos/nest';\nimport { AppService } from './app.service.js';\n\n@Module({})\nclass M {}",
  );
  expect(addNamedImport(text, 'Job', './job.js')).toContain(
    "import { AppService } from './app.service.js';\nimport { Job } from './job.js';\n",
  );
  expect(addNamedImport("import { Cron } from '@chronos/nest';\n", 'ChronosModule', '@chronos/nest')).toBe(
    "import { Cron, ChronosModule } from '@chronos/nest';\n",
  );
  expect(addNamedImport("import { Cron } from '@chronos/nest';\n", 'Cron', '@chronos/nest')).toBe(
    "import { Cron } from '@chronos/nest';\n",
  );
});

describe('addShutdownHooks', () => {
  test('after the statement that creates the app, whatever the variable is called, with its indentation', () => {
    const text =
      'async function bootstrap() {\n  const server = await NestFactory.create<NestExpressApplication>(AppModule, { bufferLogs: true });\n  await server.listen(3000);\n}\n';
    const edit = addShutdownHooks(text, 'why');
    expect(edit).toEqual({
      kind: 'added',
      app: 'server',
      text: 'async function bootstrap() {\n  const server = await NestFactory.create<NestExpressApplication>(AppModule, { bufferLogs: true });\n  server.enableShutdownHooks(); // why\n  await server.listen(3000);\n}\n',
    });
  });

  test('present once: left alone; no NestFactory.create: not-found (the caller says what to add)', () => {
    expect(addShutdownHooks('const app = await NestFactory.create(M);\napp.enableShutdownHooks();\n', 'c')).toEqual({ kind: 'present' });
    expect(addShutdownHooks('const app = await createApp();\n', 'c')).toEqual({ kind: 'not-found' });
    expect(addShutdownHooks('const ctx = await NestFactory.createApplicationContext(M);\n', 'c')).toMatchObject({
      kind: 'added',
      app: 'ctx',
    });
  });
});

describe('resolveSchedule (the engine spec parser checks every form)', () => {
  test('cron with --tz, a CRON_TZ= prefix, and the interval forms', () => {
    expect(resolveSchedule({ cron: '0 3 * * *', tz: 'Europe/Budapest' }, 'r')).toEqual({
      kind: 'cron',
      expression: '0 3 * * *',
      timeZone: 'Europe/Budapest',
    });
    expect(resolveSchedule({ cron: 'CRON_TZ=Asia/Tokyo 30 8 * * MON-FRI' }, 'r')).toEqual({
      kind: 'cron',
      expression: '30 8 * * MON-FRI',
      timeZone: 'Asia/Tokyo',
    });
    expect(resolveSchedule({ every: '10s' }, 'r')).toEqual({ kind: 'interval', every: '10s' });
    expect(resolveSchedule({ every: 60000 }, 'r')).toEqual({ kind: 'interval', every: 60000 });
    // what the terminal prompt (the cron option) accepts besides cron
    expect(resolveSchedule({ cron: '15m' }, 'r')).toEqual({ kind: 'interval', every: '15m' });
    expect(resolveSchedule({ cron: '@every 1h30m' }, 'r')).toEqual({ kind: 'interval', every: '1h30m' });
    expect(resolveSchedule({ cron: '', every: '10s' }, 'r')).toEqual({ kind: 'interval', every: '10s' }); // the prompt left empty
  });

  test('bad input: a SchematicInputError naming the value (the engine message for a bad spec)', () => {
    const err = (input: Parameters<typeof resolveSchedule>[0]) => {
      try {
        resolveSchedule(input, 'nightly');
      } catch (e) {
        expect(e).toBeInstanceOf(SchematicInputError);
        return (e as Error).message;
      }
      throw new Error('no error');
    };
    expect(err({ cron: '0 25 * * *' })).toBe('Invalid schedule "nightly": "0 25 * * *": hour field "25": 25 is out of range 0-23');
    expect(err({ cron: '0 3 * * *', tz: 'Mars/Olympus' })).toMatch(/"Mars\/Olympus": timeZone: expected/);
    expect(err({ every: '500ms' })).toBe('Invalid schedule "nightly": "@every 500ms": the @every period must be at least 1s, got 500 ms');
    expect(err({})).toMatch(/^No schedule for job "nightly": give --cron/);
    expect(err({ cron: '0 3 * * *', every: '10s' })).toBe("Give --cron or --every, not both (got --cron '0 3 * * *' and --every '10s')");
    expect(err({ every: '10s', tz: 'Europe/Paris' })).toMatch(/--tz 'Europe\/Paris' applies to --cron only/);
  });
});

test('defaultNamespace and relativeImport', () => {
  const tree = new MemoryTree();
  expect(defaultNamespace(tree.tree)).toBe('chronos');
  tree.create('package.json', JSON.stringify({ name: '@acme/billing-api' }));
  expect(defaultNamespace(tree.tree)).toBe('acme-billing-api');
  expect(relativeImport('src/app.module.ts', 'src/jobs/nightly/nightly.job')).toBe('./jobs/nightly/nightly.job');
  expect(relativeImport('src/reports/reports.module.ts', 'src/jobs/a.job')).toBe('../jobs/a.job');
});

function context() {
  const logged: string[] = [];
  const logger = { info: (m: string) => logged.push(`info: ${m}`), warn: (m: string) => logged.push(`warn: ${m}`) };
  return { ctx: { logger } as unknown as SchematicContext, logged };
}

function app(): MemoryTree {
  const tree = new MemoryTree();
  tree.create('package.json', JSON.stringify({ name: 'shop', type: 'module' }));
  tree.create(
    'src/app.module.ts',
    "import { Module } from '@nestjs/common';\n\n@Module({\n  imports: [],\n  providers: [],\n})\nexport class AppModule {}\n",
  );
  tree.create(
    'src/main.ts',
    'async function bootstrap() {\n  const app = await NestFactory.create(AppModule);\n  await app.listen(3000);\n}\n',
  );
  return tree;
}

test('nest-add: forRoot with REDIS_URL and the package name as namespace, shutdown hooks; a second run changes nothing', async () => {
  const tree = app();
  const { ctx, logged } = context();
  await nestAdd({})(tree.tree, ctx);
  const module = tree.readText('src/app.module.ts');
  expect(module).toContain("import { ChronosModule } from '@chronos/nest';");
  expect(module).toContain("ChronosModule.forRoot({ connection: process.env.REDIS_URL, namespace: 'shop' }),");
  expect(tree.readText('src/main.ts')).toContain('  app.enableShutdownHooks(); //');

  const again = context();
  await nestAdd({})(tree.tree, again.ctx);
  expect(tree.readText('src/app.module.ts')).toBe(module);
  expect(again.logged).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/imports ChronosModule already/),
      expect.stringMatching(/enables shutdown hooks already/),
    ]),
  );
  expect(logged.some((l) => l.startsWith('warn'))).toBe(false);
});

test('nest-add: a main.ts it cannot edit is left alone with a warning that says what to add; a bad namespace is refused', async () => {
  const tree = app();
  tree.overwrite('src/main.ts', 'export default createServer();\n');
  const { ctx, logged } = context();
  await nestAdd({})(tree.tree, ctx);
  expect(tree.readText('src/main.ts')).toBe('export default createServer();\n');
  expect(logged).toContainEqual(expect.stringMatching(/^warn: src\/main\.ts has no .*call app\.enableShutdownHooks\(\)/));
  expect(() => nestAdd({ namespace: 'my app' })(app().tree, ctx)).toThrow(
    '--namespace "my app": expected 1-200 characters of [A-Za-z0-9_.:-]',
  );
});

test('job: the provider, its spec with the first triggers by the engine, the provider in the nearest module (ESM imports)', async () => {
  const tree = app();
  const { ctx } = context();
  await job({ name: 'reports/nightlyReport', cron: '0 3 * * *', tz: 'Europe/Budapest' })(tree.tree, ctx);
  const source = tree.readText('src/reports/nightly-report/nightly-report.job.ts');
  expect(source).toContain("@Cron('0 3 * * *', { name: 'nightly-report', timeZone: 'Europe/Budapest' })");
  expect(source).toContain('export class NightlyReportJob {');
  const spec = tree.readText('src/reports/nightly-report/nightly-report.job.spec.ts');
  expect(spec).toContain("import { NightlyReportJob } from './nightly-report.job.js';");
  // 03:00 in Budapest is 02:00Z in winter (CET)
  expect(spec).toContain("toEqual(['2026-01-01T02:00:00.000Z', '2026-01-02T02:00:00.000Z'])");
  expect(spec).toContain("toBe('nightly-report:1767232800')");
  const module = tree.readText('src/app.module.ts');
  expect(module).toContain("import { NightlyReportJob } from './reports/nightly-report/nightly-report.job.js';");
  expect(module).toContain('  providers: [\n    NightlyReportJob,\n  ],');

  await job({ name: 'heartbeat', every: '10s', flat: true, spec: false })(tree.tree, ctx);
  expect(tree.readText('src/heartbeat.job.ts')).toContain("@Interval('10s', { name: 'heartbeat' })");
  expect(tree.exists('src/heartbeat.job.spec.ts')).toBe(false);
  expect(() => job({ name: 'heartbeat', every: '10s', flat: true })(tree.tree, ctx)).toThrow('src/heartbeat.job.ts exists already');
  expect(() => job({ name: 'bad', cron: '61 * * * *' })(tree.tree, ctx)).toThrow(SchematicInputError);
  expect(tree.exists('src/bad/bad.job.ts')).toBe(false);
});

test('job in a CommonJS app (no "type": "module", NestJS 11): relative imports without .js', async () => {
  const tree = app();
  tree.overwrite('package.json', JSON.stringify({ name: 'shop' }));
  await job({ name: 'cleanup', every: '1h' })(tree.tree, context().ctx);
  expect(tree.readText('src/app.module.ts')).toContain("import { CleanupJob } from './cleanup/cleanup.job';");
  expect(tree.readText('src/cleanup/cleanup.job.spec.ts')).toContain("import { CleanupJob } from './cleanup.job';");
});
