import { randomUUID } from 'node:crypto';
import { ChronosStateError, InvalidOptionsError } from '../runtime/errors.js';
import { encodeMeta, type TaskMeta } from '../queue/codec.js';
import { runScript } from '../redis/scripts.js';
import { fireDedupTtlMs, storedSpec, triggerKey, type ScheduleDefinition } from '../scheduler/definition.js';
import { recordFires } from '../scheduler/history.js';
import * as registry from '../scheduler/registry.js';
import { triggersBetween } from '../scheduler/spec.js';
import type { InspectorContext } from './context.js';
import { schedule, storedSchedule } from './schedules.js';
import type { BackfillResult } from './types.js';
import { engineTime } from '../runtime/time.js';

/** Most triggers one backfill enqueues (a larger range is refused: split it). */
export const MAX_BACKFILL = 10_000;
/** Triggers per `backfill.lua` call. */
const BACKFILL_CHUNK = 250;

/**
 * Changes the registry through the scheduler's own admin functions (lib/core/scheduler/registry.ts:
 * schedule-admin.lua, the change notice and the fence in the queue's slot), so an operator's change
 * is fenced exactly like one made through `Scheduler`; then keeps or drops the operator's pause note.
 */
async function admin(ctx: InspectorContext, op: 'delete' | 'pause' | 'resume', name: string, note = '', actor = ''): Promise<void> {
  if (op === 'pause') await registry.pauseSchedule(ctx.client, ctx.sched, name);
  else if (op === 'resume') await registry.resumeSchedule(ctx.client, ctx.sched, name);
  else await registry.removeSchedule(ctx.client, ctx.sched, name);
  if (op === 'pause') await ctx.client.hset(ctx.sched.pauseNotes, name, JSON.stringify({ note, actor, at: engineTime.now() }));
  else await ctx.client.hdel(ctx.sched.pauseNotes, name);
}

/**
 * Adds (or replaces) a runtime schedule: validated, then the scheduler's `addSchedule` (schedule-admin.lua
 * "put", the change notice, the fence, one SADD of its queue). It lives in Redis, so the leader fires it
 * whichever instance added it; never orphaned.
 * @throws InvalidScheduleError for a bad spec, zone or option.
 */
export async function addSchedule(ctx: InspectorContext, def: ScheduleDefinition, defaultTimeZone: string): Promise<void> {
  await registry.addSchedule(ctx.client, ctx.sched, ctx.namespace, def, defaultTimeZone);
}

/**
 * Pauses a schedule fleet-wide (its triggers are skipped while paused), keeping the operator's note
 * (shown while it stays paused). One `schedule-admin.lua`; safe to repeat (the note is replaced).
 * @throws ScheduleNotFoundError
 */
export async function pauseSchedule(ctx: InspectorContext, name: string, note?: string, actor?: string): Promise<void> {
  await admin(ctx, 'pause', name, note ?? '', actor ?? ctx.actor);
  ctx.emit('schedule.pause', actor, { schedule: name, count: 1 });
}

/** Resumes a paused schedule (its note is dropped). One `schedule-admin.lua`; safe to repeat. @throws ScheduleNotFoundError */
export async function resumeSchedule(ctx: InspectorContext, name: string, actor?: string): Promise<void> {
  await admin(ctx, 'resume', name);
  ctx.emit('schedule.resume', actor, { schedule: name, count: 1 });
}

/**
 * Removes a schedule from the registry. A code-declared schedule that a live instance still
 * declares is refused unless `force` (it would come back when that instance restarts or re-publishes):
 * remove runtime or orphaned ones. Cost: the schedule read ({@link schedule}) and one script.
 * @throws ScheduleNotFoundError; ChronosStateError when live instances declare it and `force` is not set.
 */
export async function removeSchedule(ctx: InspectorContext, name: string, force = false, actor?: string): Promise<void> {
  const s = await schedule(ctx, name, 1);
  const live = s.declaredBy.filter((d) => d.alive).map((d) => d.instance);
  if (!s.runtime && live.length > 0 && !force) {
    throw new ChronosStateError(
      `Schedule "${name}" is declared in code by live instance(s) ${live.join(', ')}: it would come back when one of them restarts. ` +
        'Remove it from the code, or force the removal (CLI: --force).',
    );
  }
  await admin(ctx, 'delete', name);
  ctx.emit('schedule.remove', actor, { schedule: name, count: 1 });
}

