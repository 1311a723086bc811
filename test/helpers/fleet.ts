import { Redis } from 'ioredis';
import type { ScheduleDefinition } from '../../lib/core/scheduler/definition.js';
import { startChild, killAllChildren, type Child } from './children.js';
import { readRecords, type Rec } from './records.js';
import { deleteNamespace, newNamespace, redisUrl } from './redis.js';
import { expect } from '@jest/globals';
import { waitFor } from './wait.js';

/** Leadership changes reported by fixture processes. */
export interface LeaderEvent {
  child: Child;
  acquired: boolean;
  term: number;
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
    return child;
  }

  leaderEvents(): LeaderEvent[] {
    return this.children
      .flatMap((child) =>
        child.messages
          .filter((m) => m.event === 'leader')
          .map((m) => ({ child, acquired: m.acquired as boolean, term: m.term as number, t: m.t as number })),
      )
      .sort((a, b) => a.t - b.t);
  }

  /** The live child that currently leads (its last leader event is an acquisition). */
  currentLeader(): Child | undefined {
    const leaders = this.children.filter((c) => {
      if (!c.alive) return false;
      const mine = c.messages.filter((m) => m.event === 'leader');
      return mine.length > 0 && mine[mine.length - 1].acquired === true;
    });
    return leaders.length === 1 ? leaders[0] : undefined;
  }

  /** Waits for a leadership acquired at or after `since` (epoch ms) by a live child that still holds it. */
  async waitLeader(since = 0, timeoutMs = 10_000): Promise<LeaderEvent> {
    return waitFor(
      () => {
        const all = this.leaderEvents();
        return all.find((e) => {
          if (!e.acquired || e.t < since || !e.child.alive) return false;
          const mine = all.filter((x) => x.child === e.child);
          return mine[mine.length - 1] === e;
        });
      },
      'a leader',
      timeoutMs,
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

/**
 * Waits until every trigger of `schedule` in [from, to] (epoch-aligned, `periodMs`) is done, then
 * asserts each ran exactly once, none is missing, none was enqueued twice, and all are aligned.
 */
export async function expectOnceEach(f: Fleet, schedule: string, from: number, to: number, periodMs = 1000): Promise<void> {
  const expected = alignedTriggers(from, to, periodMs);
  await waitFor(
    async () => {
      const done = perTrigger(await f.records(), schedule, 'done');
      return expected.every((t) => done.has(t));
    },
    `every ${schedule} trigger in [${from}, ${to}] to be done`,
    15_000,
  );
  const recs = await f.records();
  const done = perTrigger(recs, schedule, 'done');
  expect({ missing: expected.filter((t) => !done.has(t)), twice: [...done].filter(([, n]) => n > 1) }).toEqual({ missing: [], twice: [] });
  for (const t of done.keys()) expect(t % periodMs).toBe(0); // epoch-aligned, never drifting
  expect([...perTrigger(recs, schedule, 'fired')].filter(([, n]) => n > 1)).toEqual([]); // never enqueued twice
}
