// A registry that already has one of Chronos's metric names (a second collector not closed yet, an
// app's own metric): a typed error naming the metric, and the registry left as it was.
import { Gauge, Registry } from 'prom-client';
import { ChronosMetrics, InvalidOptionsError } from '../../lib/core/index.js';

const names = async (r: Registry) => (await r.getMetricsAsJSON()).map((m) => m.name);

test('a metric name already taken: InvalidOptionsError naming it, and none of the collector left registered', async () => {
  const registry = new Registry();
  // the app's own metric of a name Chronos registers after several others
  new Gauge({ name: 'chronos_leader', help: 'the app its own', registers: [registry] });
  let err: unknown;
  try {
    new ChronosMetrics({ registry });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(InvalidOptionsError);
  expect((err as InvalidOptionsError).issues).toEqual([
    expect.stringMatching(/^registry: a metric named "chronos_leader" is already registered/),
  ]);
  expect(await names(registry)).toEqual(['chronos_leader']);

  // the app's metric gone, a collector is built (it found nothing of a failed one in its way)
  registry.removeSingleMetric('chronos_leader');
  const metrics = new ChronosMetrics({ registry });
  expect(await names(registry)).toContain('chronos_tasks_processed_total');
  metrics.close();
  expect(await names(registry)).toEqual([]);
});
