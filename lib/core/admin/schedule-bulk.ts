import { execReads } from '../redis/cluster.js';
import { databaseChecked } from '../redis/server-check.js';
import { ChronosStateError, DuplicateScheduleError, InvalidScheduleError } from '../runtime/errors.js';
import {
  putSchedulesScript,
  removeSchedulesScript,
  type PutDefinition,
  type PutMode,
  type PutOutcome,
} from '../redis/commands/schedule-bulk.js';
import type { Fence } from '../redis/commands/schedule.js';
import { byShard, type ShardKeys } from '../redis/keys.js';
import { type ScheduleDefinition } from '../scheduler/definition.js';
import { checkDefinition, checkStoredScheduleName, finishStored, type CheckedDefinition } from '../scheduler/definition-check.js';
import { decodeStored } from '../scheduler/stored-form.js';
import { dropStaleRuns, raiseFences } from '../scheduler/registry.js';
import type { InspectorContext } from './context.js';
import { pipelined, unchangedLeftOut } from './schedule-bulk-calls.js';
import { instancesWithDigests } from './schedules.js';

/**
 * The bulk acts on runtime schedules: many definitions per call, the same guarantees as the
 * single acts of schedule-acts.ts (which stay the model). Every definition is validated before
 * anything is written; an upsert then reads the stored definitions (HMGET, pipelined) and leaves out
 * those already stored with their fingerprint; then put-schedules.lua / remove-schedules.lua in chunks of
 * {@link BULK_CHUNK} names of one shard (pipelined, each chunk atomic and one new generation of its
 * shard), the fences of the replaced or removed schedules in the slots of the queues they targeted
 * (fence-schedules.lua), one SADD of the queues, and one notice on the changes channel for the
 * whole call, naming the shards written (their leaders look at their due index at once). A Redis failure midway leaves the chunks before it written: the calls are safe to
 * repeat (`upsertSchedules` of the same definitions writes nothing more).
 */

export { IN_FLIGHT, pipelined } from './schedule-bulk-calls.js';

/** Definitions (or names) per put-schedules.lua / remove-schedules.lua call: each call stays at a few ms of Redis. */
export const BULK_CHUNK = 125;
/** Most bytes of definition JSON per put-schedules.lua call (a chunk of large payloads is cut short of {@link BULK_CHUNK}). */
const CHUNK_BYTES = 256 * 1024;
/** Names per SMISMEMBER of the removal guard. */
const GUARD_CHUNK = 1000;

/** What `Scheduler.upsertSchedules` did. @publicApi */
export interface UpsertSchedulesResult {
  /** Schedules that did not exist and were added. */
  added: number;
  /** Stored schedules whose definition changed: replaced under a new generation and fenced. */
  changed: number;
  /** Stored schedules with the same definition (fingerprint): nothing written, no new generation. */
  unchanged: number;
}

/** What `Scheduler.addSchedules` did. @publicApi */
export interface AddSchedulesResult {
  /** Schedules added. */
  added: number;
  /** Names that already existed: left untouched (their stored definition is kept). */
  existing: string[];
}

/** What `Scheduler.removeSchedules` did. @publicApi */
export interface RemoveSchedulesResult {
  /** Schedules removed (with their pause notes). */
  removed: number;
  /** Names that were not in the registry. */
  missing: string[];
}

/** Where a definition (or a name, of a removal) of a bulk call was: its index, in the message of the error. */
function at<T>(index: number, f: () => T, item: 'definition' | 'name' = 'definition'): T {
  try {
    return f();
  } catch (err) {
    if (!(err instanceof InvalidScheduleError)) throw err;
    throw InvalidScheduleError.at(err, index, item);
  }
}

/** @throws DuplicateScheduleError when `name` came before in the same call. */
function once(seen: Map<string, number>, name: string, index: number, what: string): void {
  const first = seen.get(name);
  if (first !== undefined) throw new DuplicateScheduleError(name, what, { indexes: [first, index] });
  seen.set(name, index);
}

/**
 * Validates every definition (as addSchedule does), before any write; their registry forms are
 * made chunk by chunk as they are sent ({@link chunks}).
 * @param maxPayloadBytes the most UTF-8 bytes of a payload's JSON (as an enqueue's); 0 = no limit
 * @throws InvalidScheduleError naming the first bad one and its index; DuplicateScheduleError for a name given twice.
 */
