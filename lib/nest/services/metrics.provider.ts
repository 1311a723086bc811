import { Inject, Injectable, Optional, type OnModuleDestroy, type Provider } from '@nestjs/common';
import type { EventBus } from '../../core/runtime/events.js';
import { Inspector } from '../../core/admin/inspector.js';
import { ChronosMetrics } from '../../core/observability/metrics.js';
import { CHRONOS_EVENT_BUS, CHRONOS_OPTIONS } from '../chronos.constants.js';
import type { ResolvedChronosOptions } from '../options/resolve-options.js';
import { ChronosClient } from './chronos.client.js';
import { ChronosLifecycle } from './chronos-lifecycle.js';
import { InvalidOptionsError } from '../../core/runtime/errors.js';
import { ChronosConfigError } from '../errors/chronos-config.error.js';

/**
 * `ChronosMetrics` as a provider: built when the `metrics` option is set (null otherwise), fed by
 * the app's event bus, with fleet gauges read through an Inspector on the client's connection. A
 * collector that cannot be built (a registry that already has Chronos's metrics: a
 * `ChronosConfigError` naming the metric; prom-client not installed) fails the boot at `onModuleInit`,
 * after what Chronos opened is closed.
 * @internal
 */
export const metricsProvider: Provider = {
  provide: ChronosMetrics,
  useFactory: (o: ResolvedChronosOptions, events: EventBus, client: ChronosClient, lifecycle: ChronosLifecycle): ChronosMetrics | null => {
    if (!o.metrics.enabled) return null;
    const inspector = o.metrics.fleet
      ? new Inspector({ connection: client.redis, namespace: o.namespace, livenessWindow: o.heartbeatInterval * 3 })
      : undefined;
    try {
      return new ChronosMetrics({
        events,
        inspector,
        registry: o.metrics.registry,
        fleetCacheMs: o.metrics.fleetCacheMs,
        fleetTimeoutMs: o.metrics.fleetTimeoutMs,
        instanceId: o.scheduler.enabled && o.scheduler.eligible ? o.instanceId : undefined,
      });
    } catch (err) {
      // the client is connected: fail at onModuleInit, once what Chronos opened is closed (ChronosLifecycle)
      lifecycle.failBoot(
        err instanceof InvalidOptionsError
          ? new ChronosConfigError(
              err.issues.map((i) => `metrics.${i}`),
              { cause: err },
            )
          : (err as Error),
      );
      return null;
    }
  },
  inject: [CHRONOS_OPTIONS, CHRONOS_EVENT_BUS, ChronosClient, ChronosLifecycle],
};

/** Removes the metrics from their registry when the app closes (so an app can boot again in the same process). @internal */
@Injectable()
export class ChronosMetricsLifecycle implements OnModuleDestroy {
  constructor(@Optional() @Inject(ChronosMetrics) private readonly metrics: ChronosMetrics | null) {}

  onModuleDestroy(): void {
    this.metrics?.close();
  }
}
