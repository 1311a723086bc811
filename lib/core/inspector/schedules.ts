import { ScheduleNotFoundError } from '../errors.js';
import { storedSpec, type StoredSchedule } from '../scheduler/definition.js';
import { readFires } from '../scheduler/history.js';
import { nextTriggers } from '../scheduler/spec.js';
import type { InspectorContext } from './context.js';
import { findInStream } from './tasks.js';
import type { FireInfo, FireTaskState, InstanceInfo, PauseNote, ScheduleInfo } from './types.js';

/** Stream entries a history read looks through for the tasks of its fires (each call bounded). */
const HISTORY_STREAM_SCAN = 10_000;

/** Scheduler instances seen in the last day, with liveness: ZRANGE … WITHSCORES + TIME (one pipeline). */
export async function instances(ctx: InspectorContext): Promise<InstanceInfo[]> {
  const r = (await ctx.client.pipeline().zrange(ctx.sched.instances, 0, -1, 'WITHSCORES').time().exec())!;
  const rows = r[0][1] as string[];
  const [s, us] = r[1][1] as [string, string];
  const now = Number(s) * 1000 + Math.floor(Number(us) / 1000);
  const out: InstanceInfo[] = [];
  for (let i = 0; i < rows.length; i += 2) {
    const lastSeenAt = Number(rows[i + 1]);
    out.push({ instance: rows[i], lastSeenAt, alive: now - lastSeenAt <= ctx.livenessMs });
  }
  return out;
}

function parseNote(raw: string | null | undefined): PauseNote | undefined {
  if (!raw) return undefined;
  try {
    const n = JSON.parse(raw) as PauseNote;
    return { note: String(n.note ?? ''), actor: String(n.actor ?? ''), at: Number(n.at) };
  } catch {
    return undefined;
  }
}

/**
 * Builds the view of stored schedules: the declaring instances (SMEMBERS of each instance's
 * declared set, one pipeline), lastFired (HGETALL per target queue), next `n` triggers (pure).
 */
async function build(ctx: InspectorContext, defs: [string, string][], notes: Record<string, string>, n: number): Promise<ScheduleInfo[]> {
  const insts = await instances(ctx);
  const declaredBy = new Map<string, ScheduleInfo['declaredBy']>();
  if (insts.length > 0) {
    const p = ctx.client.pipeline();
    for (const i of insts) p.smembers(ctx.sched.declared(i.instance));
    const sets = (await p.exec())!;
    insts.forEach((inst, i) => {
      for (const name of (sets[i][1] as string[] | null) ?? []) {
        const entry = { instance: inst.instance, lastSeenAt: inst.lastSeenAt, alive: inst.alive };
        declaredBy.set(name, [...(declaredBy.get(name) ?? []), entry]);
      }
    });
  }
  const parsed = defs.map(([name, raw]) => {
    try {
      return [name, JSON.parse(raw) as StoredSchedule] as const;
    } catch (err) {
      return [name, (err as Error).message] as const;
    }
  });
  const lastFired = new Map<string, Record<string, string>>();
  for (const q of new Set(parsed.flatMap(([, s]) => (typeof s === 'string' ? [] : [s.queue])))) {
    lastFired.set(q, await ctx.client.hgetall(ctx.keys(q).lastFired));
  }
  const now = Date.now();
  return parsed.map(([name, s]) => {
    if (typeof s === 'string') {
      const bad: ScheduleInfo = {
        ...{ name, expression: '', timeZone: '', queue: '', type: '', catchUp: '', overlap: '', runtime: false, origin: 'code' },
        ...{ paused: false, orphaned: true, next: [], declaredBy: declaredBy.get(name) ?? [], error: `invalid stored definition: ${s}` },
      };
      return bad;
    }
    const last = lastFired.get(s.queue)?.[name];
    const by = declaredBy.get(name) ?? [];
    const info: ScheduleInfo = {
      name,
      expression: s.expression,
      timeZone: s.timeZone,
      queue: s.queue,
      type: s.type,
      catchUp: s.catchUp,
      overlap: s.overlap,
      runtime: s.runtime,
      origin: s.runtime ? 'runtime' : 'code',
      paused: s.paused === true,
      orphaned: !s.runtime && !by.some((d) => d.alive),
      registeredAt: s.registeredAt,
      lastFiredAt: last === undefined ? undefined : Number(last),
      next: [],
      declaredBy: by,
    };
    const note = info.paused ? parseNote(notes[name]) : undefined;
    if (note) info.pause = note;
    try {
      const spec = storedSpec(s);
      info.next = nextTriggers(spec, now, n);
      info.nextDueAt = spec.nextAfter(info.lastFiredAt ?? s.registeredAt ?? now) ?? undefined;
    } catch (err) {
      info.error = (err as Error).message;
    }
    return info;
  });
}