export function validateDefinitions(
  defs: readonly ScheduleDefinition[],
  defaultTimeZone: string,
  what: string,
  maxPayloadBytes = 0,
): CheckedDefinition[] {
  if (!Array.isArray(defs)) throw new InvalidScheduleError(undefined, defs, `${what}: expected an array of schedule definitions`);
  const seen = new Map<string, number>();
  // Array.from visits every index: a hole of a sparse array is checked (and refused) as undefined, where map would skip it
  return Array.from(defs, (def, i) => {
    const checked = at(i, () => checkDefinition(def, defaultTimeZone, true, maxPayloadBytes));
    once(seen, checked.body.name, i, what);
    return checked;
  });
}

/**
 * The names of a removal, checked as the single acts check theirs (`.` and `..`, which an earlier
 * version stored, included: such a schedule can still be removed).
 * @throws InvalidScheduleError naming a bad one and its index, or `names` when it is not an array; DuplicateScheduleError
 */
export function validateNames(names: readonly string[]): string[] {
  if (!Array.isArray(names)) throw new InvalidScheduleError(undefined, names, 'removeSchedules: expected an array of names');
  const seen = new Map<string, number>();
  return Array.from(names, (name, i) => {
    at(i, () => checkStoredScheduleName(name), 'name');
    once(seen, name, i, 'removeSchedules');
    return name;
  });
}

/** A chunk of a bulk call: names of one shard. */
interface Chunk<T> {
  keys: ShardKeys;
  items: T[];
}

/**
 * Chunks of at most {@link BULK_CHUNK} definitions of one shard and about {@link CHUNK_BYTES} of
 * JSON, each made when it is taken (its definitions' registry forms and fingerprints then: the
 * first chunks are written while the next ones are made).
 */
function* chunks(namespace: string, checked: readonly CheckedDefinition[], compact: boolean): Generator<Chunk<PutDefinition>> {
  for (const [keys, group] of byShard(namespace, checked, (d) => d.body.name)) {
    let chunk: PutDefinition[] = [];
    let bytes = 0;
    const labelKey = labelKeys(keys);
    for (const c of group) {
      const { stored: s, json } = finishStored(c, compact);
      if (chunk.length > 0 && (chunk.length >= BULK_CHUNK || bytes + json.length > CHUNK_BYTES)) {
        yield { keys, items: chunk };
        chunk = [];
        bytes = 0;
      }
      chunk.push({ name: s.name, fp: s.fp, json, labelKeys: s.labels === undefined ? [] : Object.entries(s.labels).map(labelKey) });
      bytes += json.length;
    }
    if (chunk.length > 0) yield { keys, items: chunk };
  }
}

/** The shard's label index key of a label `[key, value]`, each made once per shard and call (a bulk call's labels repeat). */
function labelKeys(keys: ShardKeys): (label: [string, string]) => string {
  const made = new Map<string, Map<string, string>>();
  return ([k, v]) => {
    let byValue = made.get(k);
    if (byValue === undefined) made.set(k, (byValue = new Map()));
    let key = byValue.get(v);
    if (key === undefined) byValue.set(v, (key = keys.label(k, v)));
    return key;
  };
}

/** Chunks of at most {@link BULK_CHUNK} names of one shard. */
function nameChunks(namespace: string, names: readonly string[]): Chunk<string>[] {
  const out: Chunk<string>[] = [];
  for (const [keys, group] of byShard(namespace, names, (n) => n)) {
    for (let i = 0; i < group.length; i += BULK_CHUNK) out.push({ keys, items: group.slice(i, i + BULK_CHUNK) });
  }
  return out;
}

/** The changes notice of a bulk call: the numbers of the shards it wrote, comma separated. */
function shardsNotice(written: readonly Chunk<unknown>[]): string {
  return [...new Set(written.map((c) => c.keys.shard))].join(',');
}

/**
 * Deletes the maxRuns counters and the lastFired entries of removed schedules (after their fences,
 * which read lastFired), so a namesake added later starts afresh: one DEL and one HDEL per queue slot
 * and chunk of {@link BULK_CHUNK}.
 */
async function dropFireState(ctx: InspectorContext, fences: readonly Fence[]): Promise<void> {
  const byQueue = new Map<string, string[]>();
  for (const f of fences) {
    const names = byQueue.get(f.queue) ?? [];
    if (names.length === 0) byQueue.set(f.queue, names);
    names.push(f.schedule);
  }
  const calls: Promise<number>[] = [];
  for (const [queue, names] of byQueue) {
    const k = ctx.keys(queue);
    for (let i = 0; i < names.length; i += BULK_CHUNK) {
      const chunk = names.slice(i, i + BULK_CHUNK);
      calls.push(ctx.client.del(...chunk.map((n) => k.runs(n))), ctx.client.hdel(k.lastFired, ...chunk));
    }
  }
  await Promise.all(calls);
}

