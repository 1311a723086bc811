import type { ChainableCommander } from 'ioredis';
import { RedisScriptError } from '../../runtime/errors.js';
import { CONSUMER_GROUP, type QueueKeys } from '../keys.js';
import { ENQUEUE_RESULT, NONE_DUE, NOT_PENDING } from '../protocol.js';
import { pipeScript, runScript, type ScriptName, type ScriptWrapper } from '../scripts.js';
import type { RedisClient } from '../types.js';
import { engineTime } from '../../runtime/time.js';
import { sendAck } from './ack-command.js';

/**
 * Typed wrappers of the queue's scripts: enqueue (one task, or many ready ones), ack, retry, kill,
 * forward and requeue; conventions as in index.ts. The enqueue scripts' wrappers have a pipelined
 * variant sharing their KEYS/ARGV layout.
 */

type Codes = Readonly<Record<string, number>>;

/** A task as a script writes it into a stream entry or the stored form (protocol.ts ENTRY_FIELDS). */
export interface EncodedTask {
  type: string;
  /** JSON text. */
  payload: string;
  /** JSON text of protocol.ts TaskMeta. */
  meta: string;
}

/** A code → name lookup for one result table of protocol.ts (built once, an array index per reply). */
export function codeNames<T extends Codes>(script: ScriptName, table: T): (code: unknown) => keyof T & string {
  const names: (keyof T & string)[] = [];
  for (const [name, code] of Object.entries(table)) names[code] = name;
  return (code) => {
    const name = typeof code === 'number' ? names[code] : undefined;
    if (name === undefined) throw new RedisScriptError(script, `unexpected reply code ${JSON.stringify(code)}`);
    return name;
  };
}

// ------------------------------------------------------------------ queue scripts

export type EnqueueStatus = keyof typeof ENQUEUE_RESULT;
const enqueueStatus = codeNames('enqueue', ENQUEUE_RESULT);

/** One task for enqueue.lua. */
export interface EnqueueArgs extends EncodedTask {
  id: string;
  /** Epoch ms; 0 = not given. */
  processAtMs: number;
  /** From now by Redis server time, ms; 0 = not given. */
  delayMs: number;
  /** The dedup key (as the user gave it, not the Redis key); undefined = none. */
  dedupKey?: string;
  /** Lifetime of the dedup key, ms (ignored without one). */
  dedupTtlMs: number;
  /** The task id was given explicitly: its uid key is held while the task is live. */
  unique: boolean;
  /** The dedup key's mode (enqueue option `dedup.mode`): first wins, debounce, or replace. @defaultValue 'first' */
  dedupMode?: DedupMode;
}

/** How an enqueue with a dedup key treats the key's task: the first wins, or a new one replaces it while it waits (debounce also moves its time). */
export type DedupMode = 'first' | 'debounce' | 'replace';

const DEDUP_MODE: Record<DedupMode, string> = { first: 'f', debounce: 'd', replace: 'r' };

/**
 * Where the existing task of a deduplicated enqueue is (enqueue.lua's third element): in the scheduled,
 * retry or dead set, else `pending` (in the stream, ready or running: only a scan of the stream tells
 * which; or, under a dedup key that outlives its task, already done).
 */
export type DedupState = 'pending' | 'scheduled' | 'retry' | 'dead';

const DEDUP_STATES: readonly string[] = ['pending', 'scheduled', 'retry', 'dead'] satisfies DedupState[];

/** What enqueue.lua did: `id` is the new task's, or the live task's when `deduplicated` (then `state` says where it is). */
export interface EnqueueOutcome {
  status: EnqueueStatus;
  id: string;
  /** The existing task's state, when `status` is `deduplicated`. */
  state?: DedupState;
}

function enqueueCall(keys: QueueKeys, t: EnqueueArgs): [string[], (string | number)[]] {
  const k = [keys.stream, keys.scheduled, keys.tasks];
  if (t.dedupKey !== undefined) k.push(keys.dedup(t.dedupKey));
  if (t.unique) k.push(keys.uniqueId(t.id));
  // the prefix the script builds the retry, dead and uid keys on to say where a deduplicated task is: declared (never a key) so that
  // Redis Cluster refuses the call with TRYAGAIN while the slot migrates, instead of failing it at such a key absent from the node
  if (t.dedupKey !== undefined || t.unique) k.push(keys.base);
  const dedupTtlMs = t.dedupKey === undefined ? 0 : t.dedupTtlMs;
  const mode = DEDUP_MODE[t.dedupMode ?? 'first'];
  return [k, [t.id, t.type, t.payload, t.meta, t.processAtMs, dedupTtlMs, t.unique ? '1' : '0', t.delayMs, mode]];
}

/** Enqueues one task with a dedup key, an explicit id, or a time (enqueue.lua). */
export async function enqueueScript(client: RedisClient, keys: QueueKeys, task: EnqueueArgs): Promise<EnqueueOutcome> {
  return enqueueOutcome(await sendEnqueue(client, keys, task));
}

