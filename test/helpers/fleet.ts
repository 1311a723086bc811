import { Redis } from 'ioredis';
import { SchedulerKeys, shardOf } from '../../lib/core/redis/keys.js';
import { SHARD_COUNT } from '../../lib/core/redis/protocol.js';
import type { ScheduleDefinition } from '../../lib/core/scheduler/definition.js';
import { startChild, killAllChildren, type Child } from './children.js';
import { readRecords, type Rec } from './records.js';
import { deleteNamespace, newNamespace, redisUrl } from './redis.js';
import { expect } from '@jest/globals';
import { waitFor } from './wait.js';

/** Leadership changes reported by fixture processes: shards taken or lost (docs/scheduler-shards.md). */
export interface LeaderEvent {
  child: Child;
  acquired: boolean;
  term: number;
  /** The shards taken or lost. */
  shards: number[];
  t: number;
}

/**
 * A fleet of scheduler-node fixture processes on one namespace, recording to one Redis list.
 * `close()` kills what is left and deletes the namespace and the records.
 */
export class Fleet {
  readonly ns: string;
  readonly recordKey: string;
  readonly redis: Redis;
  readonly children: Child[] = [];
  /** The children that campaign for shard leases (a scheduler, eligible). */
  private readonly campaigning = new Set<Child>();

  constructor(
    readonly schedules: ScheduleDefinition[],
    readonly baseEnv: Record<string, string | number> = {},
    readonly url = redisUrl(),
    tag = 'fleet',
  ) {
    this.ns = newNamespace(tag);
    this.recordKey = `${this.ns}-records:calls`;
    this.redis = new Redis(url);
  }

  async start(name: string, env: Record<string, string | number> = {}): Promise<Child> {
    const child = await startChild('scheduler-node', name, {
      REDIS_URL: this.url,
      NS: this.ns,
      RECORD_KEY: this.recordKey,
      SCHEDULES: JSON.stringify(this.schedules),
      ...this.baseEnv,
      ...env,
    });
    this.children.push(child);
    const all = { ...this.baseEnv, ...env };
    if (String(all.ELIGIBLE ?? '1') !== '0' && String(all.SCHEDULER ?? '1') !== '0') this.campaigning.add(child);
    return child;
  }

  /** The shards each live child leads now, by its own events. */
  ledBy(): Map<Child, Set<number>> {
    const out = new Map<Child, Set<number>>();
    for (const e of this.leaderEvents()) {
      const set = out.get(e.child) ?? new Set<number>();
      for (const k of e.shards)
        if (e.acquired) set.add(k);
        else set.delete(k);
      out.set(e.child, set);
    }
    for (const c of [...out.keys()]) if (!c.alive) out.delete(c);
    return out;
  }

  /**
   * Waits until the live campaigning children lead the 16 shards between them, none twice, each
   * its fair share (16 ÷ n, ± 1), by their events: the fleet has settled after starts and stops.
   * After a kill, await the child's `exited` first: until then it counts as live.
   */
  async waitBalanced(timeoutMs = 15_000): Promise<Map<Child, Set<number>>> {
    return waitFor(
      () => {
        const n = [...this.campaigning].filter((c) => c.alive).length;
        const led = this.ledBy();
        const all = [...led.values()].flatMap((set) => [...set]);
        const fair = [...led.values()].every((set) => set.size === 0 || Math.abs(set.size - SHARD_COUNT / n) <= 1);
        const leaders = [...led.values()].filter((set) => set.size > 0).length;
        return n > 0 && leaders === n && all.length === SHARD_COUNT && new Set(all).size === SHARD_COUNT && fair ? led : undefined;
      },
      'the fleet to lead the shards in fair shares',
      timeoutMs,
    );
  }

  leaderEvents(): LeaderEvent[] {
    return this.children
      .flatMap((child) =>
        child.messages
          .filter((m) => m.event === 'leader')
          .map((m) => ({
            child,
            acquired: m.acquired as boolean,
            term: m.term as number,
            shards: (m.shards as number[] | undefined) ?? [],
            t: m.t as number,
          })),
      )
      .sort((a, b) => a.t - b.t);
  }

  /**
   * The shard whose leader a test means by "the leader": the shard of `schedule`, by default the
   * fleet's first schedule (tests that fail a leader over fail over the shard of what they watch).
   */
  shardOf(schedule?: string): number {
    const name = schedule ?? this.schedules[0]?.name;
    if (name === undefined) throw new Error('a fleet without schedules has no leader of a schedule');
    return shardOf(name);
  }

  /** Whether `child`'s own events say it leads `shard` now (its last event naming the shard is an acquisition). */
  private leads(child: Child, shard: number, events = this.leaderEvents()): LeaderEvent | undefined {
    const mine = events.filter((e) => e.child === child && e.shards.includes(shard));
    const last = mine[mine.length - 1];
    return last?.acquired ? last : undefined;
  }

