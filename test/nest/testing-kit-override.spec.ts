// A test of the app's own module: `Test.createTestingModule({ imports: [AppModule, ChronosTestingModule.forRoot()] })`,
// where AppModule imports ChronosModule.forRoot(), failed with "ChronosModule is imported 2 times in this
// app … import ChronosModule.forRoot()/forRootAsync() once, in the root module": advice for an app, not
// for a test, and nothing in docs/testing.md said how to put the kit in the place of the app's import
// (trial3). The error now says the kit replaces ChronosModule and how (overrideModule of the kept
// import), which this spec checks works in manual mode. No Redis: the app's own import points at a
// port nothing serves, and is never connected.
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ChronosConfigError, ChronosModule, Cron, type Task } from '../../lib/index.js';
import { ChronosTesting, ChronosTestingModule } from '../../lib/nest/testing/index.js';

@Injectable()
class ReportsJob {
  @Cron('0 * * * *', { name: 'hourly-report' })
  run(_task: Task) {}
}

const chronos = ChronosModule.forRoot({ connection: 'redis://127.0.0.1:1', namespace: 'app' });

@Module({ imports: [chronos], providers: [ReportsJob] })
class AppModule {}

test('the kit imported beside a module that imports ChronosModule: the error says the kit replaces it, and how', async () => {
  const module = await Test.createTestingModule({ imports: [AppModule, ChronosTestingModule.forRoot()] }).compile();
  module.useLogger(false);
  const err = await module.init().catch((e: unknown) => e);
  await module.close();
  expect(err).toBeInstanceOf(ChronosConfigError);
  expect((err as Error).message).toContain('ChronosTestingModule and ChronosModule are both imported in this app');
  expect((err as Error).message).toContain('.overrideModule(chronos).useModule(ChronosTestingModule.forRoot())');
});

test("overrideModule of the app's kept ChronosModule import puts the kit in its place: the app's schedules fire in the kit", async () => {
  const module = await Test.createTestingModule({ imports: [AppModule] })
    .overrideModule(chronos)
    .useModule(ChronosTestingModule.forRoot({ now: '2026-01-01T00:00:00Z' }))
    .compile();
  module.useLogger(false);
  await module.init();
  const fired = await module.get(ChronosTesting).fireDue('2026-01-01T00:00:00Z', '2026-01-01T01:00:00Z');
  expect(fired.map((t) => t.id)).toEqual(['hourly-report:1767225600', 'hourly-report:1767229200']);
  await module.close();
});
