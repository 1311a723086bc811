import { deletePendingScript, deleteTasksScript, retryDeadScript, runTasksScript } from '../redis/commands/admin.js';
import { killScript } from '../redis/commands/queue.js';
import { DEAD_REASON, META } from '../redis/protocol.js';
import { DEFAULTS } from '../runtime/defaults.js';
import { ChronosStateError, TaskCancelledError, TaskNotFoundError } from '../runtime/errors.js';
import type { OperatorAction } from '../runtime/events.js';
import { encodeStored, type TaskMeta } from '../queue/codec.js';
import { markerKeys } from '../queue/codec.js';
import type { QueueKeys } from '../redis/keys.js';
import { ACT_BATCH, checkState, matches, MAX_LISTED_IDS, setOf, type InspectorContext } from './context.js';
import { findTask, pageRows, requireTask, taskNotFound, type Row } from './tasks.js';
import type { ActResult, TaskFilter, TaskState } from './types.js';
import { engineTime } from '../runtime/time.js';

/** Runs one act script on a batch of rows; returns the ids it changed (and those it left, with why). */
type BatchAct = (rows: Row[]) => Promise<{ done: string[]; skipped?: { id: string; reason: string }[] }>;

function result(done: string[], skipped: { id: string; reason: string }[] = []): ActResult {
  const r: ActResult = { count: done.length, ids: done.slice(0, MAX_LISTED_IDS) };
  if (skipped.length > 0) r.skipped = skipped.slice(0, MAX_LISTED_IDS);
  return r;
}

/**
 * Applies `act` to every task of a state that passes `filter`, a page of {@link ACT_BATCH} at a
 * time: each page is one bounded read and one script call, atomic per task, so a repeat (or a
 * crash halfway) is safe. Tasks added while it runs may or may not be included.
 */
async function forAll(
  ctx: InspectorContext,
  queue: string,
  state: TaskState,
  filter: TaskFilter | undefined,
  act: BatchAct,
): Promise<ActResult> {
  const done: string[] = [];
  const skipped: { id: string; reason: string }[] = [];
  let cursor: string | undefined;
  do {
    // ids and meta are what an act takes: the payloads stay in Redis (trial 45)
    const page = await pageRows(ctx, queue, state, cursor, ACT_BATCH, { payloads: false });
    const hit = page.rows.filter((r) => matches(r.info, filter));
    if (hit.length > 0) {
      const r = await act(hit);
      done.push(...r.done);
      skipped.push(...(r.skipped ?? []));
    }
    cursor = page.cursor;
  } while (cursor);
  return result(done, skipped);
}

function emitted(
  ctx: InspectorContext,
  action: OperatorAction,
  queue: string,
  actor: string | undefined,
  r: ActResult,
  taskId?: string,
): ActResult {
  ctx.emit(action, actor, { queue, count: r.count, ...(taskId !== undefined ? { taskId } : {}) });
  return r;
}

// ------------------------------------------------------------------ dead → retry

function retryDeadBatch(ctx: InspectorContext, queue: string): BatchAct {
  const k = ctx.keys(queue);
  return async (rows) => {
    const tasks = rows.map(({ info, meta }) => ({ taskId: info.id, markers: markerKeys(k, { id: info.id, meta }) }));
    const { moved, conflicts } = await retryDeadScript(ctx.client, k, tasks);
    return { done: moved, skipped: conflicts.map((id) => ({ id, reason: 'its explicit task id is live again (another task took it)' })) };
  };
}

/**
 * Puts a dead task back in its queue's stream with a fresh retry budget (`retry-dead.lua`). Cost:
 * one ZSCORE/HGET pipeline and the script (finding a task that is not dead: as tasks.ts findTask).
 * @throws TaskNotFoundError when the task is not in that queue; ChronosStateError (code `STATE`)
 * naming its state when it is there but not dead (e.g. pending: retried already).
 */
export async function retryDead(ctx: InspectorContext, queue: string, id: string, actor?: string): Promise<ActResult> {
  const row = await findTask(ctx, id, queue);
  if (!row) throw new TaskNotFoundError(queue, id);
  if (row.info.state !== 'dead')
    throw new ChronosStateError(`Task ${id} of queue "${queue}" is in state ${row.info.state}, not dead: only a dead task can be retried`);
  const r = await retryDeadBatch(ctx, queue)([row]);
  return emitted(ctx, 'dead.retry', queue, actor, result(r.done, r.skipped), id);
}

