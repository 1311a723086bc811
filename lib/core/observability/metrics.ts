import type * as Prom from 'prom-client';
import type { ChronosEvent, EventBus, ScheduleSkipReason } from '../runtime/events.js';
import type { Inspector } from '../admin/inspector.js';
import { FleetGauges } from './fleet.js';
import { ScheduleSeries } from './schedule-series.js';
import { loadOptional, MissingPeerDependencyError } from './optional.js';
import { engineTime } from '../runtime/time.js';
import { OptionProblems } from '../runtime/options.js';
import { InvalidOptionsError } from '../runtime/errors.js';

/**
 * Outcomes of `chronos_tasks_processed_total`: `superseded` counts the runs a newer trigger of their
 * schedule superseded (overlap `cancel-previous`: `task.superseded`). @publicApi
 */
export const TASK_OUTCOMES = ['succeeded', 'failed', 'retried', 'dead', 'lost', 'cancelled', 'superseded'] as const;

/**
 * Outcomes of `chronos_triggers_total`, fed by the leader's `schedule.fired` (`enqueued`, `caught_up`
 * when enqueued more than 1 s late, or `buffered` when it waits behind the schedule's live task:
 * overlap `buffer-one`) and `schedule.skipped` events (see `SKIP_OUTCOME`). @publicApi
 */
export const TRIGGER_OUTCOMES = [
  'enqueued',
  'buffered',
  'duplicate',
  'skipped_overlap',
  'skipped_pause',
  'skipped_orphaned',
  'caught_up',
  'skipped_catch_up',
] as const;

/** The `chronos_triggers_total` outcome of each `schedule.skipped` reason (a stale trigger task is the catch-up policy at work). */
const SKIP_OUTCOME: Record<ScheduleSkipReason, (typeof TRIGGER_OUTCOMES)[number]> = {
  overlap: 'skipped_overlap',
  pause: 'skipped_pause',
  orphaned: 'skipped_orphaned',
  'catch-up': 'skipped_catch_up',
  stale: 'skipped_catch_up',
  duplicate: 'duplicate',
};

/** What a prom-client `Registry` must offer (typed structurally: Chronos's types do not need prom-client). */
export interface MetricsRegistry {
  /** Adds a metric (a prom-client `Counter`, `Gauge` or `Histogram`) to the registry. */
  registerMetric(metric: never): void;
  /** Removes the metric named `name` (e.g. `chronos_tasks_processed_total`), at `close()`. */
  removeSingleMetric(name: string): void;
}

/** Options of {@link ChronosMetrics}. Durations are milliseconds, histogram buckets seconds. @publicApi */
export interface ChronosMetricsOptions {
  /** The event bus (or buses) of this process's client, worker and scheduler: the per-process metrics. */
  events?: EventBus | readonly EventBus[];
  /** Reads the fleet gauges (queues, schedules) through this Inspector; omit for no fleet gauges. */
  inspector?: Inspector;
  /** Where the metrics are registered. @defaultValue prom-client's default registry (`register`) */
  registry?: MetricsRegistry;
  /** A fleet read is reused by the scrapes within this window, ms. @defaultValue 1000 */
  fleetCacheMs?: number;
  /**
   * Longest wait of a scrape for the fleet read, ms (1 to 2147483647): past it (Redis down, refused
   * or stalled) the fleet gauges are empty for that scrape and `chronos_fleet_read_errors_total` counts
   * it, so the per-process metrics are still served within a scrape timeout. @defaultValue 5000
   */
  fleetTimeoutMs?: number;
  /** This instance's id: `chronos_leader{instance}` is exported as 0 from the start. */
  instanceId?: string;
  /** Histogram buckets, seconds. */
  buckets?: {
    /** Buckets of `chronos_task_duration_seconds` (handler run time), seconds. @defaultValue 0.005 … 1800 (15 buckets) */
    duration?: number[];
    /** Buckets of `chronos_task_wait_seconds` and `chronos_trigger_lag_seconds`, seconds. @defaultValue 0.001 … 300 (15 buckets) */
    wait?: number[];
  };
}