/** Queues an enqueue.lua call on a pipeline; map its reply with {@link enqueueOutcome}. */
export function pipeEnqueue(pipeline: ChainableCommander, keys: QueueKeys, task: EnqueueArgs): void {
  const [k, a] = enqueueCall(keys, task);
  pipeScript(pipeline, 'enqueue', k, a);
}

/** One ready task for enqueue-bulk.lua: the values of its stream entry (protocol.ts ENTRY_FIELDS order). */
export interface BulkEntry {
  id: string;
  type: string;
  /** JSON text. */
  payload: string;
  /** JSON text of protocol.ts TaskMeta. */
  meta: string;
}

/**
 * Queues one enqueue-bulk.lua call on a pipeline: `entries` appended to the stream of `keys`, in
 * order (the reply is their number).
 */
export function pipeEnqueueBulk(pipeline: ChainableCommander, keys: QueueKeys, entries: readonly BulkEntry[]): void {
  pipeScript(pipeline, 'enqueue-bulk', [keys.stream], bulkArgs(entries));
}

/** ARGV of enqueue-bulk.lua: 4 values per task. */
function bulkArgs(entries: readonly BulkEntry[]): string[] {
  const a: string[] = new Array(entries.length * 4);
  for (let i = 0, j = 0; i < entries.length; i++, j += 4) {
    const e = entries[i];
    a[j] = e.id;
    a[j + 1] = e.type;
    a[j + 2] = e.payload;
    a[j + 3] = e.meta;
  }
  return a;
}

/**
 * Sends one enqueue.lua call on a client (not a pipeline: it is written at once). @returns its bare
 * reply, to map with {@link enqueueOutcome}.
 */
export function sendEnqueue(client: RedisClient, keys: QueueKeys, task: EnqueueArgs): Promise<unknown> {
  const [k, a] = enqueueCall(keys, task);
  return runScript<unknown>(client, 'enqueue', k, a);
}

/** Sends one enqueue-bulk.lua call on a client (written at once). @returns the number of tasks appended. */
export function sendEnqueueBulk(client: RedisClient, keys: QueueKeys, entries: readonly BulkEntry[]): Promise<number> {
  return runScript<number>(client, 'enqueue-bulk', [keys.stream], bulkArgs(entries));
}

/** One ready task of a group for enqueue-group.lua: its group and its stored form (codec encodeStored). */
export interface GroupEntry {
  group: string;
  /** JSON array `[id, type, payload, meta]`. */
  stored: string;
}

function groupCall(keys: QueueKeys, entries: readonly GroupEntry[]): [string[], string[]] {
  const a: string[] = new Array(entries.length * 2);
  for (let i = 0, j = 0; i < entries.length; i++, j += 2) {
    a[j] = entries[i].group;
    a[j + 1] = entries[i].stored;
  }
  return [[keys.limits, keys.base], a];
}

/**
 * Sends one enqueue-group.lua call on a client (written at once): ready tasks of groups appended to
 * their groups' waiting lists, in order. @returns the number of tasks enqueued.
 */
export function sendEnqueueGroup(client: RedisClient, keys: QueueKeys, entries: readonly GroupEntry[]): Promise<number> {
  const [k, a] = groupCall(keys, entries);
  return runScript<number>(client, 'enqueue-group', k, a);
}

/** Queues one enqueue-group.lua call on a pipeline (the reply is the number of tasks). */
export function pipeEnqueueGroup(pipeline: ChainableCommander, keys: QueueKeys, entries: readonly GroupEntry[]): void {
  const [k, a] = groupCall(keys, entries);
  pipeScript(pipeline, 'enqueue-group', k, a);
}

/** Maps enqueue.lua's reply `{code, id[, state]}`. @throws RedisScriptError on a reply it never gives. */
export function enqueueOutcome(reply: unknown): EnqueueOutcome {
  const [code, id, state] = reply as [number, string, string?];
  const status = enqueueStatus(code);
  if (status !== 'deduplicated') return { status, id };
  if (!DEDUP_STATES.includes(state!))
    throw new RedisScriptError('enqueue', `unexpected state ${JSON.stringify(state)} of a deduplicated task`);
  return { status, id, state: state as DedupState };
}

/** Tasks whose handler succeeded, for ack.lua. */
export interface AckBatch {
  /** Entry ids of tasks with no key to release. */
  plain: readonly string[];
  /** Per task with a uid and/or overlap key: entry id, task id, those keys. */
  flagged: readonly (readonly [entryId: string, taskId: string, release: readonly string[]])[];
  /** Lifetime of the queue's counts key, renewed once a day, ms. */
  counterTtlMs: number;
}

/**
 * What ack.lua did: how many entries it acked, and the entries the group no longer had pending —
 * `reclaimed` by a recoverer (the task runs again elsewhere) or `gone` (deleted, trimmed, reported
 * lost, FLUSHDB; their markers were released). A plain entry deleted while pending is acked and gone.
 */
export interface AckOutcome {
  acked: number;
  reclaimed: string[];
  gone: string[];
}

