import { execReads } from '../redis/cluster.js';
import { InvalidOptionsError, TaskNotFoundError } from '../runtime/errors.js';
import { decodeStored, type TaskMeta } from '../queue/codec.js';
import { CONSUMER_GROUP, type QueueKeys } from '../redis/keys.js';
import { ENTRY_FIELDS } from '../redis/protocol.js';
import { PAGE_SCAN_BYTES, pageTasksScript } from '../redis/commands/admin.js';
import { checkState, entryInfo, matches, setOf, storedInfo, type InspectorContext } from './context.js';
import { queueNames } from './queues.js';
import type { DeadGroup, DeadGroups, TaskFilter, TaskInfo, TaskPage, TaskState } from './types.js';

/** A task as read, with the meta the acts need (uid/overlap flags). */
export interface Row {
  info: TaskInfo;
  meta: TaskMeta;
}

/** Most tasks one page returns. */
export const MAX_PAGE = 1000;
/** Entries one stream or PEL read takes (each call bounded). */
const CHUNK = 1000;
/** With a filter, a page call looks at most this many tasks before it returns (with a cursor to go on). */
export const FILTER_SCAN = 10_000;

const EMPTY_META: TaskMeta = { r: 0, m: 0, t: 0, e: 0 };

function metaOf(raw: string | null | undefined, id: string): TaskMeta {
  if (!raw) return EMPTY_META;
  try {
    return decodeStored(raw, id).meta;
  } catch {
    return EMPTY_META;
  }
}

function streamMeta(fields: string[] | null): TaskMeta {
  const i = fields ? fields.indexOf(ENTRY_FIELDS[3]) : -1;
  if (i < 0 || i % 2 !== 0) return EMPTY_META;
  try {
    return { ...EMPTY_META, ...(JSON.parse(fields![i + 1]) as TaskMeta) };
  } catch {
    return EMPTY_META;
  }
}

/** The group's last-delivered entry id (entries after it are pending), or undefined without the group. One `XINFO GROUPS`. */
export async function lastDeliveredId(ctx: InspectorContext, k: QueueKeys): Promise<string | undefined> {
  let reply: unknown;
  try {
    reply = await ctx.client.call('XINFO', 'GROUPS', k.stream);
  } catch {
    return undefined; // no stream yet
  }
  for (const g of reply as unknown[][]) {
    for (let i = 0; i + 1 < g.length; i += 2) {
      if (g[i] === 'name' && g[i + 1] === CONSUMER_GROUP) return String(g[g.indexOf('last-delivered-id') + 1]);
    }
  }
  return undefined;
}

function laterId(a: string | undefined, b: string | undefined): string | undefined {
  if (!a) return b;
  if (!b) return a;
  const [am, as] = a.split('-').map(BigInt);
  const [bm, bs] = b.split('-').map(BigInt);
  return am > bm || (am === bm && as > bs) ? a : b;
}

const ENTRY_ID = /^\d+-\d+$/;

/**
 * One unfiltered page of a state from a cursor (one bounded call, plus one for the stream's
 * group): scheduled/retry/dead by `page-tasks.lua` (ZRANK + ZRANGE + HGET per task); pending by
 * `XRANGE (cursor + COUNT limit` after the group's last-delivered id; active by `XPENDING (cursor +
 * limit` and a pipelined `XRANGE id id` per entry. With `payloads: false` a scheduled, retry or dead
 * task comes with its payload `null` (page-tasks.lua leaves it in Redis): for a reader of the type,
 * error, group and meta only. A scheduled, retry or dead page may be short of `limit` with a cursor,
 * payloads or not: one call reads at most `PAGE_SCAN_BYTES` of stored tasks (at least one).
 */
