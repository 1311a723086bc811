import { Inject, Injectable, Optional, type OnModuleDestroy, type Provider } from '@nestjs/common';
import type { EventBus } from '../../core/runtime/events.js';
import { Inspector } from '../../core/admin/inspector.js';
import { ChronosMetrics } from '../../core/observability/metrics.js';
import { CHRONOS_EVENT_BUS, CHRONOS_OPTIONS } from '../chronos.constants.js';
import type { ResolvedChronosOptions } from '../options/resolve-options.js';
import { ChronosClient } from './chronos.client.js';

/**
 * `ChronosMetrics` as a provider: built when the `metrics` option is set (null otherwise), fed by
 * the app's event bus, with fleet gauges read through an Inspector on the client's connection.
 * @internal
 */
export const metricsProvider: Provider = {
  provide: ChronosMetrics,
  useFactory: (o: ResolvedChronosOptions, events: EventBus, client: ChronosClient): ChronosMetrics | null => {
    if (!o.metrics.enabled) return null;
    const inspector = o.metrics.fleet
      ? new Inspector({ connection: client.redis, namespace: o.namespace, livenessWindow: o.heartbeatInterval * 3 })
      : undefined;
    return new ChronosMetrics({
      events,
      inspector,
      registry: o.metrics.registry,
      fleetCacheMs: o.metrics.fleetCacheMs,
      fleetTimeoutMs: o.metrics.fleetTimeoutMs,
      instanceId: o.scheduler.enabled && o.scheduler.eligible ? o.instanceId : undefined,
    });
  },
  inject: [CHRONOS_OPTIONS, CHRONOS_EVENT_BUS, ChronosClient],
};

/** Removes the metrics from their registry when the app closes (so an app can boot again in the same process). @internal */
@Injectable()
export class ChronosMetricsLifecycle implements OnModuleDestroy {
  constructor(@Optional() @Inject(ChronosMetrics) private readonly metrics: ChronosMetrics | null) {}

  onModuleDestroy(): void {
    this.metrics?.close();
  }
}
