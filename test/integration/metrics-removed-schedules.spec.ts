// The per-schedule series of ChronosMetrics (chronos_triggers_total, chronos_trigger_lag_seconds)
// follow the registry: a removed schedule's series leave /metrics, so an app that creates and
// removes runtime schedules does not grow its scrape without bound. Before, they stayed for the
// life of the process, one set per schedule ever fired.
import * as prom from 'prom-client';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { ChronosMetrics } from '../../lib/core/observability/metrics.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

let rig: QueueRig;
let scheduler: Scheduler | undefined;
let metrics: ChronosMetrics | undefined;
beforeEach(() => (rig = new QueueRig()));
afterEach(async () => {
  metrics?.close();
  await scheduler?.stop();
  await rig.close();
});

/** The schedules named in the per-process series of one scrape. */
async function scheduleLabels(registry: prom.Registry): Promise<string[]> {
  const text = await registry.metrics();
  const names = [...text.matchAll(/^chronos_trigger(?:s_total|_lag_seconds_count)\{[^}]*schedule="([^"]+)"/gm)].map((m) => m[1]);
  return [...new Set(names)].sort();
}

/** Starts a leader and a worker on the rig's bus, adds `names` as runtime schedules firing every second, and waits until each ran once. */
async function fireAll(names: string[], registry: prom.Registry, withInspector: boolean): Promise<Scheduler> {
  const s = new Scheduler({ connection: redisUrl(), namespace: rig.namespace, events: rig.events, leaderTtl: 2000 });
  scheduler = s;
  metrics = new ChronosMetrics({ registry, events: rig.events, inspector: withInspector ? rig.inspector : undefined });
  const ran = new Set<string>();
  const w = rig.server({ queues: ['rt'] });
  w.handle('rt', (t) => void ran.add(t.schedule!));
  await w.start();
  await s.start();
  for (const name of names) await s.addSchedule({ name, spec: '@every 1s', type: 'rt', queue: 'rt' });
  await waitFor(() => names.every((n) => ran.has(n)), 'a run of every schedule', 15_000);
  await waitFor(async () => (await scheduleLabels(registry)).length === names.length, 'the series of every schedule');
  return s;
}

test('a schedule removed by this process’s scheduler leaves the per-schedule series at once', async () => {
  const registry = new prom.Registry();
  const names = ['rt.a', 'rt.b', 'rt.c'];
  const s = await fireAll(names, registry, false);
  expect(await scheduleLabels(registry)).toEqual(names);
  await s.removeSchedule('rt.a');
  await s.removeSchedule('rt.b');
  expect(await scheduleLabels(registry)).toEqual(['rt.c']);
});

test('schedules removed elsewhere (an operator, a bulk removal) leave the per-schedule series at the next fleet read', async () => {
  const registry = new prom.Registry();
  const names = ['rt.a', 'rt.b', 'rt.c', 'rt.d'];
  await fireAll(names, registry, true);
  // another process's Inspector (the CLI) and another app's bulk removal: no event reaches this one
  const cli = new Inspector({ connection: redisUrl(), namespace: rig.namespace });
  const other = new Scheduler({ connection: redisUrl(), namespace: rig.namespace, eligible: false });
  try {
    await cli.removeSchedule('rt.a');
    await other.start();
    expect(await other.removeSchedules(['rt.b', 'rt.c'])).toMatchObject({ removed: 2 });
  } finally {
    await cli.close();
    await other.stop();
  }
  await metrics!.refreshFleet();
  expect(await scheduleLabels(registry)).toEqual(['rt.d']);
});
