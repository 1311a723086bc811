import { fireSpansWanted, startFireSpan, type ChronosSpan } from '../observability/tracing.js';
import type { FireResult, FireTrigger } from '../redis/commands/schedule.js';
import { triggerKey } from './definition.js';
import type { FireItem } from './fire-triggers.js';
import { engineTime } from '../runtime/time.js';
import { RecentMap } from '../runtime/recent-map.js';

/** How often the leader renews a schedule's history TTL (30 days), ms. */
const RENEW_TTL_EVERY_MS = 3_600_000;
/**
 * Most schedules whose last TTL renewal is remembered (the last 50,000 written at least, in two
 * generations of a {@link RecentMap}): the leader's memory stays bounded at any schedule count (a
 * forgotten one renews at its next write).
 */
const UPKEEP_MEMORY = 100_000;

/**
 * What the leader's fire path reports besides its events: a PRODUCER span per trigger (started
 * before `fire.lua`, its `traceparent` written into the trigger task's meta, ended with the fire's
 * outcome, so a nightly job's trace starts at its trigger), and how `fire.lua` records each
 * trigger in its schedule's fire history (lib/core/scheduler/history.ts): the script writes the
 * record with the fire itself, so history costs the fire path no round trip.
 */
export class FireObserver {
  private spans: (ChronosSpan | undefined)[] = [];
  /** Per schedule: when its history's TTL was last renewed (epoch ms, the engine's clock). */
  private readonly renewedAt = new RecentMap<string, number>(UPKEEP_MEMORY / 2);

  /** @param historyLimit most fire records kept per schedule (SchedulerOptions.historyLimit): 0, no trigger is recorded. */
  constructor(private readonly historyLimit: number) {}

  /**
   * Starts the spans of a chunk; returns each trigger's `traceparent` (undefined when tracing is off;
   * an empty list when no span is made: tracing off, or no provider registered).
   */
  begin(chunk: readonly FireItem[]): (string | undefined)[] {
    if (!fireSpansWanted()) {
      this.spans = [];
      return [];
    }
    this.spans = chunk.map(({ entry: { stored: s }, triggerAt }) =>
      startFireSpan(s.name, s.queue, triggerAt, triggerKey(s.name, triggerAt)),
    );
    return this.spans.map((s) => s?.traceparent);
  }

  /**
   * Sets each trigger's history flag for fire.lua (FireTrigger.history): its outcome is recorded,
   * an advance-only one as skipped by the pause or the catch-up policy; the schedule's history TTL
   * is renewed on its first fire of this leadership, then hourly (a fire costs one LPUSH, and an
   * LTRIM every historyLimit / 10 records: fire.lua). With a historyLimit of 0 no trigger gets a flag.
   */
  historyFlags(chunk: readonly FireItem[], triggers: FireTrigger[]): void {
    if (this.historyLimit === 0) return;
    const now = engineTime.now();
    triggers.forEach((t, i) => {
      const by = chunk[i].advancedBy;
      const flag = by === 'pause' ? 'p' : by === 'catch-up' ? 'c' : 'r';
      const last = this.renewedAt.get(t.schedule) ?? -Infinity;
      const renew = now - last >= RENEW_TTL_EVERY_MS;
      if (renew) this.renewedAt.set(t.schedule, now);
      t.history = renew ? (flag.toUpperCase() as 'R' | 'P' | 'C') : flag;
      const count = chunk[i].count;
      if (count !== undefined && count > 1) t.historyCount = count;
    });
  }

  /** Ends the chunk's spans with their outcomes. */
  end(results: readonly FireResult[]): void {
    this.spans.forEach((span, i) => {
      span?.set({ 'chronos.fire.outcome': results[i] });
      span?.end();
    });
    this.spans = [];
  }

  /** Ends the chunk's spans when `fire.lua` failed. */
  fail(error: unknown): void {
    for (const span of this.spans) span?.end(error);
    this.spans = [];
  }
}
