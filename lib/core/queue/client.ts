import { randomUUID } from 'node:crypto';
import { DEFAULTS } from '../defaults.js';
import { InvalidOptionsError } from '../errors.js';
import { EventBus } from '../events.js';
import { closeConnection, openConnection, type ConnectionHandle, type RedisConnection } from '../redis/connection.js';
import { GlobalKeys, QueueKeys, isValidName } from '../redis/keys.js';
import { enqueueOutcome, enqueueScript, pipeEnqueue, type EnqueueArgs, type EnqueueOutcome } from '../redis/commands.js';
import { META, entryFields, newMeta } from '../redis/protocol.js';
import { encodeMeta, encodePayload, type TaskMeta } from './codec.js';

/**
 * Options of one enqueue. Durations are milliseconds, instants epoch milliseconds.
 * @publicApi
 */
export interface EnqueueOptions {
  /** Queue name. @defaultValue 'default' */
  queue?: string;
  /** Run no earlier than this many ms from now, measured by Redis server time. Exclusive with `processAt`. */
  delay?: number;
  /** Run no earlier than this instant (epoch ms or a Date). Exclusive with `delay`. */
  processAt?: number | Date;
  /** Retries after a failure before the task is dead. @defaultValue 25 */
  maxRetry?: number;
  /** Timeout of one attempt, ms; the handler's signal aborts when it elapses. 0 = none. @defaultValue 1800000 (30 min) */
  timeout?: number;
  /**
   * Explicit task id (≤ 200 characters). While a task with this id is live (pending, scheduled,
   * retrying or running) in the queue, another enqueue with it returns that task with
   * `deduplicated: true`. A done or dead task frees the id.
   */
  taskId?: string;
  /**
   * Dedup key: a second enqueue with the same key in the same queue within `dedupTtl` returns the
   * first task's id with `deduplicated: true`, whatever that task's state.
   */
  dedupKey?: string;
  /** Lifetime of the dedup key, ms. @defaultValue 3600000 (1 h) */
  dedupTtl?: number;
}

/** What an enqueue did. `deduplicated: true` means nothing was written and `id` is the existing task's. */
export interface EnqueueResult {
  id: string;
  queue: string;
  deduplicated: boolean;
  /** Where the task is now: in the stream (`pending`) or waiting for its time (`scheduled`). */
  state: 'pending' | 'scheduled';
}

/** One task of {@link ChronosClient.enqueueBulk}. */
export interface BulkTask {
  type: string;
  payload?: unknown;
  options?: EnqueueOptions;
}

/** Options of a {@link ChronosClient}. @publicApi */
export interface ClientOptions {
  /** Redis to use. @defaultValue redis://127.0.0.1:6379 */
  connection?: RedisConnection;
  /** Key prefix isolating this app on a shared Redis. @defaultValue 'chronos' */
  namespace?: string;
  /** Defaults applied to every enqueue. */
  defaults?: { queue?: string; maxRetry?: number; timeout?: number };
  /** Where `task.enqueued` events go (shared with the server and scheduler of one app). */
  events?: EventBus;
  /**
   * Largest payload an enqueue accepts, in UTF-8 bytes of its JSON text; a bigger one is an
   * `InvalidPayloadError` naming its size and this limit, before anything is written. 0 = no limit.
   * @defaultValue 1048576 (1 MiB)
   */
  maxPayloadBytes?: number;
}

const ENQUEUE_KEYS = new Set(['queue', 'delay', 'processAt', 'maxRetry', 'timeout', 'taskId', 'dedupKey', 'dedupTtl']);

/** A validated enqueue, ready to write. */
interface Prepared {
  keys: QueueKeys;
  id: string;
  type: string;
  payload: string;
  meta: TaskMeta;
  processAt: number;
  delayMs: number;
  dedupKey?: string;
  dedupTtlMs: number;
  unique: boolean;
}

function isNonNegInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/**
 * Enqueues tasks. Any number of clients, in any process, may enqueue to the same queues.
 * A plain enqueue is one `XADD` (one round trip); with `delay`, `processAt`, `dedupKey` or
 * `taskId` it is one Lua script (`enqueue.lua`), atomic.
 * @publicApi
 */
export class ChronosClient {
  readonly namespace: string;
  private readonly conn: ConnectionHandle;
  private readonly globalKeys: GlobalKeys;
  private readonly queueKeys = new Map<string, QueueKeys>();
  private readonly knownQueues = new Set<string>();
  private readonly defaults: { queue: string; maxRetry: number; timeoutMs: number };
  private readonly events?: EventBus;
  private readonly maxPayloadBytes: number;

