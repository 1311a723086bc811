import type * as Prom from 'prom-client';
import type { Inspector, LeaderInfo, QueueInfo, ScheduleInfo } from '../admin/inspector.js';
import { silenceOf } from '../admin/schedule-activity.js';
import { shardLed } from '../admin/fleet.js';
import { engineTime } from '../runtime/time.js';

/** One read of the fleet's state. Instants are epoch ms, durations ms. */
interface FleetSnapshot {
  queues: QueueInfo[];
  schedules: ScheduleInfo[];
  leader: LeaderInfo | null;
  /** Per schedule (same order): its overdue triggers and why it is silent (admin/schedule-activity.ts silenceOf). */
  silence: ReturnType<typeof silenceOf>[];
}

const STATES = ['pending', 'active', 'scheduled', 'retry', 'dead'] as const;

/**
 * The fleet gauges of {@link ChronosMetrics}: the state of every queue and schedule of the
 * namespace, as any replica sees it in Redis. One read (shared by all gauges of a scrape, reused
 * by the scrapes within `cacheMs`) costs `25 + 22 × queues + queues that schedules target` commands
 * (70 for 2 queues and 2 schedules: test/nest/metrics.spec.ts), plus the declarations' reads while
 * scheduler instances are live and an `HSCAN` per 1,000 more schedules, whatever the number of tasks:
 * - `Inspector.queues()`: `SMEMBERS` ×2 (queues, paused), then per queue one pipeline of `XLEN`,
 *   `XPENDING` summary, 5 × `ZCARD`, `ZREVRANGE`, 3 × `MGET` (7 days of counters), 6 × `MEMORY USAGE … SAMPLES 5`,
 *   `GET` of the counts, `HGETALL` of its limits, `XINFO GROUPS`, `TIME`, and an `XRANGE … COUNT 1` for the
 *   latency (age of the oldest waiting task);
 * - `Inspector.schedules(1)`: `HSCAN` of the 16 shards' registries and the pause notes, `ZRANGE` instances, `TIME`,
 *   `MGET` of their declarations, `SMISMEMBER` per distinct declaration and `HMGET` last-fired per
 *   target queue (1,000 names per call, one pipeline);
 * - `Inspector.leader()`: one pipeline (`HGETALL` of the shard leases, `TIME`): whether a schedule's overdue triggers mean
 *   no leader. The missed triggers and silent flags are computed from these in memory (the spec,
 *   `lastFiredAt`, the pause note's instant), with no call of their own.
 * A read that fails, or does not answer within `timeoutMs` (Redis refused and ioredis still retrying,
 * a stalled Redis), leaves the fleet gauges empty for that scrape and counts
 * `chronos_fleet_read_errors_total`, so a scrape never waits on Redis longer than that: the
 * per-process metrics (`chronos_leader` falling to 0 in an outage) are still served. A read still
 * under way is not repeated: later scrapes wait for it (again at most `timeoutMs` each).
 */
export class FleetGauges {
  private current?: Promise<FleetSnapshot | undefined>;
  /** The Redis read under way, if any (it may outlive the scrapes that gave up on it). */
  private inflight?: Promise<FleetSnapshot | undefined>;
  private readAt = -Infinity;
  private readonly errors: Prom.Counter<string>;