/** Retries every dead task of a queue that passes the filter, in batches (one page read + one script call per 200). */
export async function retryAllDead(ctx: InspectorContext, queue: string, filter?: TaskFilter, actor?: string): Promise<ActResult> {
  return emitted(ctx, 'dead.retry', queue, actor, await forAll(ctx, queue, 'dead', filter, retryDeadBatch(ctx, queue)));
}

// ------------------------------------------------------------------ delete

/**
 * The keys a delete releases when they still name the task: its markers (a dead task released them
 * when it died: another live task may hold them now) and its dedup key (a dead task keeps it for its
 * TTL, so it goes with the task), so an enqueue with that key after the delete is a new task, as
 * BullMQ's `Job.remove` drops the job's deduplication id.
 */
function deleteKeys(k: QueueKeys, id: string, meta: TaskMeta, dead: boolean): string[] {
  const keys = dead ? [] : markerKeys(k, { id, meta });
  const dedupKey = meta[META.dedupKey];
  if (typeof dedupKey === 'string') keys.push(k.dedup(dedupKey));
  return keys;
}

function deleteBatch(ctx: InspectorContext, queue: string, state: TaskState): BatchAct {
  const k = ctx.keys(queue);
  if (state === 'pending') {
    return async (rows) => {
      const tasks = rows.map(({ info, meta }) => ({
        entryId: info.entryId!,
        taskId: info.id,
        markers: deleteKeys(k, info.id, meta, false),
      }));
      return { done: await deletePendingScript(ctx.client, k, tasks) };
    };
  }
  const set = setOf(k, state as 'scheduled' | 'retry' | 'dead');
  return async (rows) => {
    const tasks = rows.map(({ info, meta }) => ({ taskId: info.id, markers: deleteKeys(k, info.id, meta, state === 'dead') }));
    return { done: await deleteTasksScript(ctx.client, k, set, tasks) };
  };
}

const DELETABLE: readonly TaskState[] = ['pending', 'scheduled', 'retry', 'dead'];

/**
 * Deletes one task (pending, scheduled, retry or dead; an active one is cancelled instead), and
 * releases its explicit-id and overlap markers. Cost: finding it ({@link findTask} in that queue)
 * plus one script (`delete-tasks.lua` / `delete-pending.lua`). With `state`, only that state is
 * looked for.
 * @throws TaskNotFoundError when the task is not in a deletable state there.
 */
export async function deleteTask(ctx: InspectorContext, queue: string, id: string, state?: TaskState, actor?: string): Promise<ActResult> {
  const states = state === undefined ? DELETABLE : [checkState(state, DELETABLE)];
  const row = await requireTask(ctx, queue, id, states);
  const r = await deleteBatch(ctx, queue, row.info.state)([row]);
  if (r.done.length === 0) throw new TaskNotFoundError(queue, id, row.info.state); // a worker took it meanwhile
  return emitted(ctx, 'task.delete', queue, actor, result(r.done), id);
}

/** Deletes every task of a state (pending, scheduled, retry, dead) that passes the filter, in batches of 200. */
export async function deleteAllTasks(
  ctx: InspectorContext,
  queue: string,
  state: TaskState,
  filter?: TaskFilter,
  actor?: string,
): Promise<ActResult> {
  checkState(state, DELETABLE);
  return emitted(ctx, 'task.delete', queue, actor, await forAll(ctx, queue, state, filter, deleteBatch(ctx, queue, state)));
}

// ------------------------------------------------------------------ run now

function runBatch(ctx: InspectorContext, queue: string, state: 'scheduled' | 'retry'): BatchAct {
  const k = ctx.keys(queue);
  const set = setOf(k, state);
  return async (rows) => ({
    done: await runTasksScript(
      ctx.client,
      k,
      set,
      rows.map((r) => r.info.id),
    ),
  });
}

/**
 * Moves a scheduled or retry task into the stream now (`run-tasks.lua`), keeping its retry count.
 * @throws TaskNotFoundError when it is neither scheduled nor waiting for a retry in that queue.
 */
