// Counters start at 0 for a queue as soon as this process sees the queue, so increase() and rate()
// see their first event: a reclaim is rare, and a series born at 1 hides it (Prometheus has no
// earlier sample to count from). Before, chronos_tasks_reclaimed_total and
// chronos_queue_limited_seconds_total had no series until their first event.
import { Registry } from 'prom-client';
import { ChronosMetrics, EventBus } from '../../lib/core/index.js';
import { parsePrometheus, matching } from '../helpers/prometheus.js';

test('a queue seen in a task event gets its reclaimed and limited counters at 0 before their first event', async () => {
  const events = new EventBus();
  const registry = new Registry();
  const metrics = new ChronosMetrics({ events, registry });
  try {
    events.emit({ type: 'task.started', queue: 'q', taskId: 't1', taskType: 'x', retried: 0, enqueuedAt: 0, readyAt: 0 });
    const s = parsePrometheus(await registry.metrics());
    expect(matching(s, 'chronos_tasks_reclaimed_total', { queue: 'q' }).map((x) => x.value)).toEqual([0]);
    const limited = matching(s, 'chronos_queue_limited_seconds_total', { queue: 'q' });
    expect(limited.map((x) => [x.labels.limit, x.value]).sort()).toEqual([
      ['concurrency', 0],
      ['group', 0],
      ['rate', 0],
    ]);
    events.emit({ type: 'task.requeued', queue: 'q', taskId: 't2', taskType: 'x', reason: 'recovered' });
    const after = parsePrometheus(await registry.metrics());
    expect(matching(after, 'chronos_tasks_reclaimed_total', { queue: 'q' }).map((x) => x.value)).toEqual([1]);
  } finally {
    metrics.close();
  }
});