  /** The live child that leads the shard of `schedule` (default: the fleet's first schedule), when exactly one does by its events. */
  currentLeader(schedule?: string): Child | undefined {
    const shard = this.shardOf(schedule);
    const leaders = this.children.filter((c) => c.alive && this.leads(c, shard) !== undefined);
    return leaders.length === 1 ? leaders[0] : undefined;
  }

  /**
   * Waits for the shard of `schedule` (default: the fleet's first schedule) to be taken at or after
   * `since` (epoch ms) by a live child that still leads it. Without `since` (the leader of a fleet
   * just started): once the fleet has settled ({@link waitBalanced}), so the leader returned is the
   * one that keeps the shard, not one that hands it to a later starter.
   */
  async waitLeader(since = 0, timeoutMs = 10_000, schedule?: string): Promise<LeaderEvent> {
    const shard = this.shardOf(schedule);
    if (since === 0) await this.waitBalanced(timeoutMs + 5000);
    return waitFor(
      () => {
        const all = this.leaderEvents();
        for (const c of this.children) {
          if (!c.alive) continue;
          const e = this.leads(c, shard, all);
          if (e !== undefined && e.t >= since) return e;
        }
        return undefined;
      },
      `a leader of shard ${shard}`,
      timeoutMs,
    );
  }

  /**
   * The message in which `child` reports losing the shard of `schedule` (default: the fleet's first
   * schedule) at or after `since` (epoch ms); waits for it.
   */
  lossOf(child: Child, since = 0, schedule?: string): Promise<Record<string, unknown>> {
    const shard = this.shardOf(schedule);
    return child.message(
      (m) => m.event === 'leader' && m.acquired === false && (m.shards as number[]).includes(shard) && (m.t as number) >= since,
    );
  }

  records(): Promise<Rec[]> {
    return readRecords(this.redis, this.recordKey);
  }

  /** SIGTERMs every live child and waits for their exits. */
  async stopAll(): Promise<void> {
    const live = this.children.filter((c) => c.alive);
    for (const c of live) c.kill('SIGTERM');
    await Promise.all(live.map((c) => c.exited));
  }

  async close(): Promise<void> {
    await killAllChildren();
    await this.redis.del(this.recordKey);
    this.redis.disconnect();
    await deleteNamespace(this.ns, this.url);
  }
}

/** The epoch-aligned multiples of `periodMs` in [fromMs, toMs]. */
export function alignedTriggers(fromMs: number, toMs: number, periodMs: number): number[] {
  const out: number[] = [];
  for (let t = Math.ceil(fromMs / periodMs) * periodMs; t <= toMs; t += periodMs) out.push(t);
  return out;
}

/** The next epoch-aligned multiple of `periodMs` strictly after `ms`. */
export function nextAligned(ms: number, periodMs: number): number {
  return (Math.floor(ms / periodMs) + 1) * periodMs;
}

/** How many times each trigger instant of `schedule` reached `phase`. */
export function perTrigger(recs: Rec[], schedule: string, phase: string): Map<number, number> {
  const m = new Map<number, number>();
  for (const r of recs) {
    if (r.phase !== phase || r.schedule !== schedule) continue;
    const at = r.triggerAt as number;
    m.set(at, (m.get(at) ?? 0) + 1);
  }
  return m;
}

/** How long to wait for the triggers up to `toMs`: until that instant, plus `slackMs` for firing and running under load. */
export function untilTriggerMs(toMs: number, slackMs = 15_000): number {
  return Math.max(0, toMs - Date.now()) + slackMs;
}

/**
 * Waits until every epoch-aligned trigger of `schedule` in [fromMs, toMs] has a record of `phase`
 * ('done': its handler finished; 'fired': a leader enqueued it); resolves with the records then.
 * @throws naming the schedule, the range and the triggers still missing when `timeoutMs` passes.
 */
export async function waitTriggers(
  f: Fleet,
  schedule: string,
  fromMs: number,
  toMs: number,
  { phase = 'done', periodMs = 1000, timeoutMs = untilTriggerMs(toMs) }: { phase?: string; periodMs?: number; timeoutMs?: number } = {},
): Promise<Rec[]> {
  const expected = alignedTriggers(fromMs, toMs, periodMs);
  if (expected.length === 0) throw new Error(`no ${periodMs} ms trigger of ${schedule} in [${fromMs}, ${toMs}]`);
  let recs: Rec[] = [];
  let missing = expected;
  await waitFor(
    async () => {
      recs = await f.records();
      const seen = perTrigger(recs, schedule, phase);
      missing = expected.filter((t) => !seen.has(t));
      return missing.length === 0;
    },
    { what: `every ${schedule} trigger in [${fromMs}, ${toMs}] to be ${phase}`, timeoutMs },
  ).catch((err: Error) => {
    throw new Error(`${err.message}; still missing: ${missing.join(', ')}`);
  });
  return recs;
}

