import { InvalidOptionsError, ScheduleNotFoundError } from '../runtime/errors.js';
import { show } from '../runtime/options.js';
import { storedSpec, type StoredSchedule } from '../scheduler/definition.js';
import { readFires } from '../scheduler/history.js';
import { decodeStored } from '../scheduler/stored-form.js';
import { decodeBuffered } from '../queue/codec.js';
import { META } from '../redis/protocol.js';
import { declarationDigests, liveUntil, SCAN_COUNT } from '../scheduler/live-names.js';
import type { InspectorContext } from './context.js';
import { findInStream } from './tasks.js';
import type { FireInfo, FireTaskState, InstanceInfo, PauseNote, ScheduleInfo } from './types.js';
import { engineTime } from '../runtime/time.js';
import { execReads, SlotPipeline } from '../redis/cluster.js';
import { shardKeysOf } from '../redis/keys.js';
import { boundsInfo, runsLeftOf } from './schedule-runs.js';
import { nextDue, nextOf, specCache } from './schedule-specs.js';

/** Stream entries a history read looks through for the tasks of its fires (each call bounded). */
const HISTORY_STREAM_SCAN = 10_000;

/**
 * Scheduler instances seen in the last day, with liveness: ZRANGE … WITHSCORES + TIME (one
 * pipeline), then MGET of their declarations. An instance is alive when seen within the liveness
 * window, or while its declaration lives: the instance gives it a TTL of 3 of its own heartbeats,
 * so an Inspector whose window is shorter than the fleet's (the CLI's default 15 s against a
 * `heartbeatInterval` of 30 s) does not take a live fleet for dead and its schedules for orphaned.
 */
export async function instances(ctx: InspectorContext): Promise<InstanceInfo[]> {
  return (await instancesWithDigests(ctx)).infos;
}

