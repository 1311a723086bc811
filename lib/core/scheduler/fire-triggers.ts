/**
 * The triggers of one fire.lua call, built from the planned items of a chunk: each trigger's task
 * (type, payload, encoded meta) with its dedup TTL, mode and generation. Units: epoch ms.
 */
import { encodeMeta } from '../queue/codec.js';
import { FIRE_MODE, META, OVERLAP_MODE, newMeta, type FireMode, type SupersedeNotice } from '../redis/protocol.js';
import type { FireResult, FireTrigger } from '../redis/commands/schedule.js';
import { triggerKey } from './definition.js';
import type { ObservedTrigger } from './fire-observer.js';
import type { Entry } from './firing-load.js';

/** One trigger a tick planned: the schedule, the instant (epoch ms) and how fire.lua takes it. */
export interface FireItem {
  entry: Entry;
  triggerAt: number;
  mode: FireMode;
  /** An advance-only item: whether the pause or the catch-up rules skipped the trigger (its history outcome). */
  advancedBy?: 'pause' | 'catch-up';
}

/** The triggers of a chunk as the fire observer sees them (schedule, queue, instant, task id). */
export function observedOf(chunk: readonly FireItem[]): ObservedTrigger[] {
  return chunk.map(({ entry: { stored: s }, triggerAt, advancedBy }) => ({
    schedule: s.name,
    queue: s.queue,
    triggerAt,
    taskId: triggerKey(s.name, triggerAt),
    advancedBy,
  }));
}

/**
 * The fire.lua triggers of a chunk.
 * @param traceparents each trigger's `traceparent` (undefined when tracing is off), in chunk order
 * @param nowMs the enqueue instant written into each task's meta (Redis time, epoch ms)
 * @param trustLocalClock under a test clock the catch-up fields are left out (the worker judges by Redis time)
 */
export function fireTriggers(
  chunk: readonly FireItem[],
  traceparents: readonly (string | undefined)[],
  nowMs: number,
  trustLocalClock: boolean,
): FireTrigger[] {
  return chunk.map(({ entry, triggerAt, mode }, i) => {
    const s = entry.stored;
    const meta = newMeta(s.maxRetry, s.timeoutMs, nowMs);
    meta[META.schedule] = s.name;
    meta[META.triggerAt] = triggerAt;
    if (mode === FIRE_MODE.skipOverlap || mode === FIRE_MODE.bufferOne || mode === FIRE_MODE.cancelPrevious) meta[META.overlapSkip] = 1;
    if (mode === FIRE_MODE.bufferOne) meta[META.overlapMode] = OVERLAP_MODE.bufferOne;
    if (mode === FIRE_MODE.cancelPrevious) meta[META.overlapMode] = OVERLAP_MODE.cancelPrevious;
    if (s.group !== undefined) meta[META.group] = s.group;
    // what the worker needs to apply the catch-up policy to the task if it waits in the queue (recovery/stale.ts);
    // not under a test clock: the worker judges by Redis time, which a test clock does not follow
    if (!trustLocalClock) {
      meta[META.catchUpWindowMs] = s.catchUpWindowMs;
      // the next trigger supersedes a waiting task under catch-up latest/none and always under
      // cancel-previous; never under buffer-one (a newer trigger waits behind it, or is skipped)
      const superseding = mode === FIRE_MODE.cancelPrevious || (s.catchUp !== 'all' && mode !== FIRE_MODE.bufferOne);
      const next = superseding ? entry.spec.nextAfter(triggerAt) : null;
      if (next !== null) meta[META.supersededAt] = next;
    }
    const taskId = triggerKey(s.name, triggerAt);
    const traceparent = traceparents[i];
    if (traceparent) meta[META.traceparent] = traceparent;
    const { dedupTtlMs, generation, liveUntil } = entry;
    const task = { type: s.type, payload: s.payload, meta: encodeMeta(meta) };
    return { schedule: s.name, triggerAt, taskId, ...task, dedupTtlMs, mode, generation, liveUntil };
  });
}

/**
 * The notices of a chunk's `superseding` triggers (overlap `cancel-previous`, protocol.ts
 * SupersedeNotice): one per schedule, with its newest such trigger (it supersedes every older run).
 */
export function supersedeNotices(chunk: readonly FireItem[], results: readonly FireResult[]): SupersedeNotice[] {
  const newest = new Map<string, SupersedeNotice>();
  chunk.forEach(({ entry: { stored: s }, triggerAt }, i) => {
    if (results[i] !== 'superseding') return;
    const n = newest.get(s.name);
    if (!n || n.triggerAt < triggerAt) {
      newest.set(s.name, { queue: s.queue, schedule: s.name, supersededBy: triggerKey(s.name, triggerAt), triggerAt });
    }
  });
  return [...newest.values()];
}
