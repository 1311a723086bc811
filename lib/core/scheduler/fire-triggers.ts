/**
 * The triggers of one fire.lua call, built from the planned items of a chunk: each trigger's task
 * (type, payload, encoded meta) with its dedup TTL, mode, generation, the instant its task may start
 * (its schedule's jitter shift: schedule-bounds.ts) and its schedule's maxRuns; and what follows a
 * call: the superseding notices on the cancel channel, the due-time index of delayed trigger tasks.
 * Units: epoch ms.
 */
import { FIRE_LEAD, FIRE_MODE, META, OVERLAP_MODE, type FireMode, type SupersedeNotice } from '../redis/protocol.js';
import type { FireResult, FireTrigger } from '../redis/commands/schedule.js';
import { triggerKey, type StoredSchedule } from './definition.js';
import type { Entry } from './due-entry.js';
import { jitterShiftMs } from './schedule-bounds.js';
import { effectiveWindowMs } from './plan.js';
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
  /** An advance-only item: how many skipped triggers it stands for (its history record's `count`). */
  count?: number;
}

/** A schedule's constant parts of its trigger tasks' meta text (see {@link triggerMeta}). */
interface MetaTemplate {
  /** `{"m":<maxRetry>,"t":<timeoutMs>,"e":` (`t` left out at 0, as encodeMeta does). */
  head: string;
  /** `,"s":<name>,"tr":`. */
  named: string;
  /** `,"g":<group>` or "". */
  group: string;
}

/** The meta templates by stored definition (read-only objects shared while their text is unchanged: due-entry.ts SpecCache). */
const templates = new WeakMap<StoredSchedule, MetaTemplate>();

function templateOf(s: StoredSchedule): MetaTemplate {
  let t = templates.get(s);
  if (t === undefined) {
    const timeout = s.timeoutMs === 0 ? '' : `"${META.timeoutMs}":${JSON.stringify(s.timeoutMs)},`;
    t = {
      head: `{"${META.maxRetry}":${JSON.stringify(s.maxRetry)},${timeout}"${META.enqueuedAt}":`,
      named: `,"${META.schedule}":${JSON.stringify(s.name)},"${META.triggerAt}":`,
      group: s.group === undefined ? '' : `,"${META.group}":${JSON.stringify(s.group)}`,
    };
    templates.set(s, t);
  }
  return t;
}

/** The overlap fields of a trigger task's meta by fire mode (protocol.ts META overlapSkip, overlapMode). */
const OVERLAP_META: Record<FireMode, string> = {
  [FIRE_MODE.allowOverlap]: '',
  [FIRE_MODE.advanceOnly]: '',
  [FIRE_MODE.skipOverlap]: `,"${META.overlapSkip}":1`,
  [FIRE_MODE.bufferOne]: `,"${META.overlapSkip}":1,"${META.overlapMode}":"${OVERLAP_MODE.bufferOne}"`,
  [FIRE_MODE.cancelPrevious]: `,"${META.overlapSkip}":1,"${META.overlapMode}":"${OVERLAP_MODE.cancelPrevious}"`,
};

/**
 * A number as `JSON.stringify` writes it: its shortest decimal form, `null` when not finite. Not
 * `JSON.stringify` itself: on an instant (epoch ms, past the small-integer range) optimised code
 * calls it as a C++ builtin, with the serialiser set up per call; four per trigger were half of
 * {@link fireTriggers}'s time in w5's leader (perf, steady state), where a template literal's
 * number conversion stays in generated code (and its number-to-string cache: a chunk's triggers
 * share their instants).
 */
export function jsonNumber(n: number): string {
  return Number.isFinite(n) ? `${n}` : 'null';
}

/**
 * The meta text of a trigger's task: what `encodeMeta` gives for `newMeta(maxRetry, timeoutMs,
 * enqueuedAt)` with the trigger's fields (schedule, triggerAt, the overlap flags, group, the
 * catch-up fields, traceparent), in the same order, from its schedule's cached template.
 * @param catchUpWindowMs the `cw` field, ms (undefined: left out); `supersededAt` the `nx` field, epoch ms (null: left out)
 */
export function triggerMeta(
  s: StoredSchedule,
  mode: FireMode,
  enqueuedAt: number,
  triggerAt: number,
  catchUpWindowMs: number | undefined,
  supersededAt: number | null,
  traceparent: string | undefined,
): string {
  const t = templateOf(s);
  let text = t.head + jsonNumber(enqueuedAt) + t.named + jsonNumber(triggerAt) + OVERLAP_META[mode] + t.group;
  if (catchUpWindowMs !== undefined) text += `,"${META.catchUpWindowMs}":${jsonNumber(catchUpWindowMs)}`;
  if (supersededAt !== null) text += `,"${META.supersededAt}":${jsonNumber(supersededAt)}`;
  if (traceparent) text += `,"${META.traceparent}":${JSON.stringify(traceparent)}`;
  return text + '}';
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
  const out: FireTrigger[] = new Array(chunk.length);
  for (let i = 0; i < chunk.length; i++) {
    const { entry, triggerAt, mode } = chunk[i];
    const s = entry.stored;
    const shift = jitterShiftMs(s.name, triggerAt, s.jitterMs);
    // what the worker needs to apply the catch-up policy to the task if it waits in the queue (recovery/stale.ts);
    // not under a test clock: the worker judges by Redis time, which a test clock does not follow
    let windowMs: number | undefined;
    let supersededAt: number | null = null;
    if (!trustLocalClock) {
      // the next trigger supersedes a waiting task under catch-up latest/none and always under
      // cancel-previous; never under buffer-one (a newer trigger waits behind it, or is skipped)
      const superseding = mode === FIRE_MODE.cancelPrevious || (s.catchUp !== 'all' && mode !== FIRE_MODE.bufferOne);
      const next = superseding ? entry.spec.nextAfter(triggerAt) : null;
      windowMs = effectiveWindowMs(s.catchUpWindowMs) + shift; // on time relative to its shifted instant
      if (next !== null) supersededAt = next + jitterShiftMs(s.name, next, s.jitterMs); // when the next one's task starts
    }
    const meta = mode === FIRE_MODE.advanceOnly ? '' : triggerMeta(s, mode, nowMs, triggerAt, windowMs, supersededAt, traceparents[i]);
    const { dedupTtlMs, generation, liveUntil } = entry;
    const t: FireTrigger = { schedule: s.name, triggerAt, type: s.type, payload: s.payload, meta, dedupTtlMs, mode, generation, liveUntil };
    // a jittered task starts at its shifted instant; one enqueued further ahead than the hold window waits in the
    // scheduled set (where a change of its schedule retracts it) rather than in a worker's hands
    if (shift > 0) t.dueAt = triggerAt + shift;
    else if (triggerAt - nowMs > FIRE_LEAD.holdMs) t.dueAt = triggerAt;
    if (s.maxRuns !== undefined) t.maxRuns = s.maxRuns;
    out[i] = t;
  }
  return out;
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
 * Indexes the earliest due time of the delayed tasks a fire.lua call wrote (triggers whose task may
 * start only after Redis's `now`: a jitter shift, or enqueued further ahead than the hold window) in the namespace's due-time index (lower-due.lua), so the
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
    logger.warn(`Could not index a delayed trigger's due time; the sweep finds it (queue=${queue} error=${String(err)})`);
  });
}