/** {@link instances}, with the digest each one declares (null: none, or its declaration expired). */
export async function instancesWithDigests(ctx: InspectorContext): Promise<{ infos: InstanceInfo[]; digests: (string | null)[] }> {
  const r = await execReads(ctx.client, (p) => p.zrange(ctx.sched.instances, 0, -1, 'WITHSCORES').time());
  const rows = r[0][1] as string[];
  const [s, us] = r[1][1] as [string, string];
  const now = Number(s) * 1000 + Math.floor(Number(us) / 1000);
  const ids: string[] = [];
  for (let i = 0; i < rows.length; i += 2) ids.push(rows[i]);
  const digests = await declarationDigests(ctx.client, ctx.sched, ids);
  const infos = ids.map((instance, i) => {
    const lastSeenAt = Number(rows[2 * i + 1]);
    return { instance, lastSeenAt, alive: now - lastSeenAt <= ctx.livenessMs || digests[i] !== null };
  });
  return { infos, digests };
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

/** Names per SMISMEMBER / HMGET call of a view (pipelined: one round trip however many). */
const VIEW_CHUNK = 1000;

/** Which of `names` each instance declares: MGET of their declarations, then SMISMEMBER per digest in chunks (one pipeline). */
async function declaredByOf(
  ctx: InspectorContext,
  { infos: insts, digests }: { infos: InstanceInfo[]; digests: (string | null)[] },
  names: string[],
): Promise<Map<string, ScheduleInfo['declaredBy']>> {
  const out = new Map<string, ScheduleInfo['declaredBy']>();
  const distinct = [...new Set(digests.filter((d): d is string => d !== null))];
  if (distinct.length === 0 || names.length === 0) return out;
  const replies = await execReads(ctx.client, (p) => {
    for (const d of distinct)
      for (let i = 0; i < names.length; i += VIEW_CHUNK) p.smismember(ctx.sched.names(d), ...names.slice(i, i + VIEW_CHUNK));
  });
  const member = new Map<string, Set<string>>();
  let r = 0;
  for (const d of distinct) {
    const set = new Set<string>();
    for (let i = 0; i < names.length; i += VIEW_CHUNK) {
      const flags = (replies[r++][1] as number[] | null) ?? [];
      flags.forEach((f, j) => f === 1 && set.add(names[i + j]));
    }
    member.set(d, set);
  }
  // one entry per declaring instance, the same object in every schedule it declares (10,000 schedules × 3
  // instances made 30,000 copies per view)
  const declarers = insts.flatMap((inst, i) => {
    const d = digests[i];
    return d === null ? [] : [{ set: member.get(d)!, entry: { instance: inst.instance, lastSeenAt: inst.lastSeenAt, alive: inst.alive } }];
  });
  for (const name of names) {
    const by: ScheduleInfo['declaredBy'] = [];
    for (const { set, entry } of declarers) if (set.has(name)) by.push(entry);
    if (by.length > 0) out.set(name, by);
  }
  return out;
}

/**
 * lastFired of each schedule, by name: HMGET of its queue's hash, in chunks (one pipeline per slot:
 * the queues' hashes live in their own slots on a cluster).
 */
async function lastFiredOf(ctx: InspectorContext, byQueue: Map<string, string[]>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const p = new SlotPipeline(ctx.client);
  const asked: string[][] = [];
  for (const [q, names] of byQueue) {
    const key = ctx.keys(q).lastFired;
    for (let i = 0; i < names.length; i += VIEW_CHUNK) {
      const chunk = names.slice(i, i + VIEW_CHUNK);
      p.add(key, (c) => c.hmget(key, ...chunk));
      asked.push(chunk);
    }
  }
  if (asked.length === 0) return out;
  const replies = await p.exec();
  asked.forEach((chunk, i) => {
    const values = (replies[i][1] as (string | null)[] | null) ?? [];
    chunk.forEach((name, j) => values[j] != null && out.set(name, values[j]!));
  });
  return out;
}

/** The stored orphaned-since instants of `names` (HMGET in chunks, one pipeline), by name. */
async function orphanedSinceOf(ctx: InspectorContext, names: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (names.length === 0) return out;
  const replies = await execReads(ctx.client, (p) => {
    for (let i = 0; i < names.length; i += VIEW_CHUNK) p.hmget(ctx.sched.orphaned, ...names.slice(i, i + VIEW_CHUNK));
  });
  replies.forEach(([, values], c) => {
    ((values as (string | null)[] | null) ?? []).forEach((v, j) => v != null && out.set(names[c * VIEW_CHUNK + j], Number(v)));
  });
  return out;
}

/**
 * Builds the view of stored schedules: the declaring instances (MGET of their declarations,
 * SMISMEMBER of the names per digest), lastFired (HMGET per target queue), next `n` triggers
 * (pure, one spec per expression and zone), the stored orphaned-since instants of the orphaned
 * ones (HMGET, none when none is orphaned). Every read is chunked and pipelined. `defs`: name and
 * stored JSON, in the order of the result; `notes`: pause note JSON by name.
 */
export async function build(
  ctx: InspectorContext,
  defs: [string, string][],
  notes: Record<string, string>,
  n: number,
): Promise<ScheduleInfo[]> {
  const insts = await instancesWithDigests(ctx);
  const declaredBy = await declaredByOf(
    ctx,
    insts,
    defs.map(([name]) => name),
  );
  const parsed = defs.map(([name, raw]) => {
    try {
      return [name, decodeStored(name, raw)] as const;
    } catch (err) {
      return [name, (err as Error).message] as const;
    }
  });
  const byQueue = new Map<string, string[]>();
  for (const [name, s] of parsed) {
    if (typeof s === 'string') continue;
    const list = byQueue.get(s.queue);
    if (list) list.push(name);
    else byQueue.set(s.queue, [name]);
  }
  const lastFired = await lastFiredOf(ctx, byQueue);
  const runsLeft = await runsLeftOf(
    ctx,
    parsed.flatMap(([, s]) => (typeof s === 'string' ? [] : [s])),
  );
  // the stored orphaned-since instants, read only for the schedules no live instance declares (none: no call)
  const orphanNames = parsed.filter(([name, s]) => typeof s !== 'string' && !s.runtime && !declaredBy.get(name)?.some((d) => d.alive));
  const stored = await orphanedSinceOf(
    ctx,
    orphanNames.map(([name]) => name),
  );
  const specs = specCache(ctx);
  const now = engineTime.now();
  return parsed.map(([name, s]) => {
    if (typeof s === 'string') {
      const bad: ScheduleInfo = {
        ...{ name, expression: '', timeZone: '', queue: '', type: '', catchUp: '', overlap: '', runtime: false, origin: 'code' },
        ...{ paused: false, orphaned: true, next: [], declaredBy: declaredBy.get(name) ?? [], error: `invalid stored definition: ${s}` },
      };
      return bad;
    }
    const last = lastFired.get(name);
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
      // sorted by key (the scripts' JSON re-encoding keeps no order)
      ...(s.labels ? { labels: Object.fromEntries(Object.entries(s.labels).sort(([a], [b]) => (a < b ? -1 : 1))) } : {}),
      orphaned: !s.runtime && !by.some((d) => d.alive),
      registeredAt: s.registeredAt,
      ...(s.offsetMs ? { offsetMs: s.offsetMs } : {}),
      // a lastFired from before the schedule's registration is a removed namesake's (trial 9: "last fired 56 s ago" for a new one)
      lastFiredAt: last === undefined || Number(last) < (s.registeredAt ?? -Infinity) ? undefined : Number(last),
      next: [],
      declaredBy: by,
      ...boundsInfo(s),
    };
    const left = runsLeft.get(name);
    if (left !== undefined) info.runsLeft = left;
    if (left === 0) info.ended = 'max-runs';
    // the leader's stored instant; before it stores one, the same rule on the declarers still visible
    const since =
      stored.get(name) ??
      (by.length > 0
        ? liveUntil(
            by.map((d) => d.lastSeenAt),
            ctx.livenessMs,
          )
        : undefined);
    if (info.orphaned && since !== undefined) info.orphanedSince = since;
    const note = info.paused ? parseNote(notes[name]) : undefined;
    if (note) info.pause = note;
    // a spec is pure: one per (expression, zone, offset) serves every schedule that shares it
    const specKey = `${s.expression}\u0000${s.timeZone}\u0000${s.offsetMs ?? 0}\u0000${s.startAt ?? ''}\u0000${s.endAt ?? ''}`;
    try {
      let shared = specs.get(specKey);
      if (shared === undefined) {
        const spec = storedSpec(s); // throws naming this schedule: a bad spec is never shared
        shared = { spec, next: [], from: Infinity, count: 0, known: [] };
        specs.set(specKey, shared);
      }
      // one more than asked: a trigger enqueued ahead of its instant (lastFiredAt after now) is fired, not next
      const fired = info.lastFiredAt ?? -Infinity;
      // at most the runs maxRuns leaves (trial 7: 5 next runs shown with 2 left)
      const wanted = Math.min(n, info.runsLeft ?? n);
      const next: number[] = [];
      for (const t of nextOf(shared, now, n + 1)) if (t > fired && next.length < wanted) next.push(t);
      info.next = next;
      info.nextDueAt = nextDue(shared, info.lastFiredAt ?? s.registeredAt ?? now) ?? undefined;
      if (s.endAt !== undefined && info.nextDueAt === undefined && info.ended === undefined) info.ended = 'end-at';
      // maxRuns reached: fire.lua enqueues none of the spec's later instants, so none is a next run
      if (info.ended === 'max-runs') {
        info.next = [];
        delete info.nextDueAt;
      }
    } catch (err) {
      info.error = (err as Error).message;
    }
    return info;
  });
}

