import { startFireSpan, tracingAvailable, type ChronosSpan } from '../observability/tracing.js';
import type { RedisClient } from '../redis/connection.js';
import type { QueueKeys } from '../redis/keys.js';
import type { FireResult } from '../redis/schedule-commands.js';
import { outcomeOfFire, recordFires } from './history.js';

/** One trigger of a fire chunk as the observer sees it. Instants are epoch ms. */
export interface ObservedTrigger {
  readonly schedule: string;
  readonly queue: string;
  readonly triggerAt: number;
  /** `<schedule>:<trigger-unix>`. */
  readonly taskId: string;
}

/**
 * What the leader's fire path reports besides its events: a PRODUCER span per trigger (started
 * before `fire.lua`, its `traceparent` written into the trigger task's meta, ended with the fire's
 * outcome, so a nightly job's trace starts at its trigger), and the schedule's fire history
 * (lib/core/scheduler/history.ts), written after the chunk without holding up the next fire.
 */
export class FireObserver {
  private spans: (ChronosSpan | undefined)[] = [];

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
      const outcome = outcomeOfFire(results[i]);
      const taskId = outcome === 'enqueued' || outcome === 'duplicate' ? t.taskId : undefined;
      return { schedule: t.schedule, triggerAt: t.triggerAt, at: redisNowMs, outcome, taskId, by: this.instanceId };
    });
    void recordFires(this.client, keys, records).catch(() => {});
  }

  /** Ends the chunk's spans when `fire.lua` failed. */
  fail(error: unknown): void {
    for (const span of this.spans) span?.end(error);
    this.spans = [];
  }
}
