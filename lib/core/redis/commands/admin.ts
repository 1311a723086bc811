import { CONSUMER_GROUP, type QueueKeys } from '../keys.js';
import { runScript, type ScriptName, type ScriptWrapper } from '../scripts.js';
import type { RedisClient } from '../types.js';

/**
 * Typed wrappers of the Inspector's scripts (lib/core/admin): the bounded page read of a task set
 * (page-tasks.lua) and the operator's acts on tasks (run-tasks.lua, delete-tasks.lua,
 * delete-pending.lua, retry-dead.lua) and on schedules (backfill.lua). Each act moves or deletes a
 * task at most once, so a repeated call is safe. Conventions as in index.ts.
 */

/** A task set kept outside the stream: its ZSET (task id → due or failed-at, epoch ms) and the HASH of stored forms. */
export interface TaskSet {
  zset: string;
  hash: string;
}

/** A task with its uid and/or overlap keys (codec.ts markerKeys; none for most tasks). */
export interface MarkedTask {
  taskId: string;
  markers: readonly string[];
}

/** One task of a page read by page-tasks.lua. */
export interface PagedTask {
  id: string;
  /** Its score (due or failed-at, epoch ms) as Redis formats it: the exact text a cursor carries. */
  score: string;
  /** Its stored form; '' when the hash has none. */
  stored: string;
}

/**
 * Bytes of stored tasks one {@link pageTasksScript} call copies out of the hash at most (it stops
 * after the task that passes them), with payloads or without: 1000 dead tasks of 1 MB held Redis for
 * seconds in one call (trial 45); 200 with their payloads, 1.4 to 3.1 s (review48).
 */
export const PAGE_SCAN_BYTES = 8 * 1024 * 1024;

/**
 * Reads one page of a task set in score order after a cursor (page-tasks.lua): O(log N + limit).
 * @param after the last task of the previous page (its id and score text); undefined = from the start.
 * @param limit most tasks returned (≤ 1000).
 * @param payloads false: each stored form comes with its payload as `null` (id, type and meta kept),
 *   for a reader of the meta only (dead groups), which then reads no payload over the wire.
 * @param maxBytes the call stops after this many bytes of stored tasks read (at least one task), with
 *   payloads or without, `cut` then true. @defaultValue {@link PAGE_SCAN_BYTES}
 * @returns the tasks, and `cut`: true when the call stopped at `maxBytes` before `limit` with tasks
 *   left in the set (the page is short, not the last).
 */
export async function pageTasksScript(
  client: RedisClient,
  set: TaskSet,
  after: { id: string; score: string } | undefined,
  limit: number,
  payloads = true,
  maxBytes = PAGE_SCAN_BYTES,
): Promise<{ tasks: PagedTask[]; cut: boolean }> {
  const args = [after?.id ?? '', after?.score ?? '0', limit, payloads ? '1' : '0', maxBytes];
  const flat = await runScript<string[]>(client, 'page-tasks', [set.zset, set.hash], args);
  const tasks: PagedTask[] = [];
  for (let i = 0; i + 2 < flat.length; i += 3) tasks.push({ id: flat[i], score: flat[i + 1], stored: flat[i + 2] });
  return { tasks, cut: flat.length % 3 === 1 && flat[flat.length - 1] === 'cut' };
}

/**
 * Moves scheduled or retry tasks of `set` into the stream of `keys` now, meta kept (run-tasks.lua);
 * ids no longer in the set are skipped. At most 500 ids per call. @returns the task ids moved.
 */
export function runTasksScript(client: RedisClient, keys: QueueKeys, set: TaskSet, taskIds: readonly string[]): Promise<string[]> {
  return runScript<string[]>(client, 'run-tasks', [keys.stream, set.zset, set.hash], taskIds);
}