export async function runTask(ctx: InspectorContext, queue: string, id: string, actor?: string, state?: TaskState): Promise<ActResult> {
  const runnable: TaskState[] = ['scheduled', 'retry'];
  const row = await requireTask(ctx, queue, id, state === undefined ? runnable : [checkState(state, runnable)]);
  const r = await runBatch(ctx, queue, row.info.state as 'scheduled' | 'retry')([row]);
  return emitted(ctx, 'task.run', queue, actor, result(r.done), id);
}

/** Runs now every scheduled (or retry) task that passes the filter, in batches of 200. */
export async function runAllTasks(
  ctx: InspectorContext,
  queue: string,
  state: TaskState,
  filter?: TaskFilter,
  actor?: string,
): Promise<ActResult> {
  const s = checkState(state, ['scheduled', 'retry']) as 'scheduled' | 'retry';
  return emitted(ctx, 'task.run', queue, actor, await forAll(ctx, queue, s, filter, runBatch(ctx, queue, s)));
}

// ------------------------------------------------------------------ cancel

/**
 * Cancels an active task: dead-letters it at once (`kill.lua`: XACK + XDEL + dead set, reason
 * `cancelled`, last error `TaskCancelledError: …`, its markers released), then `PUBLISH`es a notice
 * on `<ns>:cancel`; the server running it (see worker/cancel-listener.ts) aborts its `signal` with a
 * {@link TaskCancelledError}. The handler's later outcome is ignored (its entry is gone), so the
 * task is never retried. On a queue with fleet-wide limits or groups, the freed slot is announced on
 * `<ns>:limits` too (a worker held back by the limits starts the next task at once). Cost: finding it
 * (the pending entries list), the script, one PUBLISH (on a limited queue, a SISMEMBER and a second PUBLISH).
 * @throws TaskNotFoundError when the task is not active (in any queue, without `queue`).
 */
export async function cancelTask(ctx: InspectorContext, id: string, queue?: string, actor?: string): Promise<ActResult> {
  const row = await findTask(ctx, id, queue);
  if (!row) throw await taskNotFound(ctx, queue, id);
  if (row.info.state !== 'active') {
    const instead = row.info.state === 'dead' ? `it is dead already (reason ${row.info.reason ?? 'unknown'})` : `delete it instead`;
    throw new ChronosStateError(
      `Task ${id} of queue "${row.info.queue}" is ${row.info.state}, not active: only a running task can be cancelled; ${instead}`,
    );
  }
  const q = row.info.queue;
  const k = ctx.keys(q);
  const who = actor ?? ctx.actor;
  const err = new TaskCancelledError(id, who);
  const meta: TaskMeta = {
    ...row.meta,
    [META.lastError]: `${err.name}: ${err.message}`,
    [META.failedAt]: engineTime.now(),
    [META.deadReason]: DEAD_REASON.cancelled,
  };
  const payload = row.info.payloadError ? String(row.info.payload) : JSON.stringify(row.info.payload);
  const msg = { id, type: row.info.type, payload, meta };
  const failedAt = await killScript(ctx.client, k, {
    entryId: row.info.entryId!,
    taskId: id,
    stored: encodeStored(msg),
    release: markerKeys(k, { id, meta: row.meta }),
    maxDead: DEFAULTS.deadMaxCount,
    maxDeadAgeMs: DEFAULTS.deadMaxAgeMs,
    counterTtlMs: DEFAULTS.counterTtlMs,
  });
  if (failedAt === undefined) throw new TaskNotFoundError(q, id, 'active'); // it finished meanwhile
  await ctx.client.publish(ctx.global.cancelChannel, JSON.stringify({ queue: q, entryId: row.info.entryId, taskId: id, actor: who }));
  // the slot it held is free now: announced as a worker announces the slots it frees, so that a worker held
  // back by the queue's limits starts the next task at once; the task's own worker may be stuck or stopped,
  // or its handler may run on after the abort, and would announce nothing (trial 28)
  if ((await ctx.client.sismember(ctx.global.limited, q)) === 1) await ctx.client.publish(ctx.global.limitsChannel, q);
  return emitted(ctx, 'task.cancel', q, actor, result([id]), id);
}