  constructor(options: ClientOptions = {}) {
    const issues: string[] = [];
    const namespace = options.namespace ?? DEFAULTS.namespace;
    if (!isValidName(namespace)) issues.push(`namespace: expected 1-200 characters of [A-Za-z0-9_.:-], got ${JSON.stringify(namespace)}`);
    const d = options.defaults ?? {};
    if (d.queue !== undefined && !isValidName(d.queue)) issues.push(`defaults.queue: invalid queue name ${JSON.stringify(d.queue)}`);
    if (d.maxRetry !== undefined && !isNonNegInt(d.maxRetry))
      issues.push(`defaults.maxRetry: expected an integer >= 0, got ${String(d.maxRetry)}`);
    if (d.timeout !== undefined && !isNonNegInt(d.timeout))
      issues.push(`defaults.timeout: expected an integer >= 0 (ms), got ${String(d.timeout)}`);
    const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULTS.maxPayloadBytes;
    if (!isNonNegInt(maxPayloadBytes)) {
      issues.push(`maxPayloadBytes: expected an integer >= 0 (bytes; 0 = no limit), got ${String(maxPayloadBytes)}`);
    }
    if (issues.length) throw new InvalidOptionsError(issues, 'client options');
    this.maxPayloadBytes = maxPayloadBytes;
    this.namespace = namespace;
    this.defaults = {
      queue: d.queue ?? DEFAULTS.queue,
      maxRetry: d.maxRetry ?? DEFAULTS.maxRetry,
      timeoutMs: d.timeout ?? DEFAULTS.timeoutMs,
    };
    this.globalKeys = new GlobalKeys(namespace);
    this.events = options.events;
    this.conn = openConnection(options.connection);
  }

  /** The Redis client this client uses (shared with an Inspector or server of the same app). */
  get redis() {
    return this.conn.client;
  }

  /**
   * Enqueues one task of `type` with a JSON-serialisable payload.
   * @returns the task id and whether it was deduplicated (then nothing was written).
   * @throws InvalidPayloadError before anything is written when the payload is not JSON-serialisable,
   * JSON would change it (a Map, a Set, a typed array, a class instance without `toJSON()`), or its
   * JSON is over `maxPayloadBytes`. A `Date` is sent as its ISO string.
   * @throws InvalidOptionsError naming each bad option (unknown keys included).
   */
  async enqueue(type: string, payload?: unknown, options: EnqueueOptions = {}): Promise<EnqueueResult> {
    const p = this.prepare(type, payload, options);
    const client = this.conn.client;
    if (!this.knownQueues.has(p.keys.queue)) await this.registerQueue(p.keys.queue);
    let result: EnqueueResult;
    if (isPlain(p)) {
      await client.xadd(p.keys.stream, '*', ...entryFields(p.id, p.type, p.payload, encodeMeta(p.meta)));
      result = { id: p.id, queue: p.keys.queue, deduplicated: false, state: 'pending' };
    } else {
      result = toResult(p, await enqueueScript(client, p.keys, scriptArgs(p)));
    }
    this.emitEnqueued(type, result);
    return result;
  }

  /**
   * Enqueues many tasks in one pipelined round trip (validated all first: one bad task rejects the
   * whole call before anything is written). Results are in input order.
   * @throws InvalidPayloadError / InvalidOptionsError naming the index of the bad task.
   */
  async enqueueBulk(tasks: readonly BulkTask[]): Promise<EnqueueResult[]> {
    const prepared = tasks.map((t, i) => {
      try {
        return this.prepare(t.type, t.payload, t.options ?? {});
      } catch (err) {
        (err as Error).message = `enqueueBulk: task #${i}: ${(err as Error).message}`;
        throw err;
      }
    });
    const client = this.conn.client;
    const pipeline = client.pipeline();
    for (const q of new Set(prepared.map((p) => p.keys.queue))) {
      if (!this.knownQueues.has(q)) pipeline.sadd(this.globalKeys.queues, q);
    }
    const offset = pipeline.length;
    for (const p of prepared) {
      if (isPlain(p)) {
        pipeline.xadd(p.keys.stream, '*', ...entryFields(p.id, p.type, p.payload, encodeMeta(p.meta)));
      } else {
        pipeEnqueue(pipeline, p.keys, scriptArgs(p));
      }
    }
    const replies = (await pipeline.exec()) ?? [];
    for (const p of prepared) this.knownQueues.add(p.keys.queue);
    const results = prepared.map((p, i) => {
      const [err, reply] = replies[offset + i] ?? [new Error('no reply')];
      if (err) throw err;
      if (Array.isArray(reply)) return toResult(p, enqueueOutcome(reply));
      return { id: p.id, queue: p.keys.queue, deduplicated: false, state: 'pending' as const };
    });
    results.forEach((r, i) => this.emitEnqueued(prepared[i].type, r));
    return results;
  }

  /** Closes the connection if this client opened it. */
  async close(): Promise<void> {
    await closeConnection(this.conn);
  }

  /** @internal builds the keys of a queue (cached). */
  keysOf(queue: string): QueueKeys {
    let k = this.queueKeys.get(queue);
    if (!k) {
      k = new QueueKeys(this.namespace, queue);
      this.queueKeys.set(queue, k);
    }
    return k;
  }