/** ARGV `task id, n` per task, its n markers appended to `k` (the layout of delete-tasks.lua and retry-dead.lua). */
function markedArgs(k: string[], tasks: readonly MarkedTask[]): (string | number)[] {
  const a: (string | number)[] = [];
  for (const t of tasks) {
    k.push(...t.markers);
    a.push(t.taskId, t.markers.length);
  }
  return a;
}

/**
 * Deletes tasks from a task set (scheduled, retry or dead) of the queue of `keys` and releases their
 * markers where they still name them (delete-tasks.lua; a trigger buffered behind a deleted task
 * starts in that queue's stream); pass no markers for a dead task (it released them when it died).
 * @returns the task ids deleted.
 */
export function deleteTasksScript(client: RedisClient, keys: QueueKeys, set: TaskSet, tasks: readonly MarkedTask[]): Promise<string[]> {
  const k = [set.zset, set.hash, keys.stream];
  const a = markedArgs(k, tasks);
  return runScript<string[]>(client, 'delete-tasks', k, a);
}

/**
 * Deletes pending tasks (stream entries no consumer was given) and releases their markers where
 * they still name them (delete-pending.lua); an entry a consumer took meanwhile is left alone.
 * @returns the task ids deleted.
 */
export function deletePendingScript(
  client: RedisClient,
  keys: QueueKeys,
  tasks: readonly (MarkedTask & { entryId: string })[],
): Promise<string[]> {
  const k = [keys.stream];
  const a: (string | number)[] = [CONSUMER_GROUP];
  for (const t of tasks) {
    k.push(...t.markers);
    a.push(t.entryId, t.taskId, t.markers.length);
  }
  return runScript<string[]>(client, 'delete-pending', k, a);
}

/** What retry-dead.lua did. */
export interface RetryDeadOutcome {
  /** Task ids put back in the stream with a fresh retry budget. */
  moved: string[];
  /** Task ids left dead: their explicit id is live again (another task took it). */
  conflicts: string[];
}

/**
 * Puts dead tasks back at the end of the stream with a fresh retry budget (retry-dead.lua); each
 * task's markers are its uid key then its overlap key (codec.ts markerKeys order).
 */
export async function retryDeadScript(client: RedisClient, keys: QueueKeys, tasks: readonly MarkedTask[]): Promise<RetryDeadOutcome> {
  const k = [keys.stream, keys.dead, keys.deadTasks];
  const a = markedArgs(k, tasks);
  const [moved, conflicts] = await runScript<[string[], string[]]>(client, 'retry-dead', k, a);
  return { moved, conflicts };
}

/** One chunk of a schedule's backfill for backfill.lua. */
export interface BackfillArgs {
  type: string;
  /** JSON text. */
  payload: string;
  /** Lifetime of each trigger's dedup key, ms. */
  dedupTtlMs: number;
  /** Per trigger: its task id, which is also its dedup key `<schedule>:<trigger-unix>`, and its meta (JSON text of protocol.ts TaskMeta). */
  triggers: readonly { taskId: string; meta: string }[];
}

/** Enqueues the triggers not enqueued before, each once ever by its dedup key (backfill.lua). @returns the task ids enqueued. */
export function backfillScript(client: RedisClient, keys: QueueKeys, b: BackfillArgs): Promise<string[]> {
  const k = [keys.stream];
  const a: (string | number)[] = [b.type, b.payload, b.dedupTtlMs];
  for (const t of b.triggers) {
    k.push(keys.dedup(t.taskId));
    a.push(t.taskId, t.meta);
  }
  return runScript<string[]>(client, 'backfill', k, a);
}

/** The wrapper of each script of this area (the registry in index.ts). */
export const ADMIN_SCRIPTS = {
  'page-tasks': pageTasksScript,
  'run-tasks': runTasksScript,
  'delete-tasks': deleteTasksScript,
  'delete-pending': deletePendingScript,
  'retry-dead': retryDeadScript,
  backfill: backfillScript,
} as const satisfies Partial<Record<ScriptName, ScriptWrapper>>;
