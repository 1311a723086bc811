import { fireSpansWanted, startFireSpan, tracingAvailable, type ChronosSpan } from '../observability/tracing.js';
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
  /** Per schedule: when its history's TTL was last renewed (epoch ms, the engine's clock). */
  private readonly renewedAt = new RecentMap<string, number>(UPKEEP_MEMORY / 2);

  /** @param historyLimit most fire records kept per schedule (SchedulerOptions.historyLimit): 0, no trigger is recorded. */
  constructor(private readonly historyLimit: number) {
    // the optional tracing API is loaded now (a synchronous require of some 10-25 ms), not in the first batch a leader fires
    tracingAvailable();
  }

  /**
   * Starts the spans of a chunk (one fire.lua call): they are the call's own, ended by {@link end} or
   * {@link fail} with them, since a batch's calls, one per queue, are in flight at once. Empty when no
   * span is made (tracing off, or no provider registered); a span's `traceparent` goes into its
   * trigger's task meta.
   */
  begin(chunk: readonly FireItem[]): FireSpans {
    if (!fireSpansWanted()) return [];
    return chunk.map(({ entry: { stored: s }, triggerAt }) => startFireSpan(s.name, s.queue, triggerAt, triggerKey(s.name, triggerAt)));
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
    for (let i = 0; i < triggers.length; i++) {
      const t = triggers[i];
      const by = chunk[i].advancedBy;
      const flag = by === 'pause' ? 'p' : by === 'catch-up' ? 'c' : 'r';
      const last = this.renewedAt.get(t.schedule) ?? -Infinity;
      const renew = now - last >= RENEW_TTL_EVERY_MS;
      if (renew) this.renewedAt.set(t.schedule, now);
      t.history = renew ? (flag.toUpperCase() as 'R' | 'P' | 'C') : flag;
      const count = chunk[i].count;
      if (count !== undefined && count > 1) t.historyCount = count;
    }
  }

  /** Ends a chunk's spans with their outcomes. */
  end(spans: FireSpans, results: readonly FireResult[]): void {
    spans.forEach((span, i) => {
      span?.set({ 'chronos.fire.outcome': results[i] });
      span?.end();
    });
  }

  /** Ends a chunk's spans when its `fire.lua` call failed. */
  fail(spans: FireSpans, error: unknown): void {
    for (const span of spans) span?.end(error);
  }
}

/** The fire spans of one fire.lua call, one per trigger (undefined where none was made); empty when tracing is off. */
export type FireSpans = readonly (ChronosSpan | undefined)[];
