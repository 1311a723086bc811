import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { EventBus } from '../core/runtime/events.js';
import { ChronosMetrics } from '../core/observability/metrics.js';
import { CHRONOS_EVENT_BUS, CHRONOS_MODULE_OPTIONS, CHRONOS_OPTIONS } from './chronos.constants.js';
import { ChronosConsoleMount } from './console/console.mount.js';
import { ChronosExplorer } from './discovery/chronos.explorer.js';
import { ChronosMetadataAccessor } from './discovery/metadata.accessor.js';
import { ChronosConfigError } from './errors/chronos-config.error.js';
import { ChronosHealthIndicator } from './health/chronos-health.indicator.js';
import type { ChronosModuleAsyncOptions, ChronosModuleOptions, ChronosOptionsFactory } from './options/chronos-options.interface.js';
import { resolveOptions, type ResolvedChronosOptions } from './options/resolve-options.js';
import { ChronosClient } from './services/chronos.client.js';
import { ChronosLifecycle } from './services/chronos-lifecycle.js';
import { InspectorService } from './services/inspector.service.js';
import { ChronosMetricsLifecycle, metricsProvider } from './services/metrics.provider.js';
import { SchedulerService } from './services/scheduler.service.js';
import { WorkerService } from './services/worker.service.js';

const EXPORTS = [ChronosClient, SchedulerService, WorkerService, InspectorService, ChronosHealthIndicator, ChronosMetrics];

/** The keys of {@link ChronosModuleAsyncOptions}. */
const ASYNC_KEYS = new Set(['imports', 'useFactory', 'inject', 'useClass', 'useExisting', 'extraProviders']);

/**
 * The options a factory built: an object (an empty one takes every default). Undefined or null is a
 * mistake (a forgotten `return`), not "the defaults": it would boot on the default namespace.
 */
function built(o: unknown, what: string): ChronosModuleOptions {
  if (o === undefined || o === null) {
    throw new ChronosConfigError([`forRootAsync: ${what} ${String(o)}, expected an options object (a forgotten return?)`]);
  }
  return o as ChronosModuleOptions;
}

/**
 * Chronos for NestJS: distributed `@Cron`/`@Interval` schedules (fired once per trigger across
 * every replica by a leader-elected scheduler) and `@TaskHandler` task queues on Redis Streams.
 * Import once, in the root module; it is global. Exports `ChronosClient`, `SchedulerService`,
 * `WorkerService`, `InspectorService`, `ChronosHealthIndicator` and `ChronosMetrics` (null unless
 * the `metrics` option is set). Call
 * `app.enableShutdownHooks()` so a stopping instance resigns and drains.
 * @publicApi
 */
@Module({})
export class ChronosModule {
  /**
   * Configures Chronos with static options.
   * @throws ChronosConfigError at boot when an option is invalid (every problem listed).
   */
  static forRoot(options: ChronosModuleOptions = {}): DynamicModule {
    return ChronosModule.build([{ provide: CHRONOS_MODULE_OPTIONS, useValue: options }], []);
  }

  /**
   * Configures Chronos with options built at boot: `useFactory` (+ `inject`), `useClass` or
   * `useExisting` (a {@link ChronosOptionsFactory}), with `imports` and `extraProviders`.
   * @throws ChronosConfigError when not exactly one of useFactory/useClass/useExisting is given, or at boot when an option is invalid.
   */
  static forRootAsync(options: ChronosModuleAsyncOptions): DynamicModule {
    const unknown = options && typeof options === 'object' ? Object.keys(options).filter((k) => !ASYNC_KEYS.has(k)) : [];
    if (unknown.length > 0) {
      // a misspelt `inject` would leave the factory without its arguments
      throw new ChronosConfigError(unknown.map((k) => `forRootAsync: unknown option "${k}" (known: ${[...ASYNC_KEYS].join(', ')})`));
    }
    const ways = (['useFactory', 'useClass', 'useExisting'] as const).filter((k) => options?.[k] !== undefined);
    if (ways.length !== 1) {
      throw new ChronosConfigError([
        `forRootAsync: expected exactly one of useFactory, useClass, useExisting, got ${ways.length ? ways.join(', ') : 'none'}`,
      ]);
    }
    const providers: Provider[] = [...(options.extraProviders ?? [])];
    if (options.useFactory) {
      const make = options.useFactory;
      const useFactory = async (...args: unknown[]) => built(await make(...args), 'useFactory returned');
      providers.push({ provide: CHRONOS_MODULE_OPTIONS, useFactory, inject: options.inject ?? [] });
    } else {
      const factory = (options.useClass ?? options.useExisting)!;
      if (options.useClass) providers.push({ provide: options.useClass, useClass: options.useClass });
      const useFactory = async (f: ChronosOptionsFactory) => {
        if (typeof f?.createChronosOptions !== 'function') {
          throw new ChronosConfigError([
            `forRootAsync: ${ways[0]} ${factory.name || String(factory)} has no createChronosOptions() method (ChronosOptionsFactory)`,
          ]);
        }
        return built(await f.createChronosOptions(), `${factory.name}.createChronosOptions() returned`);
      };
      providers.push({ provide: CHRONOS_MODULE_OPTIONS, useFactory, inject: [factory] });
    }
    return ChronosModule.build(providers, options.imports ?? []);
  }

  private static build(optionProviders: Provider[], imports: NonNullable<DynamicModule['imports']>): DynamicModule {
    return {
      module: ChronosModule,
      global: true,
      imports: [DiscoveryModule, ...imports],
      providers: [
        ...optionProviders,
        { provide: CHRONOS_OPTIONS, useFactory: resolveOptions, inject: [CHRONOS_MODULE_OPTIONS] },
        { provide: CHRONOS_EVENT_BUS, useFactory: () => new EventBus() },
        ChronosLifecycle,
        {
          provide: ChronosClient,
          useFactory: (o: ResolvedChronosOptions, events: EventBus, lifecycle: ChronosLifecycle) => {
            const client = new ChronosClient({ ...o.core.client, events });
            lifecycle.closeAfterRoles(() => client.close());
            return client;
          },
          inject: [CHRONOS_OPTIONS, CHRONOS_EVENT_BUS, ChronosLifecycle],
        },
        SchedulerService,
        WorkerService,
        InspectorService,
        ChronosHealthIndicator,
        metricsProvider,
        ChronosMetricsLifecycle,
        ChronosMetadataAccessor,
        ChronosExplorer,
        ChronosConsoleMount,
      ],
      exports: EXPORTS,
    };
  }
}