/**
 * Acks and deletes the entries, releases their keys, counts them (ack.lua). A batch of plain entries
 * only (the usual one) goes as a prebuilt command (ack-command.ts); one with markers to release
 * through ioredis's script call.
 */
export async function ackScript(client: RedisClient, keys: QueueKeys, batch: AckBatch): Promise<AckOutcome> {
  if (batch.flagged.length === 0) {
    const plain = batch.plain;
    const [acked, reclaimed, gone] = await sendAck(client, keys, batch.counterTtlMs, engineTime.now(), plain.length, plain.join(' '));
    return { acked, reclaimed, gone };
  }
  const k = [keys.stream, keys.counts, keys.reclaimed];
  const a: (string | number)[] = [CONSUMER_GROUP, batch.counterTtlMs, engineTime.now(), batch.plain.length, batch.plain.join(' ')];
  for (const [entryId, taskId, release] of batch.flagged) {
    k.push(...release);
    a.push(entryId, taskId, release.length);
  }
  const [acked, reclaimed, gone] = await runScript<[number, string[], string[]]>(client, 'ack', k, a);
  return { acked, reclaimed, gone };
}

/** A failed task for retry.lua. */
export interface RetryArgs {
  entryId: string;
  taskId: string;
  /** The stored form with the new meta (codec encodeStored). */
  stored: string;
  /** From now by Redis server time, ms. */
  delayMs: number;
  /** Its uid and/or overlap keys, kept until the retry is due and MARKER_TTL.waitingMs past it. */
  markers: readonly string[];
  counterTtlMs: number;
}

/**
 * Moves a failed task to the retry set (retry.lua).
 * @returns retry-at (epoch ms, Redis time), or undefined when the entry was no longer pending (nothing done).
 */
export async function retryScript(client: RedisClient, keys: QueueKeys, t: RetryArgs): Promise<number | undefined> {
  const retryAt = await runScript<number>(
    client,
    'retry',
    [keys.stream, keys.retry, keys.tasks, keys.counts, ...t.markers],
    [CONSUMER_GROUP, t.entryId, t.taskId, t.stored, t.delayMs, t.counterTtlMs],
  );
  return retryAt === NOT_PENDING ? undefined : retryAt;
}

/** A task for kill.lua. */
export interface KillArgs {
  /** '' when the task is not in the stream. */
  entryId: string;
  taskId: string;
  /** The stored form with the last error and the dead reason (codec encodeStored). */
  stored: string;
  /** Its uid and/or overlap keys, deleted if they still name it. */
  release: readonly string[];
  maxDead: number;
  maxDeadAgeMs: number;
  counterTtlMs: number;
}

/**
 * Moves a task to the dead-letter set and trims it (kill.lua).
 * @returns failed-at (epoch ms, Redis time), or undefined when the entry was no longer pending (nothing done).
 */
export async function killScript(client: RedisClient, keys: QueueKeys, t: KillArgs): Promise<number | undefined> {
  const failedAt = await runScript<number>(
    client,
    'kill',
    [keys.stream, keys.dead, keys.deadTasks, keys.counts, ...t.release],
    [CONSUMER_GROUP, t.entryId, t.taskId, t.stored, t.maxDead, t.maxDeadAgeMs, t.counterTtlMs],
  );
  return failedAt === NOT_PENDING ? undefined : failedAt;
}

/** What forward.lua did. */
export interface ForwardOutcome {
  moved: number;
  /** When the next scheduled or retry task is due (epoch ms); undefined when none is waiting. */
  nextDueAt: number | undefined;
  /** Redis server time of the call, epoch ms. */
  redisNow: number;
}

/** Moves due scheduled and retry tasks into the stream, at most `limit` per set (forward.lua). */
export async function forwardScript(client: RedisClient, keys: QueueKeys, limit: number): Promise<ForwardOutcome> {
  const [moved, nextDue, redisNow] = await runScript<[number, number, number]>(
    client,
    'forward',
    [keys.stream, keys.scheduled, keys.retry, keys.tasks],
    [limit],
  );
  return { moved, nextDueAt: nextDue === NONE_DUE ? undefined : nextDue, redisNow };
}

/** Puts entries a consumer holds back at the end of the queue's stream, uncounted, freeing their group slots (requeue.lua). @returns how many were put back. */
export function requeueScript(client: RedisClient, keys: QueueKeys, entryIds: readonly string[]): Promise<number> {
  return runScript<number>(client, 'requeue', [keys.stream, keys.base], [CONSUMER_GROUP, ...entryIds]);
}

/** The wrapper of each script of this area (the registry in index.ts). */
export const QUEUE_SCRIPTS = {
  enqueue: enqueueScript,
  'enqueue-bulk': sendEnqueueBulk,
  'enqueue-group': sendEnqueueGroup,
  ack: ackScript,
  retry: retryScript,
  kill: killScript,
  forward: forwardScript,
  requeue: requeueScript,
} as const satisfies Partial<Record<ScriptName, ScriptWrapper>>;