  constructor(
    prom: typeof Prom,
    private readonly inspector: Inspector,
    private readonly cacheMs: number,
    add: <M extends Prom.Metric<string>>(m: M) => M,
    private readonly timeoutMs: number,
    /** Told, after each successful read, the names in the schedule registry as the read started at `readAt` (engine time, epoch ms) saw it. */
    private readonly onSchedules: (names: ReadonlySet<string>, readAt: number) => void = () => {},
  ) {
    const registers: Prom.Registry[] = [];
    // each gauge's collect() awaits the same read, then writes its own series
    const gauge = (name: string, help: string, labelNames: string[], fill: (g: Prom.Gauge<string>, s: FleetSnapshot) => void) => {
      const read = () => this.read(false);
      add(
        new prom.Gauge({
          name,
          help,
          labelNames,
          registers,
          async collect() {
            const s = await read();
            this.reset();
            if (s) fill(this, s);
          },
        }),
      );
    };
    gauge('chronos_queue_tasks', 'Tasks in each queue by state (fleet-wide)', ['queue', 'state'], (g, s) => {
      for (const q of s.queues) for (const st of STATES) g.labels(q.name, st).set(q[st]);
    });
    const latencyHelp = 'Age of the oldest task waiting in each queue (fleet-wide; 0 when none waits)';
    gauge('chronos_queue_latency_seconds', latencyHelp, ['queue'], (g, s) => {
      for (const q of s.queues) g.labels(q.name).set(q.latencyMs / 1000);
    });
    gauge('chronos_queue_paused', '1 when the queue is paused (fleet-wide)', ['queue'], (g, s) => {
      for (const q of s.queues) g.labels(q.name).set(q.paused ? 1 : 0);
    });
    const lastHelp = 'Trigger instant of the last fire of each schedule, unix seconds';
    gauge('chronos_schedule_last_fired_timestamp_seconds', lastHelp, ['schedule'], (g, s) => {
      for (const sc of s.schedules) if (sc.lastFiredAt !== undefined) g.labels(sc.name).set(sc.lastFiredAt / 1000);
    });
    const nextHelp = 'Trigger due next (the first after the last fire: in the past while late), unix seconds; absent while paused';
    gauge('chronos_schedule_next_timestamp_seconds', nextHelp, ['schedule'], (g, s) => {
      for (const sc of s.schedules) if (sc.nextDueAt !== undefined && !sc.paused) g.labels(sc.name).set(sc.nextDueAt / 1000);
    });
    gauge('chronos_schedules_orphaned', 'Schedules no live instance declares (they do not fire)', [], (g, s) => {
      g.set(s.schedules.filter((sc) => sc.orphaned).length);
    });
    const missedHelp =
      'Triggers of each schedule due more than 30 s ago and not fired (no leader, a stuck leader); 0 while paused or orphaned';
    gauge('chronos_schedule_missed_triggers', missedHelp, ['schedule'], (g, s) => {
      s.schedules.forEach((sc, i) => g.labels(sc.name).set(s.silence[i].overdue));
    });
    const silentHelp =
      '1 while a schedule should have fired and did not, by reason: no_leader, not_firing, orphaned, paused (an hour or more), unreadable';
    gauge('chronos_schedule_silent', silentHelp, ['schedule', 'reason'], (g, s) => {
      s.schedules.forEach((sc, i) => {
        const silent = s.silence[i].silent;
        if (silent) g.labels(sc.name, silent.reason.replace('-', '_')).set(1);
      });
    });
    const errorsHelp =
      'Fleet gauge reads that failed or did not answer within fleetTimeoutMs (Redis refused or stalled): the fleet gauges are empty for that scrape';
    const current = () => this.current;
    this.errors = add(
      new prom.Counter({
        name: 'chronos_fleet_read_errors_total',
        help: errorsHelp,
        registers,
        // registered after the gauges, so a scrape's read has started: its failure is in this scrape
        async collect() {
          await current();
        },
      }),
    );
  }

  /**
   * The current snapshot: reused within `cacheMs` of the last read's start, else read now (or the
   * read under way awaited, unless `force`); undefined, counted as a read error, when the read failed
   * or did not answer within `timeoutMs`.
   */
  read(force: boolean): Promise<FleetSnapshot | undefined> {
    const now = engineTime.now();
    if (!force && this.current && now - this.readAt < this.cacheMs) return this.current;
    this.readAt = now;
    let fetch = force ? undefined : this.inflight;
    if (!fetch) {
      const started = this.fetch().finally(() => {
        if (this.inflight === started) this.inflight = undefined;
      });
      this.inflight = fetch = started;
    }
    this.current = this.bounded(fetch);
    return this.current;
  }

  /** `fetch`'s snapshot, or undefined (one read error counted) when it fails or takes longer than `timeoutMs`. */
  private bounded(fetch: Promise<FleetSnapshot | undefined>): Promise<FleetSnapshot | undefined> {
    return new Promise((resolve) => {
      let done = false;
      const settle = (s: FleetSnapshot | undefined) => {
        if (done) return; // the other of timeout and answer came first
        done = true;
        clearTimeout(timer);
        if (!s) this.errors.inc();
        resolve(s);
      };
      const timer = setTimeout(() => settle(undefined), this.timeoutMs);
      timer.unref();
      void fetch.then(settle);
    });
  }

  /** The Redis reads of one snapshot; undefined when one fails (counted by {@link bounded}). */
  private async fetch(): Promise<FleetSnapshot | undefined> {
    try {
      const readAt = engineTime.now();
      const [queues, schedules, leader] = await Promise.all([
        this.inspector.queues(),
        this.inspector.schedules(1),
        this.inspector.leader(),
      ]);
      const now = engineTime.now();
      this.onSchedules(new Set(schedules.map((sc) => sc.name)), readAt);
      return { queues, schedules, leader, silence: schedules.map((sc) => silenceOf(sc, now, shardLed(leader, sc.name))) };
    } catch {
      return undefined;
    }
  }
}
