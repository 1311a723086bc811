/**
 * The triggers of one fire.lua call, built from the planned items of a chunk: each trigger's task
 * (type, payload, encoded meta) with its dedup TTL, mode, generation, the instant its task may start
 * (its schedule's jitter shift: schedule-bounds.ts) and its schedule's maxRuns; and what follows a
 * call: the superseding notices on the cancel channel, the due-time index of delayed trigger tasks.
 * Units: epoch ms.
 */
import { encodeMeta } from '../queue/codec.js';
import { FIRE_MODE, META, OVERLAP_MODE, newMeta, type FireMode, type SupersedeNotice } from '../redis/protocol.js';
import type { FireResult, FireTrigger } from '../redis/commands/schedule.js';
import { triggerKey } from './definition.js';
import type { ObservedTrigger } from './fire-observer.js';
import type { Entry } from './due-entry.js';
import { jitterShiftMs } from './schedule-bounds.js';
import { lowerDue } from '../redis/commands/due.js';
import type { RedisClient } from '../redis/connection.js';
import { GlobalKeys } from '../redis/keys.js';
import type { ChronosLogger } from '../runtime/logger.js';

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
    const shift = jitterShiftMs(s.name, triggerAt, s.jitterMs);
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
      meta[META.catchUpWindowMs] = s.catchUpWindowMs + shift; // on time relative to its shifted instant
      // the next trigger supersedes a waiting task under catch-up latest/none and always under
      // cancel-previous; never under buffer-one (a newer trigger waits behind it, or is skipped)
      const superseding = mode === FIRE_MODE.cancelPrevious || (s.catchUp !== 'all' && mode !== FIRE_MODE.bufferOne);
      const next = superseding ? entry.spec.nextAfter(triggerAt) : null;
      if (next !== null) meta[META.supersededAt] = next + jitterShiftMs(s.name, next, s.jitterMs); // when the next one's task starts
    }
    const taskId = triggerKey(s.name, triggerAt);
    const traceparent = traceparents[i];
    if (traceparent) meta[META.traceparent] = traceparent;
    const { dedupTtlMs, generation, liveUntil } = entry;
    const task = { type: s.type, payload: s.payload, meta: encodeMeta(meta) };
    const t: FireTrigger = { schedule: s.name, triggerAt, taskId, ...task, dedupTtlMs, mode, generation, liveUntil };
    if (shift > 0) t.dueAt = triggerAt + shift;
    if (s.maxRuns !== undefined) t.maxRuns = s.maxRuns;
    return t;
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

/**
 * Tells the workers which runs the chunk's `superseding` triggers supersede (overlap
 * `cancel-previous`): one notice per schedule, with its newest such trigger, on the cancel channel.
 * A lost notice is made up for by the workers' claim renewals (claim.lua reports the taken marker).
 */
export function announceSuperseding(
  client: RedisClient,
  namespace: string,
  logger: ChronosLogger,
  chunk: readonly FireItem[],
  results: readonly FireResult[],
): void {
  const notices = supersedeNotices(chunk, results);
  if (notices.length === 0) return;
  const channel = new GlobalKeys(namespace).cancelChannel;
  for (const n of notices) {
    client.publish(channel, JSON.stringify(n)).catch((err: unknown) => {
      logger.warn(
        'Could not announce a superseding trigger; its workers find out at their next claim renewal ' +
          `(schedule=${n.schedule} trigger=${n.supersededBy} error=${String(err)})`,
      );
    });
  }
}

/**
 * Indexes the earliest due time of the delayed tasks a fire.lua call wrote (jittered triggers whose
 * shifted instant is after Redis's `now`) in the namespace's due-time index (lower-due.lua), so the
 * workers of the queue forward them at that instant. A failed write is logged: the forwarders'
 * sweep finds the tasks anyway.
 */
export async function indexDelayed(
  client: RedisClient,
  namespace: string,
  logger: ChronosLogger,
  queue: string,
  triggers: readonly FireTrigger[],
  results: readonly FireResult[],
  now: number,
): Promise<void> {
  let earliest = Infinity;
  triggers.forEach((t, i) => {
    const r = results[i];
    if (t.dueAt !== undefined && t.dueAt > now && (r === 'enqueued' || r === 'superseding')) earliest = Math.min(earliest, t.dueAt);
  });
  if (earliest === Infinity) return;
  await lowerDue(client, new GlobalKeys(namespace).due, queue, earliest).catch((err: unknown) => {
    logger.warn(`Could not index a jittered trigger's due time; the sweep finds it (queue=${queue} error=${String(err)})`);
  });
}