/**
 * Enqueues one task of the schedule now, as `<name>:manual:<uuid>` (`schedule`/`triggerAt` set),
 * without shifting its cadence (lastFired untouched), and records a `manual` fire. Cost: HGET, TIME,
 * XADD, SADD, the history pipeline.
 * @returns the task id. @throws ScheduleNotFoundError
 */
export async function triggerSchedule(ctx: InspectorContext, name: string, actor?: string): Promise<string> {
  const s = await storedSchedule(ctx, name);
  const k = ctx.keys(s.queue);
  const now = await ctx.redisNow();
  const id = `${name}:manual:${randomUUID()}`;
  const meta: TaskMeta = { r: 0, m: s.maxRetry, t: s.timeoutMs, e: now, s: name, tr: now };
  await ctx.client.xadd(k.stream, '*', 'id', id, 'type', s.type, 'payload', s.payload, 'meta', encodeMeta(meta));
  await ctx.client.sadd(ctx.global.queues, s.queue);
  await recordFires(ctx.client, k, [{ schedule: name, triggerAt: now, at: now, outcome: 'manual', taskId: id, by: actor ?? ctx.actor }]);
  ctx.emit('schedule.trigger', actor, { schedule: name, queue: s.queue, taskId: id, count: 1 });
  return id;
}

/**
 * Enqueues every trigger of the schedule in [fromMs, toMs] (epoch ms; `toMs` is capped at Redis
 * time now) that was never enqueued, each once by its dedup key `<schedule>:<trigger-unix>`
 * (`backfill.lua`, 250 triggers per call), and reports how many were new. lastFired and the
 * overlap policy are left alone. A trigger older than its dedup key's lifetime (≥ 1 h, see
 * `fireDedupTtlMs`) cannot be told from one never fired, and is enqueued.
 * @throws ScheduleNotFoundError; InvalidOptionsError for a reversed range or more than {@link MAX_BACKFILL} triggers.
 */
export async function backfillSchedule(
  ctx: InspectorContext,
  name: string,
  fromMs: number,
  toMs: number,
  actor?: string,
): Promise<BackfillResult> {
  const what = `backfill of "${name}"`;
  if (!Number.isFinite(fromMs) || !Number.isFinite(toMs) || fromMs > toMs) {
    throw new InvalidOptionsError([`range: expected from <= to (epoch ms), got from=${String(fromMs)} to=${String(toMs)}`], what);
  }
  const s = await storedSchedule(ctx, name);
  const spec = storedSpec(s);
  const now = await ctx.redisNow();
  const { triggers, skipped } = triggersBetween(spec, fromMs - 1, Math.min(toMs, now), MAX_BACKFILL);
  if (skipped > 0) {
    const count = triggers.length + skipped;
    throw new InvalidOptionsError([`the range holds at least ${count} triggers, more than ${MAX_BACKFILL}: split it`], what);
  }
  const k = ctx.keys(s.queue);
  const ttl = fireDedupTtlMs(s, spec);
  const ids: string[] = [];
  for (let c = 0; c < triggers.length; c += BACKFILL_CHUNK) {
    const chunk = triggers.slice(c, c + BACKFILL_CHUNK);
    const keys = [k.stream, ...chunk.map((t) => k.dedup(triggerKey(name, t)))];
    const args: (string | number)[] = [s.type, s.payload, ttl];
    for (const t of chunk) args.push(triggerKey(name, t), encodeMeta({ r: 0, m: s.maxRetry, t: s.timeoutMs, e: now, s: name, tr: t }));
    ids.push(...(await runScript<string[]>(ctx.client, 'backfill', keys, args)));
  }
  if (ids.length > 0) {
    await ctx.client.sadd(ctx.global.queues, s.queue);
    const by = actor ?? ctx.actor;
    const added = new Set(ids);
    const records = triggers.filter((t) => added.has(triggerKey(name, t)));
    const outcome = 'backfill' as const;
    const fires = records.map((t) => ({ schedule: name, triggerAt: t, at: now, taskId: triggerKey(name, t), by, outcome }));
    await recordFires(ctx.client, k, fires);
  }
  ctx.emit('schedule.backfill', actor, { schedule: name, queue: s.queue, count: ids.length });
  return { triggers: triggers.length, enqueued: ids.length, duplicates: triggers.length - ids.length, ids: ids.slice(0, 1000) };
}
