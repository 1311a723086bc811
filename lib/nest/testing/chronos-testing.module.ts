import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { defaultBackoff } from '../../core/queue/task.js';
import { CHRONOS_MODULE_OPTIONS, CHRONOS_OPTIONS, CHRONOS_TESTING_KIT } from '../chronos.constants.js';
import { ChronosModule } from '../chronos.module.js';
import { ChronosExplorer } from '../discovery/chronos.explorer.js';
import { ChronosMetadataAccessor } from '../discovery/metadata.accessor.js';
import type { ChronosModuleOptions } from '../options/chronos-options.interface.js';
import { resolveOptions, type ResolvedChronosOptions } from '../options/resolve-options.js';
import { ChronosClient } from '../services/chronos.client.js';
import { InspectorService } from '../services/inspector.service.js';
import { SchedulerService } from '../services/scheduler.service.js';
import { WorkerService } from '../services/worker.service.js';
import { ChronosTesting } from './chronos-testing.service.js';
import { instant, type ChronosTestingMode, type Instant } from './testing-types.js';
import { PrivateRedisServer } from './private-redis.js';
import { RedisTestingControl, type RedisHolder } from './redis-testing.js';
import { TestingChronosClient } from './testing-client.js';
import { ChronosTestingError } from './testing-error.js';
import { TestingSchedulerService, TestingWorkerService } from './testing-roles.js';

/**
 * Options of {@link ChronosTestingModule.forRoot}: the mode, and the module options of
 * `ChronosModule.forRoot()` the test wants (defaults: queue, maxRetry, timeout, timeZone,
 * backoff, …; validated the same way). `connection` is the kit's.
 * @publicApi
 */
export interface ChronosTestingOptions extends Omit<ChronosModuleOptions, 'connection'> {
  /**
   * `manual`: enqueues are recorded, nothing runs until `perform`/`drain`. `inline`: each enqueue
   * runs its task once before `enqueue()` resolves. `redis`: the real module on a private
   * `redis-server` the kit starts on a free loopback port (needs `redis-server` on the PATH).
   * @defaultValue 'manual'
   */
  mode?: ChronosTestingMode;
  /** Start of the virtual clock (manual and inline modes). @defaultValue the real time at module creation */
  now?: Instant;
  /** Redis mode: the redis-server executable (a name on the PATH, or a path). @defaultValue 'redis-server' */
  redisServer?: string;
  /** Inline mode: an enqueue whose attempt fails rejects with the handler's error (otherwise the failure is only an outcome). @defaultValue false */
  rethrow?: boolean;
}

const KIT_KEYS = new Set(['mode', 'now', 'rethrow', 'redisServer']);

/**
 * Chronos for unit and integration tests of a NestJS app: import it instead of
 * `ChronosModule.forRoot()` in `Test.createTestingModule({ imports: [ChronosTestingModule.forRoot()], providers: [...] })`.
 * `@Cron`, `@Interval` and `@TaskHandler` are discovered and validated as by `ChronosModule` (the
 * same errors at `init()`); `ChronosClient`, `SchedulerService` and `WorkerService` are injectable
 * as usual, and {@link ChronosTesting} controls the queues and the clock. In `manual` and `inline`
 * modes nothing talks to Redis. Global, like `ChronosModule`.
 * @publicApi
 */
@Module({})
export class ChronosTestingModule {
  /**
   * The testing module in `mode` (default `manual`).
   * @throws ChronosTestingError for options that are not an object, an unknown mode, a `now` that is not an instant or a `rethrow` that is not a boolean, or in mode 'redis' when `redis-server` cannot be run; ChronosConfigError (at `init()`) for a bad module option.
   */
  static forRoot(options: ChronosTestingOptions = {}): DynamicModule {
    if (typeof options !== 'object' || options === null || Array.isArray(options))
      throw new ChronosTestingError(`ChronosTestingModule: expected an options object, got ${JSON.stringify(options)}`);
    const mode = options.mode ?? 'manual';
    if (!['manual', 'inline', 'redis'].includes(mode))
      throw new ChronosTestingError(`ChronosTestingModule: mode: expected 'manual', 'inline' or 'redis', got ${JSON.stringify(mode)}`);
    if ('connection' in options)
      throw new ChronosTestingError("ChronosTestingModule: `connection` is the kit's (mode 'redis' starts its own redis-server)");
    if (options.rethrow !== undefined && typeof options.rethrow !== 'boolean')
      throw new ChronosTestingError(`ChronosTestingModule: rethrow: expected true or false, got ${JSON.stringify(options.rethrow)}`);
    const moduleOptions = Object.fromEntries(Object.entries(options).filter(([k]) => !KIT_KEYS.has(k))) as ChronosModuleOptions;
    if (mode === 'redis') return ChronosTestingModule.redis(moduleOptions, options.redisServer);
    const start = options.now === undefined ? Date.now() : instant(options.now, 'now');
    return {
      module: ChronosTestingModule,
      global: true,
      imports: [DiscoveryModule],
      providers: [
        { provide: CHRONOS_TESTING_KIT, useValue: true },
        { provide: CHRONOS_MODULE_OPTIONS, useValue: moduleOptions },
        { provide: CHRONOS_OPTIONS, useFactory: resolveOptions, inject: [CHRONOS_MODULE_OPTIONS] },
        {
          provide: ChronosClient,
          useFactory: (o: ResolvedChronosOptions) => new TestingChronosClient(o.core.client),
          inject: [CHRONOS_OPTIONS],
        },
        { provide: SchedulerService, useFactory: (o: ResolvedChronosOptions) => new TestingSchedulerService(o), inject: [CHRONOS_OPTIONS] },
        { provide: WorkerService, useFactory: (o: ResolvedChronosOptions) => new TestingWorkerService(o), inject: [CHRONOS_OPTIONS] },
        {
          provide: ChronosTesting,
          useFactory: (o: ResolvedChronosOptions, c: TestingChronosClient, w: TestingWorkerService, s: TestingSchedulerService) =>
            new ChronosTesting(mode, c, w, s, o.core.server.backoff ?? defaultBackoff, start, options.rethrow ?? false),
          inject: [CHRONOS_OPTIONS, ChronosClient, WorkerService, SchedulerService],
        },
        ChronosMetadataAccessor,
        ChronosExplorer,
      ],
      exports: [ChronosClient, SchedulerService, WorkerService, ChronosTesting],
    };
  }

  /** The real ChronosModule on a private redis-server, plus `ChronosTesting` with `waitForIdle`. */
  private static redis(moduleOptions: ChronosModuleOptions, command: string | undefined): DynamicModule {
    PrivateRedisServer.check(command); // fail fast: a module whose options factory throws may leave connections behind
    const holder: RedisHolder = {};
    const chronos = ChronosModule.forRootAsync({
      useFactory: async () => {
        // the options ChronosModule would refuse are refused before the server starts: nothing runs a
        // shutdown hook after a failed compile(), and the server would keep the test process alive
        resolveOptions({ ...moduleOptions, connection: 'redis://127.0.0.1:6379' });
        holder.server = await PrivateRedisServer.start(command);
        return { ...moduleOptions, connection: holder.server.url };
      },
    });
    return {
      module: ChronosTestingModule,
      global: true,
      imports: [chronos],
      providers: [
        { provide: CHRONOS_TESTING_KIT, useValue: true },
        {
          provide: ChronosTesting,
          useFactory: (w: WorkerService, i: InspectorService, c: ChronosClient) => new RedisTestingControl(holder, w, i, c),
          inject: [WorkerService, InspectorService, ChronosClient],
        },
      ],
      exports: [ChronosTesting, chronos],
    };
  }
}