/** The `limit` label values of `chronos_queue_limited_seconds_total` (the `queue.limited` event's `limit`). */
const LIMITS = ['concurrency', 'rate', 'group'] as const satisfies readonly Extract<ChronosEvent, { type: 'queue.limited' }>['limit'][];

/**
 * The problem of a registry that already has a metric of Chronos's name: another collector (a second
 * Chronos app running in this process) or an app's own metric of that name.
 */
export function registryTaken(name: string): string {
  return `registry: a metric named "${name}" is already registered in it (by another ChronosMetrics not closed yet — a second Chronos app in this process — or by the app itself); give each ChronosMetrics a registry of its own, or close the other first`;
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800];
const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

type Counter = Prom.Counter<string>;
type Histogram = Prom.Histogram<string>;

/**
 * Prometheus metrics of Chronos, through `prom-client` (an optional peer dependency): register it
 * in the app's registry and serve that registry on `/metrics` (see the README's "Monitoring").
 *
 * Per-process counters and histograms are fed by the engine's events — no Redis call per task
 * or per scrape. Fleet gauges (queue counts, latency, paused, schedule last/next fire, orphaned)
 * are read through the {@link Inspector} with O(1) commands per queue and per schedule, at most
 * once per `fleetCacheMs` whatever the number of scrapes, and never by task count.
 * @throws MissingPeerDependencyError when prom-client is not installed.
 * @throws InvalidOptionsError when `fleetTimeoutMs` is not an integer from 1 to 2147483647 (ms), or when
 * the registry already has a metric of one of Chronos's names (another ChronosMetrics in it not closed
 * yet): nothing is left registered then.
 * @publicApi
 */
export class ChronosMetrics {
  private readonly registry: MetricsRegistry;
  private readonly metrics: Prom.Metric<string>[] = [];
  private readonly unsubscribe: (() => void)[] = [];
  private readonly processed: Counter;
  private readonly duration: Histogram;
  private readonly wait: Histogram;
  /** The per-schedule series (triggers, lag), removed with their schedule. */
  private readonly schedules: ScheduleSeries<(typeof TRIGGER_OUTCOMES)[number]>;
  private readonly reclaimed: Counter;
  private readonly leader: Prom.Gauge<string>;
  private readonly leaderShards: Prom.Gauge<string>;
  /** The shards each instance whose events this process sees leads (from leader.acquired / leader.lost). */
  private readonly led = new Map<string, Set<number>>();
  private readonly leaderChanges: Counter;
  private readonly limited: Counter;
  private readonly fleet?: FleetGauges;
  /** `queue\0type` → outcome → counter child (prom-client's own label lookup is slower). */
  private readonly processedChildren = new Map<string, Record<string, Prom.Counter.Internal>>();
  private readonly durationChildren = new Map<string, Prom.Histogram.Internal<string>>();
  private readonly waitChildren = new Map<string, Prom.Histogram.Internal<string>>();
  /** Queues whose per-queue counters exist (from 0). */
  private readonly seenQueues = new Set<string>();

