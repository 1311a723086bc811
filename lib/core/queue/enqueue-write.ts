// The write side of an enqueue: a validated task (Prepared), its meta text, and how a bulk of them
// is sent (enqueue-bulk.lua calls for runs of ready tasks, enqueue.lua for the others).
import { SlotPipeline, isCluster } from '../redis/cluster.js';
import {
  enqueueOutcome,
  pipeEnqueue,
  pipeEnqueueBulk,
  pipeEnqueueGroup,
  sendEnqueue,
  sendEnqueueBulk,
  sendEnqueueGroup,
  type BulkEntry,
  type DedupMode,
  type GroupEntry,
  type EnqueueArgs,
  type EnqueueOutcome,
} from '../redis/commands/queue.js';
import { wrapScriptError } from '../redis/scripts.js';
import { dueTime, lowerDue, pipeLowerDue } from '../redis/commands/due.js';
import type { GlobalKeys, QueueKeys } from '../redis/keys.js';
import { META, newMeta } from '../redis/protocol.js';
import type { RedisClient } from '../redis/types.js';
import { encodeMeta, encodeNewMeta } from './codec.js';

/** Ready tasks of one queue per enqueue-bulk.lua call (a call blocks Redis for about 1–2 µs per task). */
const BULK_CHUNK = 100;

/** One `[error, reply]` of a pipeline. */
export type Reply = [Error | null, unknown];

const replyOk = (reply: unknown): Reply => [null, reply];
const replyFailed = (err: unknown): Reply => [err instanceof Error ? err : new Error(String(err)), null];

/** A validated enqueue, ready to write. The meta is kept as its values and encoded once, at the write. */
export interface Prepared {
  keys: QueueKeys;
  id: string;
  type: string;
  payload: string;
  maxRetry: number;
  timeoutMs: number;
  enqueuedAt: number;
  /** The PRODUCER span's traceparent (meta `tp`), set by startSpan. */
  traceparent?: string;
  processAt: number;
  delayMs: number;
  dedupKey?: string;
  dedupTtlMs: number;
  /** The dedup key's mode (undefined: first). */
  dedupMode?: DedupMode;
  unique: boolean;
  /** The task's group (meta `g`), when it has one. */
  group?: string;
}

/**
 * The JSON text of a task's meta: a new task's `{r, m, t, e}`, then `u` for an explicit id,
 * `tp` for a traceparent (the order it always had), `g` for a group and `dk` for a dedup key. Without
 * those, the text is built directly.
 */
export function metaText(p: Prepared): string {
  if (!p.unique && p.traceparent === undefined && p.group === undefined && p.dedupKey === undefined)
    return encodeNewMeta(p.maxRetry, p.timeoutMs, p.enqueuedAt);
  const meta = newMeta(p.maxRetry, p.timeoutMs, p.enqueuedAt);
  if (p.unique) meta[META.uniqueId] = 1;
  if (p.traceparent !== undefined) meta[META.traceparent] = p.traceparent;
  if (p.group !== undefined) meta[META.group] = p.group;
  if (p.dedupKey !== undefined) meta[META.dedupKey] = p.dedupKey;
  return encodeMeta(meta);
}

/** A plain enqueue (ready now, no dedup key, no explicit id, no group) is a bare XADD. */
export function isPlain(p: Prepared): boolean {
  return p.processAt === 0 && p.delayMs === 0 && p.dedupKey === undefined && !p.unique && p.group === undefined;
}

/**
 * A ready task of a group without a dedup key or an explicit id goes to its group's waiting list
 * (enqueue-group.lua); a grouped task with a time goes to the scheduled set and one with a dedup key
 * or an id to the stream (enqueue.lua), and fetch-limited.lua moves it into its group when it is due.
 */
export function isGroupReady(p: Prepared): boolean {
  return p.group !== undefined && p.processAt === 0 && p.delayMs === 0 && p.dedupKey === undefined && !p.unique;
}

/** The enqueue-group.lua entry of a ready grouped task: its group and its stored form. */
export function groupEntry(p: Prepared): GroupEntry {
  return { group: p.group!, stored: JSON.stringify([p.id, p.type, p.payload, metaText(p)]) };
}

/** When a delayed task is due, for the due-time index (epoch ms; commands/due.ts dueTime); undefined when not delayed. */
export function dueAt(p: Prepared): number | undefined {
  return dueTime(p.processAt, p.delayMs);
}

/** The earliest due time of the delayed tasks of each queue in a bulk enqueue. */
function earliestDue(prepared: readonly Prepared[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of prepared) {
    const at = dueAt(p);
    if (at !== undefined && !(out.get(p.keys.queue)! <= at)) out.set(p.keys.queue, at);
  }
  return out;
}

/** The enqueue.lua arguments of a task that is not plain. */
export function scriptArgs(p: Prepared): EnqueueArgs {
  const { id, type, payload, processAt, delayMs, dedupKey, dedupTtlMs, dedupMode, unique } = p;
  return { id, type, payload, meta: metaText(p), processAtMs: processAt, delayMs, dedupKey, dedupTtlMs, dedupMode, unique };
}

/**
 * A delayed enqueue: enqueue.lua and the due-time index's `ZADD LT` (key `due`) in one round trip,
 * the index after the task (a failed index write is left to the forwarders' rolling sweep).
 * @throws the script's error, wrapped (scripts.ts wrapScriptError).
 */