export async function pageRows(
  ctx: InspectorContext,
  queue: string,
  state: TaskState,
  cursor: string | undefined,
  limit: number,
  { payloads = true }: { payloads?: boolean } = {},
): Promise<{ rows: Row[]; cursor?: string }> {
  const k = ctx.keys(queue);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new InvalidOptionsError([`limit: expected an integer 1-${MAX_PAGE}, got ${String(limit)}`], 'task listing');
  }
  const badCursor = () =>
    new InvalidOptionsError(
      [`cursor: ${JSON.stringify(cursor)} is not a cursor of ${state === 'active' ? 'an' : 'a'} ${state} listing`],
      'task listing',
    );
  if (state === 'scheduled' || state === 'retry' || state === 'dead') {
    let after: { id: string; score: string } | undefined;
    if (cursor) {
      const sep = cursor.indexOf(':');
      if (sep < 1 || !Number.isFinite(Number(cursor.slice(0, sep)))) throw badCursor();
      after = { score: cursor.slice(0, sep), id: cursor.slice(sep + 1) };
    }
    const { tasks: page, cut } = await pageTasksScript(ctx.client, setOf(k, state), after, limit, payloads);
    const rows: Row[] = [];
    for (const { id, score, stored: raw } of page) {
      const info = storedInfo(queue, state, id, raw, Number(score)) ?? garbage(queue, state, id, raw, Number(score));
      rows.push({ info, meta: metaOf(raw, id) });
    }
    const lastTask = page.at(-1);
    const last = lastTask ? `${lastTask.score}:${lastTask.id}` : undefined;
    return { rows, cursor: rows.length === limit || cut ? last : undefined };
  }
  if (cursor !== undefined && !ENTRY_ID.test(cursor)) throw badCursor();
  if (state === 'pending') {
    const start = laterId(await lastDeliveredId(ctx, k), cursor);
    const entries = (await ctx.client.xrange(k.stream, start ? `(${start}` : '-', '+', 'COUNT', limit)) as [string, string[]][];
    const rows = entries.map(([entryId, fields]) => ({ info: entryInfo(queue, 'pending', entryId, fields), meta: streamMeta(fields) }));
    return { rows, cursor: rows.length === limit ? entries[entries.length - 1][0] : undefined };
  }
  let held: [string, string, number, number][];
  try {
    const start = cursor ? `(${cursor}` : '-';
    held = (await ctx.client.call('XPENDING', k.stream, CONSUMER_GROUP, start, '+', limit)) as [string, string, number, number][];
  } catch {
    return { rows: [] }; // no group yet
  }
  const rows = await activeRows(ctx, queue, k, held);
  return { rows, cursor: held.length === limit ? held[held.length - 1][0] : undefined };
}

function garbage(queue: string, state: TaskState, id: string, raw: string, at: number): TaskInfo {
  const payloadError = 'the stored task could not be decoded';
  return { id, type: '', queue, state, payload: raw, payloadError, retried: 0, maxRetry: 0, timeoutMs: 0, enqueuedAt: 0, at };
}

async function activeRows(ctx: InspectorContext, queue: string, k: QueueKeys, held: [string, string, number, number][]): Promise<Row[]> {
  if (held.length === 0) return [];
  const replies = await execReads(ctx.client, (p) => {
    for (const [entryId] of held) p.xrange(k.stream, entryId, entryId);
  });
  const rows: Row[] = [];
  held.forEach(([entryId, consumer, idle, deliveries], i) => {
    const e = (replies[i][1] as [string, string[]][] | undefined)?.[0];
    if (!e) return; // acked meanwhile
    const info = entryInfo(queue, 'active', entryId, e[1]);
    Object.assign(info, { consumer, idleMs: Number(idle), deliveries: Number(deliveries) });
    rows.push({ info, meta: streamMeta(e[1]) });
  });
  const since = await runningSince(ctx, [...new Set(rows.map((r) => r.info.consumer!))]);
  for (const { info } of rows) {
    const at = since.get(info.consumer!)?.[info.id];
    if (typeof at === 'number') info.startedAt = at;
  }
  return rows;
}

/** Each consumer's running tasks with their start, from its heartbeat info (one pipelined GET per server). */
async function runningSince(ctx: InspectorContext, consumers: string[]): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  if (consumers.length === 0) return out;
  const replies = await execReads(ctx.client, (p) => {
    for (const c of consumers) p.get(ctx.global.server(c));
  });
  consumers.forEach((c, i) => {
    try {
      const since = (JSON.parse(String(replies[i][1])) as { runningSince?: Record<string, unknown> } | null)?.runningSince;
      if (since && typeof since === 'object') out.set(c, since);
    } catch {
      /* no info key (the server is gone) or not JSON: no start known */
    }
  });
  return out;
}

