// A scrape does not wait on a stalled or unreachable Redis for the fleet gauges: past `fleetTimeoutMs`
// the fleet gauges are empty for that scrape and chronos_fleet_read_errors_total counts it, while the
// per-process metrics (chronos_leader, the task counters) are served. Before, the scrape waited for the
// fleet read as long as Redis did: measured 38-42 s per GET /metrics with Redis refused (ioredis's
// retries), for ever while it was stalled, so Prometheus's scrape timeout dropped every Chronos metric
// during the outage.
import { Registry } from 'prom-client';
import { ChronosMetrics, EventBus, Inspector, QueueClient } from '../../lib/core/index.js';
import { matching, parsePrometheus, sumOf } from '../helpers/prometheus.js';
import { newNamespace } from '../helpers/redis.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';

let redis: PrivateRedis;
beforeAll(async () => {
  redis = await PrivateRedis.start();
});
afterAll(async () => {
  await redis.kill();
});

/** The registry's text, or 'hung' when it has not answered long after the fleet timeout. */
async function scrapeOrHung(registry: Registry): Promise<string> {
  let guard: NodeJS.Timeout | undefined;
  const hung = new Promise<string>((r) => (guard = setTimeout(() => r('hung'), 10_000))); // a guard: unbounded, the scrape never answers
  try {
    return await Promise.race([registry.metrics(), hung]);
  } finally {
    clearTimeout(guard);
  }
}

test('a stalled Redis: the scrape answers with the per-process metrics and counts a fleet read error; fleet gauges come back with Redis', async () => {
  const namespace = newNamespace('fleet-timeout');
  const client = new QueueClient({ connection: redis.url, namespace });
  const inspector = new Inspector({ connection: redis.url, namespace });
  const registry = new Registry();
  const metrics = new ChronosMetrics({
    events: new EventBus(),
    inspector,
    registry,
    instanceId: 'fleet-timeout-1',
    fleetTimeoutMs: 300,
    fleetCacheMs: 100,
  });
  try {
    await client.enqueue('fleet.work', { n: 1 });
    const before = parsePrometheus(await registry.metrics());
    expect(sumOf(before, 'chronos_queue_tasks', { queue: 'default', state: 'pending' })).toBe(1);

    const scrapedAt = Date.now();
    redis.stop();
    await waitFor(() => Date.now() - scrapedAt > 100, 'the fleet cache window (100 ms) to pass');
    const text = await scrapeOrHung(registry); // its own read, which Redis does not answer: bounded by fleetTimeoutMs
    expect(text).not.toBe('hung');
    const during = parsePrometheus(text);
    expect(matching(during, 'chronos_queue_tasks')).toEqual([]);
    expect(sumOf(during, 'chronos_fleet_read_errors_total')).toBe(1); // counted in the scrape that had no fleet gauges
    // its help names the timeout, the case of a stalled Redis, not only failed reads
    expect(text).toMatch(/^# HELP chronos_fleet_read_errors_total .*did not answer within fleetTimeoutMs/m);
    expect(matching(during, 'chronos_leader', { instance: 'fleet-timeout-1' })).toHaveLength(1);

    redis.cont();
    await metrics.refreshFleet();
    const after = parsePrometheus(await registry.metrics());
    expect(sumOf(after, 'chronos_queue_tasks', { queue: 'default', state: 'pending' })).toBe(1);
  } finally {
    redis.cont();
    metrics.close();
    await inspector.close();
    await client.close();
  }
});

test('fleetTimeoutMs is checked: a bad value is an InvalidOptionsError naming it', () => {
  const inspector = {} as Inspector;
  expect(() => new ChronosMetrics({ inspector, registry: new Registry(), fleetTimeoutMs: 0 })).toThrow(
    /fleetTimeoutMs: expected an integer from 1 to 2147483647 \(ms.*got 0/,
  );
});
