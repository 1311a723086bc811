// ChronosModule options: one ChronosConfigError listing every problem (unknown keys included),
// forRoot / forRootAsync (useFactory + inject + imports, useClass, useExisting), and a client the
// app passes in is shared and never closed.
import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  ChronosClient,
  ChronosConfigError,
  ChronosModule,
  SchedulerService,
  TaskHandler,
  WorkerService,
  type ChronosModuleOptions,
  type ChronosOptionsFactory,
  type Task,
} from '../../lib/index.js';
import { resolveOptions } from '../../lib/nest/options/resolve-options.js';
import { createChronosTestApp, fastOptions, RecordingLogger } from '../helpers/nest-app.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { deferred } from '../helpers/wait.js';

describe('resolveOptions', () => {
  test('applies the defaults of lib/core DEFAULTS', () => {
    const o = resolveOptions({});
    expect(o).toMatchObject({
      connection: 'redis://127.0.0.1:6379',
      namespace: 'chronos',
      timeZone: 'UTC',
      queue: 'default',
      maxRetry: 25,
      timeout: 1_800_000,
      leaderTtl: 5000,
      concurrency: 10,
      shutdownTimeout: 8000,
      scheduler: { enabled: true, eligible: true },
      worker: { enabled: true },
    });
    expect(o.queues).toBeUndefined();
    expect(o.instanceId).toMatch(/^.+:\d+:[0-9a-f]{6}$/);
  });

  test('lists every problem in one ChronosConfigError, unknown keys included', () => {
    const bad = {
      concurency: 4, // typo
      concurrency: 0,
      leaderTtl: 500,
      timeZone: 'Mars/Olympus_Mons',
      namespace: 'has space',
      queues: { mail: 0, 'bad{name}': 1 },
      scheduler: { eligble: false },
      worker: 'yes',
      connection: 'http://127.0.0.1:6379',
      timeout: -1,
      backoff: 1000,
    } as unknown as ChronosModuleOptions;
    let err: ChronosConfigError | undefined;
    try {
      resolveOptions(bad);
    } catch (e) {
      err = e as ChronosConfigError;
    }
    expect(err).toBeInstanceOf(ChronosConfigError);
    expect(err!.code).toBe('CONFIG');
    expect(err!.issues).toEqual([
      'unknown option "concurency"',
      'connection: expected a redis:// or rediss:// URL, ioredis options or an ioredis client, got "http://127.0.0.1:6379"',
      'namespace: expected 1-200 characters of [A-Za-z0-9_.:-], not "." or "..", got "has space"',
      'timeZone: expected an IANA time zone such as "Europe/Budapest" or "UTC", got "Mars/Olympus_Mons"',
      'timeout: expected an integer >= 0 (ms), got -1',
      "leaderTtl: expected an integer from 1000 to 2147483647 (ms; Node's longest timer, about 24.8 days), got 500",
      'concurrency: expected an integer >= 1, got 0',
      'backoff: expected a function (retried, error, task) => ms, got 1000',
      'queues.mail: expected an integer >= 1, got 0',
      'queues: expected 1-200 characters of [A-Za-z0-9_.:-], not "." or "..", got "bad{name}"',
      'scheduler: unknown option "eligble"',
      'worker: expected true or false, got "yes"',
    ]);
    expect(err!.message).toMatch(/^ChronosModule options are invalid \(12 problems\):\n {2}- unknown option "concurency"\n/);
  });

  test('historyLimit reaches the core scheduler (absent: the core applies 100); a bad one is refused naming it', () => {
    expect(resolveOptions({}).core.scheduler.historyLimit).toBeUndefined();
    expect(resolveOptions({ historyLimit: 5 }).core.scheduler.historyLimit).toBe(5);
    expect(() => resolveOptions({ historyLimit: 101 })).toThrow(/historyLimit: expected an integer from 0 to 100, got 101/);
  });

  test('refuses an ioredis keyPrefix (Chronos keys inside scripts would not match)', () => {
    expect(() => resolveOptions({ connection: { host: '127.0.0.1', keyPrefix: 'app:' } })).toThrow(/keyPrefix is not supported/);
  });

  test('a connection string that is not a Redis URL is named, its password hidden', () => {
    expect(() => resolveOptions({ connection: 'http://nope' })).toThrow(
      /connection: expected a redis:\/\/ or rediss:\/\/ URL, .*, got "http:\/\/nope"/,
    );
    const err = (() => {
      try {
        resolveOptions({ connection: 'redis://ops:s3cret@127.0.0.1:63a79' });
      } catch (e) {
        return e as ChronosConfigError;
      }
    })();
    expect(err?.issues).toEqual([
      'connection: expected a redis:// or rediss:// URL, ioredis options or an ioredis client, got "redis://***@127.0.0.1:63a79"',
    ]);
  });

  test('a redis:// URL that is wrong inside is told what is wrong: its database, a "%" of its password (the password hidden)', () => {
    // before, both were "expected a redis:// or rediss:// URL, ioredis options or an ioredis client, got …": a redis:// URL
    const issues = (connection: string) => {
      try {
        resolveOptions({ connection });
      } catch (e) {
        return (e as ChronosConfigError).issues;
      }
    };
    expect(issues('redis://127.0.0.1:6379/abc')).toEqual([
      'connection: "redis://127.0.0.1:6379/abc": its database "abc" is not a number (expected redis://[user:password@]host[:port][/db], db an integer >= 0)',
    ]);
    expect(issues('redis://:pa%ss@127.0.0.1:6379')).toEqual([
      'connection: "redis://***@127.0.0.1:6379": its password holds a "%" that begins no percent-escape (write a "%" in it as %25)',
    ]);
  });

  test('takes { url, ...options } and refuses a url that is not one, or one beside host/port', () => {
    expect(resolveOptions({ connection: { url: 'redis://127.0.0.1:6390', maxRetriesPerRequest: 1 } }).core.client.connection).toBeDefined();
    expect(() => resolveOptions({ connection: { url: 'http://x' } })).toThrow(
      /connection: url: expected a redis:\/\/ or rediss:\/\/ URL, got "http:\/\/x"/,
    );
    expect(() => resolveOptions({ connection: { url: 'redis://a:1', host: 'b', port: 2 } })).toThrow(
      /connection: url and host, port both name the address/,
    );
  });
});