  constructor(options: ChronosMetricsOptions = {}) {
    const p = new OptionProblems();
    p.timerMs('fleetTimeoutMs', options.fleetTimeoutMs, 1);
    p.throwIfAny('ChronosMetrics options');
    const prom = loadOptional<typeof Prom>('prom-client');
    if (!prom) throw new MissingPeerDependencyError('prom-client', 'ChronosMetrics');
    this.registry = options.registry ?? prom.register;
    const registers: Prom.Registry[] = [];
    const add = <M extends Prom.Metric<string>>(m: M): M => {
      try {
        this.registry.registerMetric(m as never);
      } catch (err) {
        // a name already there: leave the registry as it was (the ones added so far out again), and say why
        this.close();
        throw new InvalidOptionsError([registryTaken((m as unknown as { name: string }).name)], 'ChronosMetrics options', { cause: err });
      }
      this.metrics.push(m);
      return m;
    };
    const b = options.buckets ?? {};
    this.processed = add(
      new prom.Counter({
        name: 'chronos_tasks_processed_total',
        help: 'Task attempts that ended in this process, by outcome (a failed attempt also counts as retried or dead)',
        labelNames: ['queue', 'type', 'outcome'],
        registers,
      }),
    );
    this.duration = add(
      new prom.Histogram({
        name: 'chronos_task_duration_seconds',
        help: 'Handler run time of task attempts that ended in this process (succeeded or failed)',
        labelNames: ['queue', 'type'],
        buckets: b.duration ?? DURATION_BUCKETS,
        registers,
      }),
    );
    this.wait = add(
      new prom.Histogram({
        name: 'chronos_task_wait_seconds',
        help: 'From when a task became ready (enqueued, due, or its trigger instant) to its handler start, in this process',
        labelNames: ['queue'],
        buckets: b.wait ?? WAIT_BUCKETS,
        registers,
      }),
    );
    const triggers = add(
      new prom.Counter({
        name: 'chronos_triggers_total',
        help: 'Schedule triggers this process handled as leader, by outcome',
        labelNames: ['schedule', 'outcome'],
        registers,
      }),
    );
    const lag = add(
      new prom.Histogram({
        name: 'chronos_trigger_lag_seconds',
        help: 'Handler start minus trigger instant, first attempt of trigger tasks run in this process',
        labelNames: ['schedule'],
        buckets: b.wait ?? WAIT_BUCKETS,
        registers,
      }),
    );
    this.reclaimed = add(
      new prom.Counter({
        name: 'chronos_tasks_reclaimed_total',
        help: 'Tasks this process reclaimed from crashed or stuck consumers',
        labelNames: ['queue'],
        registers,
      }),
    );
    this.schedules = new ScheduleSeries(triggers, lag, TRIGGER_OUTCOMES);
    const leaderHelp = '1 while this instance leads at least one shard of the schedules (holds its lease)';
    this.leader = add(new prom.Gauge({ name: 'chronos_leader', help: leaderHelp, labelNames: ['instance'], registers }));
    const shardsHelp = 'How many of the 16 shards of the schedules this instance leads';
    this.leaderShards = add(new prom.Gauge({ name: 'chronos_leader_shards', help: shardsHelp, labelNames: ['instance'], registers }));
    const changesHelp = 'Leaderships this process acquired';
    this.leaderChanges = add(new prom.Counter({ name: 'chronos_leader_changes_total', help: changesHelp, registers }));
    this.limited = add(
      new prom.Counter({
        name: 'chronos_queue_limited_seconds_total',
        help: 'Time workers of this process with free slots waited because a fleet-wide limit held the queue back, by limit (concurrency, rate, group)',
        labelNames: ['queue', 'limit'],
        registers,
      }),
    );
    if (options.instanceId !== undefined) this.leader.labels(options.instanceId).set(0);
    if (options.inspector)
      this.fleet = new FleetGauges(
        prom,
        options.inspector,
        options.fleetCacheMs ?? 1000,
        add,
        options.fleetTimeoutMs ?? 5000,
        (names, readAt) => this.schedules.keepOnly(names, readAt),
      );
    const ev = options.events;
    const buses: readonly EventBus[] = ev === undefined ? [] : Array.isArray(ev) ? ev : [ev as EventBus];
    for (const bus of new Set(buses)) this.listen(bus);
  }

  /** Subscribes to one more event bus (e.g. a scheduler's, when it has its own). */
  listen(events: EventBus): void {
    this.unsubscribe.push(events.subscribe((e) => this.onEvent(e)));
  }

  /** Reads the fleet gauges now (a scrape does it by itself, cached); resolves when done. */
  async refreshFleet(): Promise<void> {
    await this.fleet?.read(true);
  }

  /** Unsubscribes from the events and removes every Chronos metric from the registry. Idempotent. */
  close(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    for (const m of this.metrics.splice(0)) this.registry.removeSingleMetric((m as unknown as { name: string }).name);
  }

  /**
   * The per-queue counters of a queue first seen in an event, at 0: a reclaim or a limit's wait is
   * rare, and a series born at 1 has no earlier sample for `increase()` to count it from.
   */
  private queueSeen(queue: string): void {
    if (this.seenQueues.has(queue)) return;
    this.seenQueues.add(queue);
    this.reclaimed.labels(queue).inc(0);
    for (const l of LIMITS) this.limited.labels(queue, l).inc(0);
  }