  private async registerQueue(queue: string): Promise<void> {
    await this.conn.client.sadd(this.globalKeys.queues, queue);
    this.knownQueues.add(queue);
  }

  private emitEnqueued(type: string, r: EnqueueResult): void {
    if (this.events?.active) {
      this.events.emit({
        type: 'task.enqueued',
        queue: r.queue,
        taskId: r.id,
        taskType: type,
        state: r.state,
        deduplicated: r.deduplicated,
      });
    }
  }

  private prepare(type: string, payload: unknown, options: EnqueueOptions): Prepared {
    const issues: string[] = [];
    if (typeof type !== 'string' || type.length === 0 || type.length > 200) {
      issues.push(`type: expected a non-empty string of at most 200 characters, got ${JSON.stringify(type)}`);
    }
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionsError([`expected an object, got ${String(options)}`], 'enqueue options');
    for (const key of Object.keys(options)) if (!ENQUEUE_KEYS.has(key)) issues.push(`unknown option "${key}"`);
    const queue = options.queue ?? this.defaults.queue;
    if (!isValidName(queue)) issues.push(`queue: expected 1-200 characters of [A-Za-z0-9_.:-], got ${JSON.stringify(queue)}`);
    const maxRetry = options.maxRetry ?? this.defaults.maxRetry;
    if (!isNonNegInt(maxRetry)) issues.push(`maxRetry: expected an integer >= 0, got ${String(maxRetry)}`);
    const timeout = options.timeout ?? this.defaults.timeoutMs;
    if (!isNonNegInt(timeout)) issues.push(`timeout: expected an integer >= 0 (ms), got ${String(timeout)}`);
    let processAt = 0;
    let delayMs = 0;
    if (options.delay !== undefined && options.processAt !== undefined) issues.push('delay and processAt are mutually exclusive');
    if (options.delay !== undefined) {
      if (typeof options.delay !== 'number' || !Number.isFinite(options.delay) || options.delay < 0) {
        issues.push(`delay: expected a finite number >= 0 (ms), got ${String(options.delay)}`);
      } else delayMs = Math.ceil(options.delay);
    }
    if (options.processAt !== undefined) {
      const at = options.processAt instanceof Date ? options.processAt.getTime() : options.processAt;
      if (typeof at !== 'number' || !Number.isFinite(at))
        issues.push(`processAt: expected epoch ms or a valid Date, got ${String(options.processAt)}`);
      else if (at > Date.now()) processAt = Math.ceil(at);
    }
    const id = options.taskId ?? randomUUID();
    if (
      options.taskId !== undefined &&
      (typeof options.taskId !== 'string' || options.taskId.length === 0 || options.taskId.length > 200)
    ) {
      issues.push(`taskId: expected a non-empty string of at most 200 characters, got ${JSON.stringify(options.taskId)}`);
    }
    if (
      options.dedupKey !== undefined &&
      (typeof options.dedupKey !== 'string' || options.dedupKey.length === 0 || options.dedupKey.length > 400)
    ) {
      issues.push(`dedupKey: expected a non-empty string of at most 400 characters, got ${JSON.stringify(options.dedupKey)}`);
    }
    const dedupTtlMs = options.dedupTtl ?? DEFAULTS.dedupTtlMs;
    if (options.dedupTtl !== undefined) {
      if (options.dedupKey === undefined) issues.push('dedupTtl: given without dedupKey');
      if (!Number.isInteger(dedupTtlMs) || dedupTtlMs < 1)
        issues.push(`dedupTtl: expected an integer >= 1 (ms), got ${String(options.dedupTtl)}`);
    }
    if (issues.length) throw new InvalidOptionsError(issues, `enqueue options of task type ${JSON.stringify(type)}`);
    const encoded = encodePayload(type, payload === undefined ? null : payload, this.maxPayloadBytes);
    const meta = newMeta(maxRetry, timeout, Date.now());
    const unique = options.taskId !== undefined;
    if (unique) meta[META.uniqueId] = 1;
    return {
      keys: this.keysOf(queue),
      id,
      type,
      payload: encoded,
      meta,
      processAt,
      delayMs,
      dedupKey: options.dedupKey,
      dedupTtlMs,
      unique,
    };
  }
}

/** A plain enqueue (ready now, no dedup key, no explicit id) is a bare XADD. */
function isPlain(p: Prepared): boolean {
  return p.processAt === 0 && p.delayMs === 0 && p.dedupKey === undefined && !p.unique;
}

function scriptArgs(p: Prepared): EnqueueArgs {
  const { id, type, payload, processAt, delayMs, dedupKey, dedupTtlMs, unique } = p;
  return { id, type, payload, meta: encodeMeta(p.meta), processAtMs: processAt, delayMs, dedupKey, dedupTtlMs, unique };
}

function toResult(p: Prepared, o: EnqueueOutcome): EnqueueResult {
  const state = o.status === 'scheduled' ? 'scheduled' : 'pending';
  return { id: o.id, queue: p.keys.queue, deduplicated: o.status === 'deduplicated', state };
}