/** Every field of a HASH, read with HSCAN cursors of {@link SCAN_COUNT} (one round trip each; no call walks it whole). */
async function scanHash(ctx: InspectorContext, key: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let cursor = '0';
  do {
    const [next, flat] = await ctx.client.hscan(key, cursor, 'COUNT', SCAN_COUNT);
    for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i], flat[i + 1]);
    cursor = next;
  } while (cursor !== '0');
  return out;
}

/**
 * Every registered schedule, by name (code-unit order, as `Inspector.schedulePage`): spec, zone, next `n` triggers, last fired, paused (with its
 * note), origin, declaring instances with liveness, orphaned (with since when). Cost: HSCAN of each
 * shard's registry and of the pause notes (1,000 fields per call), the instances' pipeline, MGET of their
 * declarations, one pipeline of SMISMEMBER (per distinct declaration, 1,000 names per call) and
 * HMGET (per target queue, 1,000 names per call), and, when some are orphaned, HMGET of their
 * orphaned-since instants (1,000 names per call). No single command walks a whole set or hash.
 */
/** Most next triggers a schedule's view lists (`n` of {@link schedules} and {@link schedule}; the CLI's `--next` takes 100). */
export const MAX_NEXT = 1000;

/** `n`, next triggers per schedule, 0 to {@link MAX_NEXT} (1e9 killed the process). @throws InvalidOptionsError naming it. */
function nextCount(n: unknown): number {
  if (typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= MAX_NEXT) return n;
  throw new InvalidOptionsError([`n: expected an integer 0-${MAX_NEXT} (next triggers per schedule), got ${show(n)}`], 'schedule view');
}