/**
 * Every record of trigger `t` of `schedule`, in time order: its own (fired, start, done, skipped) and
 * those naming one of its task ids (requeued, superseded), each as `phase by instance at t (trigger ± ms)`.
 */
export function triggerStory(recs: Rec[], schedule: string, t: number): string {
  const ids = new Set(recs.filter((r) => r.schedule === schedule && r.triggerAt === t).map((r) => r.id));
  const mine = recs.filter((r) => (r.schedule === schedule && r.triggerAt === t) || (r.id !== undefined && ids.has(r.id)));
  const offset = (ms: number) => `${ms >= t ? '+' : '-'}${Math.abs(ms - t)} ms`;
  const told = [...mine]
    .sort((a, b) => a.t - b.t)
    .map((r) => {
      const extra = r.phase === 'requeued' ? `, ${String(r.reason)}` : r.phase === 'start' && r.retried > 0 ? `, retried ${r.retried}` : '';
      return `${r.phase} by ${r.instance} at ${r.t} (${offset(r.t)}${extra})`;
    });
  return `${schedule} trigger ${t} (${new Date(t).toISOString()}): ${told.join('; ')}`;
}

/**
 * Waits until every trigger of `schedule` in [from, to] (epoch-aligned, `periodMs`) is done, then
 * asserts, in this order: none was enqueued twice (phase 'fired'), each ran exactly once, none is
 * missing, and all are aligned. The enqueue check comes first so that a trigger done twice tells a
 * double fire (two tasks) from one task run twice (reclaimed and run again); each failure names the
 * trigger and every record of it (phase, instance, time: {@link triggerStory}).
 * One case of a second run is the documented at-least-once one (README Guarantees 4: a worker that
 * dies mid-task): a handler that finished in a process killed before its ack reached Redis runs
 * again elsewhere. So a trigger counts as run twice when two live processes ran it, or a dead one twice.
 * Choose `to` past the moments where a duplicate could arise (a failover): the wait ends on records, not on time.
 */
export async function expectOnceEach(f: Fleet, schedule: string, from: number, to: number, periodMs = 1000): Promise<void> {
  const expected = alignedTriggers(from, to, periodMs);
  expect(expected.length).toBeGreaterThan(0);
  const recs = await waitTriggers(f, schedule, from, to, { periodMs });
  const firedTwice = [...perTrigger(recs, schedule, 'fired')].filter(([, n]) => n > 1).map(([t]) => triggerStory(recs, schedule, t));
  expect({ firedTwice }).toEqual({ firedTwice: [] }); // never enqueued twice
  const done = perTrigger(recs, schedule, 'done');
  const live = new Set(f.children.filter((c) => c.alive).map((c) => c.name));
  const dead = new Set(f.children.filter((c) => !c.alive && !live.has(c.name)).map((c) => c.name)); // a name restarted counts as live
  const twice = [...done.keys()]
    .map((t) => ({ t, rs: recs.filter((r) => r.phase === 'done' && r.schedule === schedule && r.triggerAt === t) }))
    .filter(({ rs }) => rs.filter((r) => !dead.has(r.instance)).length > 1 || rs.filter((r) => dead.has(r.instance)).length > 1)
    .map(({ t }) => triggerStory(recs, schedule, t));
  expect({ missing: expected.filter((t) => !done.has(t)), twice }).toEqual({ missing: [], twice: [] });
  for (const t of done.keys()) expect(t % periodMs).toBe(0); // epoch-aligned, never drifting
}

/**
 * Waits until the lease of shard `shard` of namespace `ns` was just renewed (its entry in the shard
 * leases hash expires at least `ttlMs` − `freshMs` from now, by Redis time) and returns a lower bound
 * of the epoch ms at which it would expire if nobody touched it again: a hand-over before that
 * instant came from a release, not from the lease running out.
 */
export async function freshLease(redis: Redis, ns: string, ttlMs: number, shard: number, freshMs = 300): Promise<number> {
  const key = new SchedulerKeys(ns).shards;
  return waitFor(
    async () => {
      const sentAt = Date.now();
      const [[, value], [, time]] = (await redis.multi().hget(key, String(shard)).time().exec()) as [
        [null, string | null],
        [null, [string, string]],
      ];
      if (value === null) return 0;
      const expiresAt = Number(value.split('|').pop());
      const pttl = expiresAt - (Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000));
      return pttl >= ttlMs - freshMs ? sentAt + pttl : 0;
    },
    {
      what: `the lease of shard ${shard} of ${ns} to be renewed (≥ ${ttlMs - freshMs} ms left)`,
      timeoutMs: ttlMs + 10_000,
      intervalMs: 10,
    },
  );
}