  private outcomeOf(queue: string, type: string, outcome: (typeof TASK_OUTCOMES)[number]): Prom.Counter.Internal {
    const key = `${queue}\0${type}`;
    let children = this.processedChildren.get(key);
    if (!children) {
      this.queueSeen(queue);
      children = {};
      // every outcome from 0, so rate() and increase() see the first event
      for (const o of TASK_OUTCOMES) (children[o] = this.processed.labels(queue, type, o)).inc(0);
      this.processedChildren.set(key, children);
    }
    return children[outcome];
  }

  private durationOf(queue: string, type: string): Prom.Histogram.Internal<string> {
    const key = `${queue}\0${type}`;
    let child = this.durationChildren.get(key);
    if (!child) this.durationChildren.set(key, (child = this.duration.labels(queue, type)));
    return child;
  }

  private waitOf(queue: string): Prom.Histogram.Internal<string> {
    let child = this.waitChildren.get(queue);
    if (!child) {
      this.queueSeen(queue);
      this.waitChildren.set(queue, (child = this.wait.labels(queue)));
    }
    return child;
  }

  private onEvent(e: ChronosEvent): void {
    switch (e.type) {
      case 'task.started': {
        const now = engineTime.now();
        if (e.readyAt !== undefined) this.waitOf(e.queue).observe(Math.max(0, now - Math.max(e.readyAt, e.triggerAt ?? 0)) / 1000);
        if (e.schedule !== undefined && e.triggerAt !== undefined && e.retried === 0 && !e.reclaimed) {
          this.schedules.lagOf(e.schedule, e.triggerAt)?.observe(Math.max(0, now - e.triggerAt) / 1000);
        }
        return;
      }
      case 'task.succeeded':
        this.outcomeOf(e.queue, e.taskType, 'succeeded').inc();
        this.durationOf(e.queue, e.taskType).observe(e.durationMs / 1000);
        return;
      case 'task.failed':
        this.outcomeOf(e.queue, e.taskType, 'failed').inc();
        if (e.durationMs !== undefined) this.durationOf(e.queue, e.taskType).observe(e.durationMs / 1000);
        return;
      case 'task.retried':
        this.outcomeOf(e.queue, e.taskType, 'retried').inc();
        return;
      case 'task.dead':
        this.outcomeOf(e.queue, e.taskType, 'dead').inc();
        return;
      case 'task.lost':
        // the entry was gone, and with it the task's type: counted under type "unknown"
        this.outcomeOf(e.queue, 'unknown', 'lost').inc();
        return;
      case 'task.cancelled':
        this.outcomeOf(e.queue, e.taskType, 'cancelled').inc();
        return;
      case 'task.superseded':
        this.outcomeOf(e.queue, e.taskType, 'superseded').inc();
        return;
      case 'task.requeued':
        this.queueSeen(e.queue);
        if (e.reason === 'recovered') this.reclaimed.labels(e.queue).inc();
        return;
      case 'schedule.fired':
        this.schedules.trigger(e.schedule, e.buffered ? 'buffered' : e.caughtUp ? 'caught_up' : 'enqueued').inc();
        return;
      case 'schedule.skipped':
        this.schedules.trigger(e.schedule, SKIP_OUTCOME[e.reason]).inc(e.count);
        return;
      case 'leader.acquired':
      case 'leader.lost': {
        const led = new Set(this.led.get(e.instanceId));
        for (const k of e.shards)
          if (e.type === 'leader.acquired') led.add(k);
          else led.delete(k);
        this.led.set(e.instanceId, led);
        this.leader.labels(e.instanceId).set(led.size > 0 ? 1 : 0);
        this.leaderShards.labels(e.instanceId).set(led.size);
        if (e.type === 'leader.acquired') this.leaderChanges.inc();
        return;
      }
      case 'operator.acted':
        // a removal this process made: its schedule's series go at once (one made elsewhere, or a
        // bulk one that names no schedule, at the next fleet read)
        if (e.action === 'schedule.remove' && e.schedule !== undefined && e.count > 0) this.schedules.forget(e.schedule);
        return;
      case 'queue.limited':
        this.queueSeen(e.queue);
        this.limited.labels(e.queue, e.limit).inc(e.ms / 1000);
        return;
      default:
        return;
    }
  }
}
