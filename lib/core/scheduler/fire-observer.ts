import { startFireSpan, tracingAvailable, type ChronosSpan } from '../observability/tracing.js';
import type { RedisClient } from '../redis/connection.js';
import type { QueueKeys } from '../redis/keys.js';
import type { FireResult } from '../redis/commands/schedule.js';
import { outcomeOfFire, recordFires } from './history.js';
import { engineTime } from '../runtime/time.js';
import { RecentMap } from '../runtime/recent-map.js';

/** A schedule's history is trimmed to HISTORY_LIMIT once per this many records written by the leader. */
const TRIM_EVERY = 10;
/** How often the leader renews a schedule's history TTL (30 days), ms. */
const RENEW_TTL_EVERY_MS = 3_600_000;
/**
 * Most schedules whose upkeep is remembered (the last 50,000 written at least, in two generations of a
 * {@link RecentMap}): the leader's memory stays bounded at any schedule count (a forgotten one trims
 * and renews at its next write).
 */
const UPKEEP_MEMORY = 100_000;

/** One trigger of a fire chunk as the observer sees it. Instants are epoch ms. */
export interface ObservedTrigger {
  readonly schedule: string;
  readonly queue: string;
  readonly triggerAt: number;
  /** `<schedule>:<trigger-unix>`. */
  readonly taskId: string;
  /** An advance-only trigger: what skipped it (see {@link outcomeOfFire}). */
  readonly advancedBy?: 'pause' | 'catch-up';
}

/**
 * What the leader's fire path reports besides its events: a PRODUCER span per trigger (started
 * before `fire.lua`, its `traceparent` written into the trigger task's meta, ended with the fire's
 * outcome, so a nightly job's trace starts at its trigger), and the schedule's fire history
 * (lib/core/scheduler/history.ts), written after the chunk without holding up the next fire.
 */
export class FireObserver {
  private spans: (ChronosSpan | undefined)[] = [];
  /** Per schedule: records pushed since the last trim, and when its history's TTL was last renewed (epoch ms). */
  private readonly upkept = new RecentMap<string, { sinceTrim: number; expiredAt: number }>(UPKEEP_MEMORY / 2);

  constructor(
    private readonly client: RedisClient,
    private readonly instanceId: string,
  ) {}

  /** Starts the spans of a chunk; returns each trigger's `traceparent` (undefined when tracing is off). */
  begin(triggers: readonly ObservedTrigger[]): (string | undefined)[] {
    this.spans = tracingAvailable() ? triggers.map((t) => startFireSpan(t.schedule, t.queue, t.triggerAt, t.taskId)) : [];
    return this.spans.map((s) => s?.traceparent);
  }

  /** Ends the chunk's spans with their outcomes and records the fires in the history (errors are ignored: history is advisory). */
  end(keys: QueueKeys, triggers: readonly ObservedTrigger[], results: readonly FireResult[], redisNowMs: number): void {
    this.spans.forEach((span, i) => {
      span?.set({ 'chronos.fire.outcome': results[i] });
      span?.end();
    });
    this.spans = [];
    const records = triggers.map((t, i) => {
      const outcome = outcomeOfFire(results[i], t.advancedBy);
      const taskId =
        outcome === 'enqueued' || outcome === 'buffered' || outcome === 'superseding' || outcome === 'duplicate' ? t.taskId : undefined;
      return { schedule: t.schedule, triggerAt: t.triggerAt, at: redisNowMs, outcome, taskId, by: this.instanceId };
    });
    void recordFires(this.client, keys, records, (schedule, added) => this.upkeep(schedule, added)).catch(() => {});
  }

  /**
   * Whether a history write trims (every {@link TRIM_EVERY} records: the list stays below
   * HISTORY_LIMIT + TRIM_EVERY) and renews the TTL (on a schedule's first write of this leadership,
   * then hourly), so the history costs a fire about one command instead of three.
   */
  private upkeep(schedule: string, added: number): { trim: boolean; expire: boolean } {
    const now = engineTime.now();
    const u = this.upkept.get(schedule) ?? { sinceTrim: TRIM_EVERY, expiredAt: -Infinity };
    u.sinceTrim += added;
    const trim = u.sinceTrim >= TRIM_EVERY;
    if (trim) u.sinceTrim = 0;
    const expire = now - u.expiredAt >= RENEW_TTL_EVERY_MS;
    if (expire) u.expiredAt = now;
    this.upkept.set(schedule, u); // into the current generation: remembered while in use
    return { trim, expire };
  }

  /** Ends the chunk's spans when `fire.lua` failed. */
  fail(error: unknown): void {
    for (const span of this.spans) span?.end(error);
    this.spans = [];
  }
}