/** After the writes: the fences, the queues listed, one notice naming the shards written (none when nothing was). */
async function settle(ctx: InspectorContext, fences: Fence[], queues: Set<string>, written: readonly Chunk<unknown>[]): Promise<void> {
  await raiseFences(ctx.client, ctx.namespace, fences);
  if (queues.size > 0) await ctx.client.sadd(ctx.global.queues, ...queues);
  if (written.length > 0) await ctx.client.publish(ctx.sched.changesChannel, shardsNotice(written));
}

/**
 * Validates, then (an upsert) leaves out the definitions already stored as they are
 * ({@link unchangedLeftOut}), then put-schedules.lua in pipelined chunks, the fences, the queues
 * and one notice. Resolves to the scripts' outcomes and the number left out as unchanged.
 */
async function put(
  ctx: InspectorContext,
  mode: PutMode,
  defs: readonly ScheduleDefinition[],
  tz: string,
): Promise<{ outcomes: PutOutcome[]; unchanged: number }> {
  const checked = validateDefinitions(defs, tz, mode === 'add' ? 'addSchedules' : 'upsertSchedules', ctx.maxPayloadBytes);
  await databaseChecked(ctx.client);
  const { rest, unchanged } = mode === 'add' ? { rest: checked, unchanged: 0 } : await unchangedLeftOut(ctx, checked);
  const { parts, outcomes } = await pipelined(chunks(ctx.namespace, rest, ctx.compactSchedules), (c) => {
    const call = putSchedulesScript(ctx.client, c.keys, mode, c.items);
    c.items = []; // sent: its JSON is not held to the end of the call (only its shard is read after)
    return call;
  });
  const fences = outcomes.flatMap((o) => o.fences);
  const written = parts.filter((_, i) => outcomes[i].added + outcomes[i].changed > 0);
  // the queues of the definitions written: not of those left untouched (an existing name under
  // "add", a code-declared one refused: trial 29 listed such a queue, with nothing in it)
  const untouched = new Set([...outcomes.flatMap((o) => o.existing), ...outcomes.flatMap((o) => o.declared)]);
  const queues = new Set<string>();
  for (const { body } of checked) if (!untouched.has(body.name)) queues.add(body.queue);
  await settle(ctx, fences, queues, written);
  // as addSchedule: a schedule moved to another queue, or left without a maxRuns, counts a maxRuns
  // afresh (the definitions looked up only for a call that replaced some: a bulk add of 100,000 new
  // ones has no fence)
  if (fences.length > 0) {
    const bodyOf = new Map<string, CheckedDefinition['body']>();
    for (const { body } of checked) bodyOf.set(body.name, body);
    await dropStaleRuns(ctx.client, ctx.namespace, fences, (name) => bodyOf.get(name));
  }
  return { outcomes, unchanged };
}

/**
 * Adds or replaces many runtime schedules (see the module doc): an unchanged definition (the same
 * fingerprint) is not written and takes no new generation; a changed one keeps registeredAt,
 * paused and resumedAt like `addSchedule`, takes a new generation and is fenced in the queue it
 * targeted. A schedule declared in code is replaced only with `force` (it would stop firing as
 * its code says, and come back when a declaring instance registers again): without it, those are
 * left untouched, the others written, and the call throws. Emits no `operator.acted`, as
 * `addSchedule` does not (there is no add action).
 * @param defaultTimeZone zone of a cron spec that names none
 * @throws InvalidScheduleError naming the first bad definition and its index; DuplicateScheduleError
 *   for a name given twice (nothing is written then); ChronosStateError naming (up to 10 of) the
 *   code-declared schedules left untouched, when `force` is not set (the others were written).
 */
export async function upsertSchedules(
  ctx: InspectorContext,
  defs: readonly ScheduleDefinition[],
  defaultTimeZone: string,
  force = false,
): Promise<UpsertSchedulesResult> {
  const { outcomes, unchanged } = await put(ctx, force ? 'upsert-force' : 'upsert', defs, defaultTimeZone);
  const declared = outcomes.flatMap((o) => o.declared);
  if (declared.length > 0) {
    const shown = declared.slice(0, 10).map((n) => `"${n}"`);
    throw new ChronosStateError(
      `${declared.length} schedule(s) are declared in code, not at run time: ${shown.join(', ')}${declared.length > 10 ? ', …' : ''}. ` +
        'upsertSchedules left them untouched (the other definitions were written); pass { force: true } to replace them ' +
        '(a declaring instance puts its code definition back when it registers again).',
    );
  }
  const sum = (f: (o: PutOutcome) => number) => outcomes.reduce((n, o) => n + f(o), 0);
  return { added: sum((o) => o.added), changed: sum((o) => o.changed), unchanged: unchanged + sum((o) => o.unchanged) };
}