/**
 * A page of tasks of one state, oldest first (by due, failed-at or entry time), decoded. With a
 * filter, pages are read until `limit` tasks match or {@link FILTER_SCAN} were looked at; the
 * cursor then goes on from there. Costs per call: see {@link pageRows} (one such call per 1000
 * tasks looked at). A page of scheduled, retry or dead tasks may be short of `limit` with a cursor:
 * one call reads at most `PAGE_SCAN_BYTES` (8 MB) of stored tasks.
 * @throws InvalidTaskStateError for an unknown state; InvalidOptionsError for a bad cursor or limit.
 */
export async function taskPage(
  ctx: InspectorContext,
  queue: string,
  state: TaskState,
  opts: { cursor?: string; limit?: number } & TaskFilter = {},
): Promise<TaskPage> {
  checkState(state);
  const limit = opts.limit ?? 50;
  const filter =
    opts.type !== undefined || opts.error !== undefined || opts.group !== undefined
      ? { type: opts.type, error: opts.error, group: opts.group }
      : undefined;
  if (!filter) {
    const { rows, cursor } = await pageRows(ctx, queue, state, opts.cursor, limit);
    return { tasks: rows.map((r) => r.info), cursor };
  }
  // the tasks looked at are read without their payloads (up to 1 MB each, 10,000 looked at: trial 45),
  // and those that match, with theirs
  const tasks: TaskInfo[] = [];
  let cursor = opts.cursor;
  let looked = 0;
  do {
    const page = await pageRows(ctx, queue, state, cursor, Math.min(MAX_PAGE, Math.max(limit, 200)), { payloads: false });
    for (const [i, r] of page.rows.entries()) {
      if (!matches(r.info, filter)) continue;
      tasks.push(r.info);
      if (tasks.length === limit) {
        const more = i < page.rows.length - 1 || page.cursor !== undefined;
        return withPayloads(ctx, queue, state, tasks, more ? cursorOf(r.info, state) : undefined);
      }
    }
    looked += page.rows.length;
    cursor = page.cursor;
  } while (cursor && looked < FILTER_SCAN);
  return withPayloads(ctx, queue, state, tasks, cursor);
}

/** Tasks one HMGET of {@link withPayloads} reads at most: 8 MB of tasks of the default maxPayloadBytes (1 MB). */
const WHOLE_CHUNK = 8;

/**
 * Tasks of a scheduled, retry or dead page read without their payloads ({@link pageRows}), read
 * again whole, in HMGETs of {@link WHOLE_CHUNK}, up to {@link PAGE_SCAN_BYTES} of stored tasks (at
 * least one): past it the page is cut there, with the cursor after its last task (review48: 200 tasks
 * of 1 MB in one HMGET held Redis 0.6 to 2.3 s). One that left the set meanwhile (retried, deleted) is
 * left out, as a listing read a moment later would. Pending and active tasks (read from the stream,
 * payloads always there) are returned as they are.
 * @param cursor the page's cursor when it is not cut.
 */
async function withPayloads(ctx: InspectorContext, queue: string, state: TaskState, tasks: TaskInfo[], cursor?: string): Promise<TaskPage> {
  if (tasks.length === 0 || (state !== 'scheduled' && state !== 'retry' && state !== 'dead')) return { tasks, cursor };
  const hash = setOf(ctx.keys(queue), state).hash;
  const out: TaskInfo[] = [];
  let bytes = 0;
  for (let from = 0; from < tasks.length; from += WHOLE_CHUNK) {
    const chunk = tasks.slice(from, from + WHOLE_CHUNK);
    const raws = (await ctx.client.hmget(hash, ...chunk.map((t) => t.id))) as (string | null)[];
    for (const [i, t] of chunk.entries()) {
      const raw = raws[i];
      if (!raw) continue;
      out.push(storedInfo(queue, state, t.id, raw, t.at) ?? garbage(queue, state, t.id, raw, t.at ?? 0));
      bytes += Buffer.byteLength(raw);
      if (bytes >= PAGE_SCAN_BYTES && from + i < tasks.length - 1) return { tasks: out, cursor: cursorOf(t, state) };
    }
  }
  return { tasks: out, cursor };
}

/** The cursor that continues after a task. */
export function cursorOf(t: TaskInfo, state: TaskState): string {
  return state === 'pending' || state === 'active' ? t.entryId! : `${t.at}:${t.id}`;
}