describe('ChronosModule', () => {
  test('invalid options fail the boot with ChronosConfigError', async () => {
    const build = Test.createTestingModule({
      imports: [ChronosModule.forRoot({ connection: redisUrl(), concurrency: -1, lease: 1 } as unknown as ChronosModuleOptions)],
    }).setLogger(new RecordingLogger());
    await expect(build.compile()).rejects.toThrow(ChronosConfigError);
    await expect(build.compile()).rejects.toThrow(
      /2 problems[\s\S]*unknown option "lease"[\s\S]*concurrency: expected an integer >= 1, got -1/,
    );
  });

  test('forRootAsync takes exactly one of useFactory, useClass, useExisting', () => {
    expect(() => ChronosModule.forRootAsync({})).toThrow(/expected exactly one of useFactory, useClass, useExisting, got none/);
    expect(() => ChronosModule.forRootAsync({ useFactory: () => ({}), useClass: class {} as never })).toThrow(/got useFactory, useClass/);
  });

  test('forRootAsync is as strict as forRoot: a misspelt key, a factory that returns nothing, a class without createChronosOptions (trial 8)', async () => {
    expect(() => ChronosModule.forRootAsync({ useFactory: () => ({}), injct: [] } as never)).toThrow(ChronosConfigError);
    expect(() => ChronosModule.forRootAsync({ useFactory: () => ({}), injct: [] } as never)).toThrow(
      /unknown option "injct" \(known: imports,/,
    );
    expect(() => resolveOptions(null)).toThrow(/expected an options object, got null/);
    const boot = (chronos: ReturnType<typeof ChronosModule.forRootAsync>) =>
      Test.createTestingModule({ imports: [chronos] })
        .setLogger(new RecordingLogger())
        .compile();
    await expect(boot(ChronosModule.forRootAsync({ useFactory: () => undefined as never }))).rejects.toThrow(
      /forRootAsync: useFactory returned undefined, expected an options object/,
    );
    class NoMethod {}
    await expect(boot(ChronosModule.forRootAsync({ useClass: NoMethod as never }))).rejects.toThrow(
      /forRootAsync: useClass NoMethod has no createChronosOptions\(\) method/,
    );
  });

  const CONFIG = Symbol('config');

  test.each(['useFactory', 'useClass', 'useExisting'] as const)('forRootAsync with %s boots with the options it builds', async (way) => {
    const namespace = newNamespace('async');
    const instanceId = `async-${way}`;
    @Module({ providers: [{ provide: CONFIG, useValue: { namespace, instanceId } }], exports: [CONFIG] })
    class ConfigModule {}
    @Injectable()
    class OptionsFactory implements ChronosOptionsFactory {
      constructor(@Inject(CONFIG) private readonly cfg: { namespace: string; instanceId: string }) {}
      createChronosOptions(): ChronosModuleOptions {
        return { ...fastOptions(this.cfg.namespace), instanceId: this.cfg.instanceId };
      }
    }
    @Module({ imports: [ConfigModule], providers: [OptionsFactory], exports: [OptionsFactory] })
    class FactoryModule {}
    const chronos =
      way === 'useFactory'
        ? ChronosModule.forRootAsync({
            imports: [ConfigModule],
            inject: [CONFIG],
            useFactory: async (cfg: { namespace: string; instanceId: string }) => ({
              ...fastOptions(cfg.namespace),
              instanceId: cfg.instanceId,
            }),
          })
        : way === 'useClass'
          ? ChronosModule.forRootAsync({ imports: [ConfigModule], useClass: OptionsFactory })
          : ChronosModule.forRootAsync({ imports: [FactoryModule], useExisting: OptionsFactory });
    const got = deferred<Task>();
    @Injectable()
    class Handler {
      @TaskHandler('async.ping')
      ping(task: Task) {
        got.resolve(task);
      }
    }
    const module = await Test.createTestingModule({ imports: [chronos], providers: [Handler] })
      .setLogger(new RecordingLogger())
      .compile();
    try {
      await module.init();
      const scheduler = module.get(SchedulerService);
      expect(scheduler.instanceId).toBe(instanceId);
      expect(module.get(WorkerService).serverId).toBe(instanceId);
      expect(module.get(ChronosClient).namespace).toBe(namespace);
      const { id } = await module.get(ChronosClient).enqueue('async.ping', null);
      expect((await got.promise).id).toBe(id);
    } finally {
      await module.close();
      await deleteNamespace(namespace);
    }
  });

  test('a Redis client the app passes in is shared and never closed by Chronos', async () => {
    const redis = new Redis(redisUrl());
    const got = deferred<Task<{ n: number }>>();
    @Injectable()
    class Pinger {
      @TaskHandler('shared.ping')
      ping(task: Task<{ n: number }>) {
        got.resolve(task);
      }
    }
    const app = await createChronosTestApp({ providers: [Pinger], options: { connection: redis } });
    try {
      expect(app.get(ChronosClient).redis).toBe(redis);
      await app.get(ChronosClient).enqueue('shared.ping', { n: 7 });
      expect((await got.promise).payload).toEqual({ n: 7 });
    } finally {
      await app.close();
    }
    expect(redis.status).toBe('ready');
    expect(await redis.ping()).toBe('PONG');
    await redis.quit();
  });
});