export async function writeDelayed(client: RedisClient, due: string, p: Prepared): Promise<EnqueueOutcome> {
  const at = dueAt(p)!; // before the send: never later than the due time enqueue.lua stores (see writeTasks)
  const pipeline = new SlotPipeline(client)
    .add(p.keys.stream, (c) => pipeEnqueue(c, p.keys, scriptArgs(p)))
    .add(due, (c) => pipeLowerDue(c, due, p.keys.queue, at));
  const [[err, reply]] = await pipeline.exec();
  if (err) throw wrapScriptError('enqueue', err);
  return enqueueOutcome(reply);
}

/**
 * Sends the validated tasks of an enqueueBulk in input order: the SADDs of new queues (to the
 * set of queues), then each run of consecutive ready tasks of one queue as enqueue-bulk.lua calls
 * of up to BULK_CHUNK tasks (enqueue-group.lua for ready tasks of groups), each other task as its enqueue.lua call, and last, for each queue
 * with delayed tasks, their earliest due time (read before the first send) into the due-time index (`ZADD LT`, after the tasks
 * are stored; a failed index write is left to the forwarders' rolling sweep, the tasks being stored).
 * On one node each call is written as soon as it is built, so Redis runs the first while the next
 * is built (one connection: the order holds); on a cluster, one pipeline per slot. `replyOf[i]` is
 * the index of task i's `[error, reply]`.
 */
export async function writeTasks(
  client: RedisClient,
  globalKeys: GlobalKeys,
  prepared: readonly Prepared[],
  newQueues: Set<string> | undefined,
): Promise<{ replies: Reply[]; replyOf: number[] }> {
  const replyOf: number[] = new Array(prepared.length);
  const known = globalKeys.queues;
  const due = globalKeys.due;
  // read before any task is sent: enqueue.lua counts a delay from Redis time when it runs, later than
  // this estimate (never ahead of it), so the index is never later than a task's stored due time (read
  // after the sends, it came after it by however long the rest of the bulk took: 332 ms for 20,000)
  const dues = earliestDue(prepared);
  if (isCluster(client)) {
    const pipeline = new SlotPipeline(client);
    if (newQueues) for (const q of newQueues) pipeline.add(known, (c) => c.sadd(known, q));
    eachCall(
      prepared,
      replyOf,
      pipeline.length,
      (p) => {
        pipeline.add(p.keys.stream, (c) => pipeEnqueue(c, p.keys, scriptArgs(p)));
      },
      (keys, entries) => {
        pipeline.add(keys.stream, (c) => pipeEnqueueBulk(c, keys, entries));
      },
      (keys, entries) => {
        pipeline.add(keys.stream, (c) => pipeEnqueueGroup(c, keys, entries));
      },
    );
    for (const [queue, at] of dues) pipeline.add(due, (c) => pipeLowerDue(c, due, queue, at));
    return { replies: await pipeline.exec(), replyOf };
  }
  const sent: Promise<Reply>[] = [];
  const settle = (reply: Promise<unknown>) => sent.push(reply.then(replyOk, replyFailed));
  if (newQueues) for (const q of newQueues) settle(client.sadd(known, q));
  eachCall(
    prepared,
    replyOf,
    sent.length,
    (p) => settle(sendEnqueue(client, p.keys, scriptArgs(p))),
    (keys, entries) => {
      settle(sendEnqueueBulk(client, keys, entries));
    },
    (keys, entries) => {
      settle(sendEnqueueGroup(client, keys, entries));
    },
  );
  for (const [queue, at] of dues) settle(lowerDue(client, due, queue, at));
  return { replies: await Promise.all(sent), replyOf };
}

/**
 * Splits the tasks into calls (see {@link writeTasks}): `one(p)` for a task with options, `bulk(keys,
 * entries)` for a run of ready tasks of one queue, `grouped(keys, entries)` for a run of ready tasks
 * of groups of one queue; fills `replyOf` counting calls from `first`.
 */
function eachCall(
  prepared: readonly Prepared[],
  replyOf: number[],
  first: number,
  one: (p: Prepared) => void,
  bulk: (keys: QueueKeys, entries: BulkEntry[]) => void,
  grouped: (keys: QueueKeys, entries: GroupEntry[]) => void,
): void {
  let call = first;
  let i = 0;
  while (i < prepared.length) {
    const p = prepared[i];
    if (isGroupReady(p)) {
      const keys = p.keys;
      const entries: GroupEntry[] = [];
      for (let q = p; entries.length < BULK_CHUNK && q.keys === keys && isGroupReady(q); q = prepared[i]) {
        entries.push(groupEntry(q));
        replyOf[i++] = call;
        if (i === prepared.length) break;
      }
      grouped(keys, entries);
      call++;
      continue;
    }
    if (!isPlain(p)) {
      one(p);
      replyOf[i++] = call++;
      continue;
    }
    const keys = p.keys;
    const entries: BulkEntry[] = [];
    for (let q = p; entries.length < BULK_CHUNK && q.keys === keys && isPlain(q); q = prepared[i]) {
      entries.push({ id: q.id, type: q.type, payload: q.payload, meta: metaText(q) });
      replyOf[i++] = call;
      if (i === prepared.length) break;
    }
    bulk(keys, entries);
    call++;
  }
}