/**
 * Finds tasks by id in one queue's stream: `XPENDING` of the whole pending entries list in chunks
 * (with a pipelined `XRANGE id id` per entry) for active ones, then `XRANGE` after the group's
 * last-delivered id in chunks of 1000 for pending ones, up to `maxEntries`. Every call is bounded;
 * the scan as a whole is O(stream length) (a task id is not indexed in the stream).
 */
export async function findInStream(
  ctx: InspectorContext,
  queue: string,
  ids: ReadonlySet<string>,
  maxEntries = Infinity,
): Promise<{ found: Map<string, Row>; complete: boolean }> {
  const found = new Map<string, Row>();
  const k = ctx.keys(queue);
  let looked = 0;
  for (let cursor: string | undefined, first = true; first || cursor; first = false) {
    const page = await pageRows(ctx, queue, 'active', cursor, CHUNK);
    for (const r of page.rows) if (ids.has(r.info.id)) found.set(r.info.id, r);
    cursor = page.cursor;
    if (found.size === ids.size) return { found, complete: true };
  }
  let start = await lastDeliveredId(ctx, k);
  for (;;) {
    const entries = (await ctx.client.xrange(k.stream, start ? `(${start}` : '-', '+', 'COUNT', CHUNK)) as [string, string[]][];
    for (const [entryId, fields] of entries) {
      const i = fields.indexOf('id');
      const id = i >= 0 && i % 2 === 0 ? fields[i + 1] : entryId;
      if (ids.has(id) && !found.has(id)) found.set(id, { info: entryInfo(queue, 'pending', entryId, fields), meta: streamMeta(fields) });
    }
    looked += entries.length;
    if (found.size === ids.size || entries.length < CHUNK) return { found, complete: true };
    if (looked >= maxEntries) return { found, complete: false };
    start = entries[entries.length - 1][0];
  }
}

/**
 * A task by id in one queue or, without `queue`, in every known queue: its payload (decoded),
 * meta, retries, last error with stack, and for a trigger's task its schedule and instant. Per
 * queue: one pipeline of ZSCORE ×3 + HGET ×2, then (if not there) {@link findInStream}. A live task
 * comes before a dead one with the same id (an explicit task id used again after its task died).
 * @returns undefined when no queue has it.
 */
export async function findTask(ctx: InspectorContext, id: string, queue?: string): Promise<Row | undefined> {
  const names = queue !== undefined ? [queue] : await queueNames(ctx);
  const inSets = await Promise.all(names.map((q) => findInSets(ctx, q, id)));
  const hit = inSets.find((r) => r !== undefined && r.info.state !== 'dead') ?? inSets.find((r) => r !== undefined);
  if (hit && hit.info.state !== 'dead') return hit;
  if (hit) {
    // a dead task's explicit id may be used again by a live task (its uid marker held): that one is the answer (trial 8)
    if ((await ctx.client.exists(ctx.keys(hit.info.queue).uniqueId(id))) === 0) return hit;
    const { found } = await findInStream(ctx, hit.info.queue, new Set([id]));
    return found.get(id) ?? hit;
  }
  for (const q of names) {
    const { found } = await findInStream(ctx, q, new Set([id]));
    if (found.has(id)) return found.get(id);
  }
  return undefined;
}

async function findInSets(ctx: InspectorContext, queue: string, id: string): Promise<Row | undefined> {
  const k = ctx.keys(queue);
  // a read refused while the slot migrates is sent again (execReads): read as absent, the task was "not found"
  const replies = await execReads(ctx.client, (p) =>
    p.zscore(k.scheduled, id).zscore(k.retry, id).zscore(k.dead, id).hget(k.tasks, id).hget(k.deadTasks, id),
  );
  const r = replies.map(([err, v]) => (err ? null : v)) as (string | null)[];
  const [scheduled, retry, dead, stored, deadStored] = r;
  const pick: [TaskState, string | null, string | null][] = [
    ['retry', retry, stored],
    ['scheduled', scheduled, stored],
    ['dead', dead, deadStored],
  ];
  for (const [state, score, raw] of pick) {
    if (score === null || !raw) continue;
    const info = storedInfo(queue, state, id, raw, Number(score));
    if (info) return { info, meta: metaOf(raw, id) };
  }
  return undefined;
}