/**
 * Adds the runtime schedules whose names do not exist; an existing name is left untouched
 * (reported in `existing`). Otherwise as {@link upsertSchedules}.
 * @throws InvalidScheduleError naming the first bad definition and its index; DuplicateScheduleError
 */
export async function addSchedules(
  ctx: InspectorContext,
  defs: readonly ScheduleDefinition[],
  defaultTimeZone: string,
): Promise<AddSchedulesResult> {
  const { outcomes } = await put(ctx, 'add', defs, defaultTimeZone);
  return { added: outcomes.reduce((n, o) => n + o.added, 0), existing: outcomes.flatMap((o) => o.existing) };
}

/**
 * The names among `names` that a live instance declares in code and whose stored definition is
 * not a runtime one (what removeSchedule refuses): the live instances' digests, SMISMEMBER of
 * their names sets, then HMGET of the few candidates' definitions (one pipeline each).
 */
async function liveCodeDeclared(ctx: InspectorContext, names: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const { infos, digests } = await instancesWithDigests(ctx);
  const byDigest = new Map<string, string[]>();
  digests.forEach((d, i) => d !== null && infos[i].alive && byDigest.set(d, [...(byDigest.get(d) ?? []), infos[i].instance]));
  if (byDigest.size === 0 || names.length === 0) return out;
  const replies = await execReads(ctx.client, (p) => {
    for (const d of byDigest.keys())
      for (let i = 0; i < names.length; i += GUARD_CHUNK) p.smismember(ctx.sched.names(d), ...names.slice(i, i + GUARD_CHUNK));
  });
  let r = 0;
  for (const [, insts] of byDigest) {
    for (let i = 0; i < names.length; i += GUARD_CHUNK) {
      const flags = (replies[r++][1] as number[] | null) ?? [];
      flags.forEach((f, j) => f === 1 && out.set(names[i + j], [...(out.get(names[i + j]) ?? []), ...insts]));
    }
  }
  if (out.size === 0) return out;
  const asked = nameChunks(ctx.namespace, [...out.keys()]);
  const defs = await Promise.all(asked.map((c) => ctx.client.hmget(c.keys.schedules, ...c.items)));
  asked.forEach((c, i) =>
    defs[i].forEach((raw, j) => {
      const runtime = raw !== null && decodeStored(c.items[j], raw).runtime;
      if (raw === null || runtime) out.delete(c.items[j]);
    }),
  );
  return out;
}

/**
 * Removes many schedules (see the module doc); names not in the registry are reported in
 * `missing`. As `removeSchedule`, a code-declared schedule that a live instance still declares is
 * refused unless `force` — for the whole call, before anything is removed (the error names up to
 * 10 of them). Emits one `operator.acted` (`schedule.remove`, `count` = removed) for a call that
 * removed any.
 * @throws InvalidScheduleError naming a bad name and its index; DuplicateScheduleError for a name
 *   given twice; ChronosStateError when live instances declare some of them and `force` is not set.
 */
export async function removeSchedules(
  ctx: InspectorContext,
  names: readonly string[],
  force = false,
  actor?: string,
): Promise<RemoveSchedulesResult> {
  const list = validateNames(names);
  await databaseChecked(ctx.client);
  if (!force) {
    const refused = await liveCodeDeclared(ctx, list);
    if (refused.size > 0) {
      const shown = [...refused].slice(0, 10).map(([name, by]) => `"${name}" (${[...new Set(by)].join(', ')})`);
      throw new ChronosStateError(
        `${refused.size} schedule(s) are declared in code by live instances: ${shown.join(', ')}${refused.size > 10 ? ', …' : ''}: ` +
          'they would come back when one of them restarts. Remove them from the code (nothing was removed).',
      );
    }
  }
  const { parts, outcomes } = await pipelined(nameChunks(ctx.namespace, list), (c) => removeSchedulesScript(ctx.client, c.keys, c.items));
  const removed = outcomes.reduce((n, o) => n + o.removed, 0);
  const fences = outcomes.flatMap((o) => o.fences);
  // their pause notes (the scheduler's slot), one HDEL per chunk
  await Promise.all(parts.map((c, i) => outcomes[i].removed > 0 && ctx.client.hdel(ctx.sched.pauseNotes, ...c.items)));
  await settle(
    ctx,
    fences,
    new Set(),
    parts.filter((_, i) => outcomes[i].removed > 0),
  );
  // as removeSchedule: a removed schedule's maxRuns count and lastFired go with it
  await dropFireState(ctx, fences);
  if (removed > 0) ctx.emit('schedule.remove', actor, { count: removed }); // as removeSchedule: an act that removed something
  return { removed, missing: outcomes.flatMap((o) => o.missing) };
}