/**
 * Every registered schedule, by name: spec, zone, next `n` triggers, last fired, paused (with its
 * note), origin, declaring instances with liveness, orphaned. Cost: one pipeline of HGETALL ×2
 * (registry, pause notes), the instances' pipeline, one SMEMBERS per instance (pipelined), one
 * HGETALL per target queue.
 */
export async function schedules(ctx: InspectorContext, n = 5): Promise<ScheduleInfo[]> {
  const r = (await ctx.client.pipeline().hgetall(ctx.sched.schedules).hgetall(ctx.sched.pauseNotes).exec())!;
  const defs = Object.entries((r[0][1] as Record<string, string>) ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return build(ctx, defs, (r[1][1] as Record<string, string>) ?? {}, n);
}

/** The stored definition of a schedule. @throws ScheduleNotFoundError */
export async function storedSchedule(ctx: InspectorContext, name: string): Promise<StoredSchedule> {
  const raw = await ctx.client.hget(ctx.sched.schedules, name);
  if (!raw) throw new ScheduleNotFoundError(name);
  return JSON.parse(raw) as StoredSchedule;
}

/** One schedule (see {@link schedules}). @throws ScheduleNotFoundError */
export async function schedule(ctx: InspectorContext, name: string, n = 5): Promise<ScheduleInfo> {
  const r = (await ctx.client.pipeline().hget(ctx.sched.schedules, name).hget(ctx.sched.pauseNotes, name).exec())!;
  const raw = r[0][1] as string | null;
  if (!raw) throw new ScheduleNotFoundError(name);
  const note = r[1][1] as string | null;
  return (await build(ctx, [[name, raw]], note ? { [name]: note } : {}, n))[0];
}

/**
 * The last `limit` fires of a schedule (newest first, at most 100 kept), each with its outcome and
 * where its task is now. Cost: HGET (definition), LRANGE, one pipeline of ZSCORE ×3 per task, and a
 * look through the stream for the others (the pending entries list, then up to 10,000 entries,
 * each call bounded).
 * @throws ScheduleNotFoundError
 */
export async function history(ctx: InspectorContext, name: string, limit = 20): Promise<FireInfo[]> {
  const s = await storedSchedule(ctx, name);
  const k = ctx.keys(s.queue);
  const records = (await readFires(ctx.client, k, name, limit)) as FireInfo[];
  const ids = [...new Set(records.flatMap((r) => (r.taskId && !r.outcome.startsWith('skipped') ? [r.taskId] : [])))];
  if (ids.length === 0) return records;
  const state = new Map<string, FireTaskState>();
  const p = ctx.client.pipeline();
  for (const id of ids) p.zscore(k.scheduled, id).zscore(k.retry, id).zscore(k.dead, id);
  const scores = (await p.exec())!.map(([, v]) => v as string | null);
  ids.forEach((id, i) => {
    const [sc, re, de] = scores.slice(i * 3, i * 3 + 3);
    if (sc !== null) state.set(id, 'scheduled');
    else if (re !== null) state.set(id, 'retry');
    else if (de !== null) state.set(id, 'dead');
  });
  const rest = new Set(ids.filter((id) => !state.has(id)));
  if (rest.size > 0) {
    const { found, complete } = await findInStream(ctx, s.queue, rest, HISTORY_STREAM_SCAN);
    for (const id of rest) state.set(id, found.get(id)?.info.state ?? (complete ? 'done' : 'unknown'));
  }
  return records.map((r) => (r.taskId && state.has(r.taskId) ? { ...r, task: state.get(r.taskId) } : r));
}