/** Finds a task in a given state of a queue, or throws. @throws TaskNotFoundError naming the queue, id and state. */
export async function requireTask(ctx: InspectorContext, queue: string, id: string, states: readonly TaskState[]): Promise<Row> {
  const row = await findTask(ctx, id, queue);
  if (!row || !states.includes(row.info.state)) throw await taskNotFound(ctx, queue, id, states.join(' or '), row?.info.state);
  return row;
}

/**
 * The error for a task not found in `queue` (every known queue when undefined). When it is found
 * nowhere and tasks wait in the groups of the queues searched, its message says so: a task waiting in
 * its group's list (not in the stream) is not found by id until a worker takes it, so it may be one of
 * them, not lost (trial 14). Cost: one HGET per queue searched, on this path only.
 */
export async function taskNotFound(
  ctx: InspectorContext,
  queue: string | undefined,
  id: string,
  state?: string,
  actualState?: string,
): Promise<TaskNotFoundError> {
  const err = new TaskNotFoundError(queue ?? '*', id, state, actualState);
  if (actualState !== undefined) return err;
  const names = queue !== undefined ? [queue] : await queueNames(ctx);
  // one command per queue, not a pipeline: on a Redis Cluster the queues live in different slots
  const counts = await Promise.all(
    names.map(async (n) => Math.max(0, Number((await ctx.client.hget(ctx.keys(n).limits, 'gwaiting')) ?? 0))),
  );
  const waiting = names.filter((_, i) => counts[i] > 0);
  const total = counts.reduce((a, c) => a + c, 0);
  if (total === 0) return err;
  const where = `queue${waiting.length > 1 ? 's' : ''} ${waiting.map((n) => JSON.stringify(n)).join(', ')}`;
  err.message += `; ${total} task${total === 1 ? ' waits' : 's wait'} in the groups of ${where}, where a task is not found by id until a worker takes it`;
  return err;
}

/** The first line of an error text (its message, without the stack). */
export function errorHeadline(text: string | undefined): string {
  if (!text) return '(no error recorded)';
  const line = text.split('\n', 1)[0].trim();
  return line.length > 300 ? line.slice(0, 300) + '…' : line;
}

/**
 * Dead tasks grouped by error message (the first line of the last error), biggest group first,
 * optionally filtered by type and error substring. A bounded scan: at most `scan` dead tasks
 * (default 10,000, the dead-letter cap) over the queues, in `page-tasks.lua` calls of 1000 that leave
 * the payloads in Redis (only the type, error and group are looked at).
 */
export async function deadGroups(ctx: InspectorContext, opts: { queue?: string; scan?: number } & TaskFilter = {}): Promise<DeadGroups> {
  const names = opts.queue !== undefined ? [opts.queue] : await queueNames(ctx);
  const bound = opts.scan ?? 10_000;
  const groups = new Map<string, DeadGroup & { queueSet: Set<string>; typeSet: Set<string> }>();
  let scanned = 0;
  let truncated = false;
  for (const q of names) {
    let cursor: string | undefined;
    do {
      if (scanned >= bound) {
        truncated = true;
        break;
      }
      // type, error and group only: no payload read (up to 1 MB each, 10,000 tasks: trial 45)
      const page = await pageRows(ctx, q, 'dead', cursor, Math.min(MAX_PAGE, bound - scanned), { payloads: false });
      scanned += page.rows.length;
      for (const { info } of page.rows) {
        if (!matches(info, opts)) continue;
        const message = errorHeadline(info.lastError);
        let g = groups.get(message);
        if (!g) {
          g = { message, count: 0, queues: [], types: [], sampleId: info.id, lastFailedAt: 0, queueSet: new Set(), typeSet: new Set() };
          groups.set(message, g);
        }
        g.count++;
        g.queueSet.add(q);
        g.typeSet.add(info.type);
        if ((info.at ?? 0) >= g.lastFailedAt) [g.lastFailedAt, g.sampleId] = [info.at ?? 0, info.id];
      }
      cursor = page.cursor;
    } while (cursor);
    if (truncated) break;
  }
  const out = [...groups.values()].map(({ queueSet, typeSet, ...g }) => ({
    ...g,
    queues: [...queueSet].sort(),
    types: [...typeSet].sort(),
  }));
  out.sort((a, b) => b.count - a.count || b.lastFailedAt - a.lastFailedAt);
  return { groups: out, scanned, truncated };
}