export async function schedules(ctx: InspectorContext, n = 5): Promise<ScheduleInfo[]> {
  nextCount(n);
  const [shards, notes] = await Promise.all([
    Promise.all(shardKeysOf(ctx.namespace).map((k) => scanHash(ctx, k.schedules))),
    scanHash(ctx, ctx.sched.pauseNotes),
  ]);
  // by name in code-unit order, as schedulePage's ZRANGEBYLEX pages them (`B` before `a`), so the
  // plain and the paged list agree (UTF-8 byte order and UTF-16 order differ past U+E000 only)
  // (the default sort compares strings by code units, without a comparator's call per comparison)
  const all = new Map<string, string>();
  for (const registry of shards) for (const [name, raw] of registry) all.set(name, raw);
  const defs = [...all.keys()].sort().map((name): [string, string] => [name, all.get(name)!]);
  return build(ctx, defs, Object.fromEntries(notes), n);
}

/** The stored definition of a schedule. @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
export async function storedSchedule(ctx: InspectorContext, name: string): Promise<StoredSchedule> {
  const raw = await ctx.client.hget(ctx.shard(name).schedules, name);
  if (!raw) throw new ScheduleNotFoundError(name);
  return decodeStored(name, raw);
}

/**
 * One schedule (see {@link schedules}), with the trigger buffered behind its live task under overlap
 * `buffer-one` (one GET more). @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`)
 */
export async function schedule(ctx: InspectorContext, name: string, n = 5): Promise<ScheduleInfo> {
  nextCount(n);
  // two slots (the shard's registry, the scheduler's pause notes): two commands in flight, not one pipeline (a cluster)
  const keys = ctx.shard(name);
  const [raw, note] = await Promise.all([ctx.client.hget(keys.schedules, name), ctx.client.hget(ctx.sched.pauseNotes, name)]);
  if (!raw) throw new ScheduleNotFoundError(name);
  const info = (await build(ctx, [[name, raw]], note ? { [name]: note } : {}, n))[0];
  if (info.overlap === 'buffer-one') {
    const b = decodeBuffered(await ctx.client.get(ctx.keys(info.queue).buffered(name)));
    if (b) info.buffered = { taskId: b.taskId, triggerAt: b.meta[META.triggerAt] ?? 0, behind: b.behind };
  }
  return info;
}

/**
 * The last `limit` fires of a schedule (newest first, at most 100 kept), each with its outcome and
 * where its task is now. Cost: HGET (definition), LRANGE, one pipeline of ZSCORE ×3 per task (and a
 * GET of the buffered trigger under overlap `buffer-one`), and a
 * look through the stream for the others (the pending entries list, then up to 10,000 entries,
 * each call bounded).
 * @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`)
 */
export async function history(ctx: InspectorContext, name: string, limit = 20): Promise<FireInfo[]> {
  // 0 or -1 gave one fire (LRANGE 0 0), 1.5 or 'abc' a raw Redis error; more than the 100 kept gives them all
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new InvalidOptionsError([`limit: expected an integer of at least 1, got ${show(limit)}`], 'schedule history');
  const s = await storedSchedule(ctx, name);
  const k = ctx.keys(s.queue);
  const records = (await readFires(ctx.client, k, name, limit)) as FireInfo[];
  const ids = [
    ...new Set(records.flatMap((r) => (r.taskId && !r.outcome.startsWith('skipped') && r.outcome !== 'retracted' ? [r.taskId] : []))),
  ];
  if (ids.length === 0) return records;
  const state = new Map<string, FireTaskState>();
  const replies = (
    await execReads(ctx.client, (p) => {
      for (const id of ids) p.zscore(k.scheduled, id).zscore(k.retry, id).zscore(k.dead, id);
      if (s.overlap === 'buffer-one') p.get(k.buffered(name));
    })
  ).map(([, v]) => v as string | null);
  const scores = replies.slice(0, ids.length * 3);
  const waiting = s.overlap === 'buffer-one' ? decodeBuffered(replies[ids.length * 3])?.taskId : undefined;
  if (waiting !== undefined) state.set(waiting, 'buffered');
  ids.forEach((id, i) => {
    if (id === waiting) return;
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
  // newest first: a `retracted` record takes back the newest enqueue of its task before it (trial 9: shown as done)
  const takenBack = new Map<string, number>();
  return records.map((r) => {
    if (!r.taskId) return r;
    if (r.outcome === 'retracted') {
      takenBack.set(r.taskId, (takenBack.get(r.taskId) ?? 0) + 1);
      return r;
    }
    const pending = takenBack.get(r.taskId) ?? 0;
    if (pending > 0 && !r.outcome.startsWith('skipped')) {
      takenBack.set(r.taskId, pending - 1);
      return { ...r, task: 'retracted' as const };
    }
    return state.has(r.taskId) ? { ...r, task: state.get(r.taskId) } : r;
  });
}
