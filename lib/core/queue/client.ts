import { newTaskId } from './task-id.js';
import { DEFAULTS } from '../runtime/defaults.js';
import { InvalidOptionsError } from '../runtime/errors.js';
import { EventBus } from '../runtime/events.js';
import { startProducerSpan, tracingAvailable, type ChronosSpan } from '../observability/tracing.js';
import { OptionProblems, orThrow, type Checked } from '../runtime/options.js';
import { closeConnection, openConnection, unavailableFor, type ConnectionHandle, type RedisConnection } from '../redis/connection.js';
import { GlobalKeys, QueueKeys, isGroupName } from '../redis/keys.js';
import { enqueueOutcome, enqueueScript, type EnqueueOutcome } from '../redis/commands/queue.js';
import { entryFields } from '../redis/protocol.js';
import { encodePayload } from './codec.js';
import { sendEnqueueGroup, type DedupMode } from '../redis/commands/queue.js';
import {
  dueAt,
  groupEntry,
  isGroupReady,
  isPlain,
  metaText,
  scriptArgs,
  writeDelayed,
  writeTasks,
  type Prepared,
  type Reply,
} from './enqueue-write.js';
import { engineTime } from '../runtime/time.js';
import { getQueueLimits, markGrouped, setQueueLimits, type QueueLimits, type QueueLimitsUpdate } from './limits.js';

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
   * first task's id with `deduplicated: true`, whatever that task's state. The same as
   * `dedup: { key, ttl }` (mode `first`); exclusive with `dedup`.
   */
  dedupKey?: string;
  /** Lifetime of the dedup key, ms. @defaultValue 3600000 (1 h) */
  dedupTtl?: number;
  /**
   * A keyed enqueue (exclusive with `dedupKey`/`dedupTtl`): `key` (≤ 400 characters) names the
   * task within the queue for `ttl` ms (default 3600000, 1 h), and `mode` says what a second enqueue
   * with the key does:
   * - `first` (default): nothing; it returns the first task's id with `deduplicated: true`;
   * - `debounce` (needs `delay`): while the key's task still waits for its time, it is replaced by
   *   this one (type, payload, options; its id stays) and starts `delay` ms after this enqueue
   *   (`deduplicated: true, replaced: true`); once it is due or has run, a new task is enqueued;
   * - `replace`: the same, but the start time stays as it was (the newest payload wins).
   * The key of `debounce` and `replace` lives `ttl` ms, and at least until its task is due. Not
   * with `taskId`.
   */
  dedup?: DedupOptions;
  /**
   * The task's group (e.g. a tenant id; 1 to 200 characters, no control characters). The tasks of a
   * queue's groups are served round-robin between the groups (a group with 10 tasks behind another
   * with 100,000 gets its turn within a few tasks), under the queue's per-group limits
   * (`setQueueLimits`: `groupConcurrency`, `groupRate`). Ungrouped tasks of the same queue go first.
   * The handler sees it as `task.group`.
   */
  group?: string;
  /**
   * `false`: no PRODUCER span and no traceparent for this task (its attempts start new traces).
   * Only matters with `@opentelemetry/api` and an SDK installed. @defaultValue true
   */
  trace?: boolean;
}

/** A keyed enqueue (enqueue option `dedup`). @publicApi */
export interface DedupOptions {
  /** The key (1 to 400 characters), within the queue. */
  key: string;
  /** What a second enqueue with the key does. @defaultValue 'first' */
  mode?: DedupMode;
  /** Lifetime of the key, ms (debounce/replace: at least until its task is due). @defaultValue 3600000 (1 h) */
  ttl?: number;
}

/** What an enqueue did. `deduplicated: true` means no new task was made and `id` is the existing task's. */
export interface EnqueueResult {
  /** The task's id: the `taskId` option, else a generated one (22 random base64url characters); the existing task's id when deduplicated. */
  id: string;
  /** The queue the task is in. */
  queue: string;
  /** True when a live task with the same `taskId`, or the same dedup key within its TTL, existed: no new task was made. */
  deduplicated: boolean;
  /** True when the dedup key's task (mode `debounce` or `replace`) was still waiting and this enqueue replaced it. */
  replaced?: boolean;
  /** Where the task is now: in the stream (`pending`) or waiting for its time (`scheduled`). */
  state: 'pending' | 'scheduled';
}

/** One task of {@link QueueClient.enqueueBulk}. */
export interface BulkTask {
  /** The task's type, which selects its handler. */
  type: string;
  /** The payload (JSON-serialisable). @defaultValue null */
  payload?: unknown;
  /** Options of this task's enqueue, over the client's `defaults`. */
  options?: EnqueueOptions;
}

/** Options of a {@link QueueClient}. @publicApi */
export interface ClientOptions {
  /** Redis to use. @defaultValue redis://127.0.0.1:6379 */
  connection?: RedisConnection;
  /** Key prefix isolating this app on a shared Redis. @defaultValue 'chronos' */
  namespace?: string;
  /** Defaults applied to every enqueue. */
  defaults?: {
    /** Queue of enqueues that name none. @defaultValue 'default' */
    queue?: string;
    /** Retries after a failure before a task is dead. @defaultValue 25 */
    maxRetry?: number;
    /** Timeout of one attempt, ms (0 = none). @defaultValue 1800000 (30 min) */
    timeout?: number;
  };
  /** Where `task.enqueued` events go (shared with the server and scheduler of one app). */
  events?: EventBus;
  /**
   * `false`: this client makes no PRODUCER spans (see `configureTracing` for the process-wide
   * switch). Only matters with `@opentelemetry/api` and an SDK installed. @defaultValue true
   */
  tracing?: boolean;
  /**
   * Largest payload an enqueue accepts, in UTF-8 bytes of its JSON text; a bigger one is an
   * `InvalidPayloadError` naming its size and this limit, before anything is written. 0 = no limit.
   * @defaultValue 1048576 (1 MiB)
   */
  maxPayloadBytes?: number;
}

const ENQUEUE_KEYS = new Set([
  'queue',
  'delay',
  'processAt',
  'maxRetry',
  'timeout',
  'taskId',
  'dedupKey',
  'dedupTtl',
  'dedup',
  'trace',
  'group',
]);
const DEDUP_KEYS = new Set(['key', 'mode', 'ttl']);
const DEDUP_MODES: readonly DedupMode[] = ['first', 'debounce', 'replace'];

/** The options of an enqueue that gives none (shared: never written to). */
const NO_OPTIONS: EnqueueOptions = Object.freeze({});

/** The client's options resolved: its namespace and the defaults of every enqueue. */
export interface ResolvedClientOptions {
  /** The key prefix. */
  namespace: string;
  /** Defaults of an enqueue: queue, retries, timeout of an attempt (ms). */
  defaults: { queue: string; maxRetry: number; timeoutMs: number };
  /** Largest payload accepted, UTF-8 bytes of its JSON; 0 = no limit. */
  maxPayloadBytes: number;
}

/** Validates client options without throwing: every problem, and the options with the defaults applied. */
export function checkClientOptions(options: ClientOptions): Checked<ResolvedClientOptions> {
  const p = new OptionProblems();
  p.name('namespace', options.namespace);
  const d = options.defaults ?? {};
  p.name('defaults.queue', d.queue);
  p.int('defaults.maxRetry', d.maxRetry, 0);
  p.int('defaults.timeout', d.timeout, 0, 'ms');
  p.bool('tracing', options.tracing);
  p.int('maxPayloadBytes', options.maxPayloadBytes, 0);
  return {
    value: {
      maxPayloadBytes: options.maxPayloadBytes ?? DEFAULTS.maxPayloadBytes,
      namespace: options.namespace ?? DEFAULTS.namespace,
      defaults: { queue: d.queue ?? DEFAULTS.queue, maxRetry: d.maxRetry ?? DEFAULTS.maxRetry, timeoutMs: d.timeout ?? DEFAULTS.timeoutMs },
    },
    problems: p.list,
  };
}

/**
 * Enqueues tasks. Any number of clients, in any process, may enqueue to the same queues.
 * A plain enqueue is one `XADD` (one round trip); with `delay`, `processAt`, `dedupKey` or
 * `taskId` it is one Lua script (`enqueue.lua`), atomic. In a NestJS app, inject `ChronosClient`
 * from `@chronos/nest` instead (this client plus payload classes).
 * @publicApi
 */
export class QueueClient {
  /** Key prefix of the app in Redis (`namespace` option, default `chronos`). */
  readonly namespace: string;
  private readonly conn: ConnectionHandle;
  private readonly globalKeys: GlobalKeys;
  private readonly queueKeys = new Map<string, QueueKeys>();
  private readonly knownQueues = new Set<string>();
  /** Queues this client marked as grouped (their fetch goes through fetch-limited.lua; queue/limits.ts markGrouped). */
  private readonly groupedQueues = new Set<string>();
  private readonly defaults: { queue: string; maxRetry: number; timeoutMs: number };
  private readonly events?: EventBus;
  private readonly tracing: boolean;
  private readonly maxPayloadBytes: number;

  /** @throws InvalidOptionsError listing every bad option (namespace, defaults). */
  constructor(options: ClientOptions = {}) {
    const { namespace, defaults, maxPayloadBytes } = orThrow(checkClientOptions(options), 'client options');
    this.namespace = namespace;
    this.defaults = defaults;
    this.maxPayloadBytes = maxPayloadBytes;
    this.globalKeys = new GlobalKeys(namespace);
    this.events = options.events;
    this.tracing = options.tracing ?? true;
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
   * @throws RedisUnavailableError naming the queue and the client's error when Redis did not serve the
   * queue within the client's retry bound (on Redis Cluster, a failover longer than `CLUSTER_FAILOVER_BOUND_MS`).
   */
  async enqueue(type: string, payload?: unknown, options: EnqueueOptions = NO_OPTIONS): Promise<EnqueueResult> {
    const p = this.prepare(type, payload, options);
    const client = this.conn.client;
    const span = this.startSpan(p, options);
    let result: EnqueueResult;
    try {
      if (!this.knownQueues.has(p.keys.queue)) await this.registerQueue(p.keys.queue);
      if (p.group !== undefined && !this.groupedQueues.has(p.keys.queue)) await this.markGrouped(p.keys.queue);
      if (isPlain(p)) {
        await client.xadd(p.keys.stream, '*', ...entryFields(p.id, p.type, p.payload, metaText(p)));
        result = { id: p.id, queue: p.keys.queue, deduplicated: false, state: 'pending' };
      } else if (isGroupReady(p)) {
        await sendEnqueueGroup(client, p.keys, [groupEntry(p)]);
        result = { id: p.id, queue: p.keys.queue, deduplicated: false, state: 'pending' };
      } else if (dueAt(p) === undefined) {
        result = toResult(p, await enqueueScript(client, p.keys, scriptArgs(p)));
      } else {
        result = toResult(p, await writeDelayed(client, this.globalKeys.due, p));
      }
    } catch (err) {
      const e = unavailableFor(p.keys.queue, err);
      span?.end(e);
      throw e;
    }
    if (span) endSpan(span, result);
    this.emitEnqueued(type, result);
    return result;
  }

  /**
   * Enqueues many tasks in one round trip, the calls written back to back (validated all first: one
   * bad task rejects the whole call before anything is written). Ready tasks of one queue go 100 per
   * `enqueue-bulk.lua` call (each appends its tasks as one enqueue each would); tasks with a delay,
   * a dedup key or an id each go as their `enqueue.lua` call. Results are in input order.
   * @throws InvalidPayloadError / InvalidOptionsError naming the index of the bad task.
   * @throws RedisUnavailableError as {@link enqueue} does (naming the queues of the call when the whole call failed).
   */
  async enqueueBulk(tasks: readonly BulkTask[]): Promise<EnqueueResult[]> {
    const n = tasks.length;
    const prepared: Prepared[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const t = tasks[i];
      try {
        prepared[i] = this.prepare(t.type, t.payload, t.options ?? NO_OPTIONS);
      } catch (err) {
        (err as Error).message = `enqueueBulk: task #${i}: ${(err as Error).message}`;
        throw err;
      }
    }
    let spans: (ChronosSpan | undefined)[] | undefined;
    if (this.tracing && tracingAvailable()) {
      spans = new Array(n);
      for (let i = 0; i < n; i++) spans[i] = this.startSpan(prepared[i], tasks[i].options ?? NO_OPTIONS);
    }
    let newQueues: Set<string> | undefined;
    for (let i = 0; i < n; i++) {
      const q = prepared[i].keys.queue;
      if (!this.knownQueues.has(q)) (newQueues ??= new Set()).add(q);
    }
    let replies: Reply[];
    let replyOf: number[];
    try {
      for (const q of new Set(prepared.filter((p) => p.group !== undefined).map((p) => p.keys.queue)))
        if (!this.groupedQueues.has(q)) await this.markGrouped(q);
      ({ replies, replyOf } = await writeTasks(this.conn.client, this.globalKeys, prepared, newQueues));
    } catch (err) {
      const e = unavailableFor([...new Set(prepared.map((p) => p.keys.queue))].join(','), err);
      if (spans) for (const s of spans) s?.end(e);
      throw e;
    }
    if (newQueues) for (const q of newQueues) this.knownQueues.add(q);
    const results: EnqueueResult[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const p = prepared[i];
      const [err, reply] = replies[replyOf[i]] ?? [new Error('no reply')];
      if (err) {
        const e = unavailableFor(p.keys.queue, err);
        if (spans) for (const s of spans.slice(i)) s?.end(e);
        throw e;
      }
      const r: EnqueueResult = Array.isArray(reply)
        ? toResult(p, enqueueOutcome(reply))
        : { id: p.id, queue: p.keys.queue, deduplicated: false, state: 'pending' };
      if (spans?.[i]) endSpan(spans[i]!, r);
      results[i] = r;
    }
    if (this.events?.active) for (let i = 0; i < n; i++) this.emitEnqueued(prepared[i].type, results[i]);
    return results;
  }

  /** Sets a queue's fleet-wide limits (`null` clears one; see queue/limits.ts); @throws InvalidOptionsError naming the value. */
  setQueueLimits(queue: string, limits: QueueLimitsUpdate): Promise<QueueLimits> {
    return setQueueLimits(this.conn.client, this.namespace, queue, limits);
  }

  /** A queue's fleet-wide limits as stored (`{}` when none). */
  getQueueLimits(queue: string): Promise<QueueLimits> {
    return getQueueLimits(this.conn.client, this.namespace, queue);
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

  /** Marks `queue` as grouped before its first grouped task from this client (queue/limits.ts markGrouped). */
  private async markGrouped(queue: string): Promise<void> {
    await markGrouped(this.conn.client, this.namespace, queue);
    this.groupedQueues.add(queue);
  }

  private async registerQueue(queue: string): Promise<void> {
    await this.conn.client.sadd(this.globalKeys.queues, queue);
    this.knownQueues.add(queue);
  }

  /** The PRODUCER span of an enqueue (its traceparent goes into the task's meta), when tracing is on. */
  private startSpan(p: Prepared, options: EnqueueOptions): ChronosSpan | undefined {
    if (!this.tracing || options.trace === false || !tracingAvailable()) return undefined;
    const span = startProducerSpan(p.keys.queue, p.type, p.id);
    if (span?.traceparent) p.traceparent = span.traceparent;
    return span;
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
    if (isIdText(type, 200) && (options === NO_OPTIONS || isEmptyObject(options))) {
      // no options: the defaults, nothing to check but the type (checked) and the payload
      const { queue, maxRetry, timeoutMs } = this.defaults;
      return {
        keys: this.keysOf(queue),
        id: newTaskId(),
        type,
        payload: encodePayload(type, payload === undefined ? null : payload, this.maxPayloadBytes),
        maxRetry,
        timeoutMs,
        enqueuedAt: engineTime.now(),
        processAt: 0,
        delayMs: 0,
        dedupTtlMs: DEFAULTS.dedupTtlMs,
        unique: false,
      };
    }
    return this.prepareWith(type, payload, options);
  }

  /** prepare() for an enqueue with options: every option checked, every problem named. */
  private prepareWith(type: string, payload: unknown, options: EnqueueOptions): Prepared {
    const p = new OptionProblems();
    if (!isIdText(type, 200)) p.expected('type', 'a non-empty string of at most 200 characters', type);
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionsError([`expected an object, got ${String(options)}`], 'enqueue options');
    p.unknownKeys(options, ENQUEUE_KEYS);
    p.name('queue', options.queue);
    p.int('maxRetry', options.maxRetry, 0);
    p.int('timeout', options.timeout, 0, 'ms');
    const queue = options.queue ?? this.defaults.queue;
    const maxRetry = options.maxRetry ?? this.defaults.maxRetry;
    const timeout = options.timeout ?? this.defaults.timeoutMs;
    let processAt = 0;
    let delayMs = 0;
    if (options.delay !== undefined && options.processAt !== undefined) p.add('', 'delay and processAt are mutually exclusive');
    if (options.delay !== undefined) {
      if (typeof options.delay !== 'number' || !Number.isFinite(options.delay) || options.delay < 0) {
        p.expected('delay', 'a finite number >= 0 (ms)', options.delay);
      } else delayMs = Math.ceil(options.delay);
    }
    if (options.processAt !== undefined) {
      const at = options.processAt instanceof Date ? options.processAt.getTime() : options.processAt;
      if (typeof at !== 'number' || !Number.isFinite(at)) p.expected('processAt', 'epoch ms or a valid Date', options.processAt);
      else if (at > engineTime.now()) processAt = Math.ceil(at);
    }
    const id = options.taskId ?? newTaskId();
    if (options.taskId !== undefined && !isIdText(options.taskId, 200)) {
      p.expected('taskId', 'a non-empty string of at most 200 characters', options.taskId);
    }
    if (options.dedupKey !== undefined && !isIdText(options.dedupKey, 400)) {
      p.expected('dedupKey', 'a non-empty string of at most 400 characters', options.dedupKey);
    }
    p.bool('trace', options.trace);
    if (options.group !== undefined && !isGroupName(options.group))
      p.expected('group', 'a string of 1 to 200 characters without control characters', options.group);
    let dedupTtlMs = options.dedupTtl ?? DEFAULTS.dedupTtlMs;
    if (options.dedupTtl !== undefined && options.dedupKey === undefined) p.add('dedupTtl', 'given without dedupKey');
    p.int('dedupTtl', options.dedupTtl, 1, 'ms');
    let dedupKey = options.dedupKey;
    let dedupMode: DedupMode | undefined;
    const d = options.dedup;
    if (d !== undefined) {
      if (options.dedupKey !== undefined || options.dedupTtl !== undefined) p.add('dedup', 'exclusive with dedupKey and dedupTtl');
      if (typeof d !== 'object' || d === null) p.expected('dedup', '{ key, mode?, ttl? }', d);
      else {
        p.unknownKeys(d, DEDUP_KEYS, 'dedup');
        if (!isIdText(d.key, 400)) p.expected('dedup.key', 'a non-empty string of at most 400 characters', d.key);
        if (d.mode !== undefined && !DEDUP_MODES.includes(d.mode)) p.expected('dedup.mode', `one of ${DEDUP_MODES.join(', ')}`, d.mode);
        p.int('dedup.ttl', d.ttl, 1, 'ms');
        if (d.mode === 'debounce' && !(delayMs > 0)) p.add('dedup.mode', 'debounce needs a delay (its window, ms)');
        if ((d.mode === 'debounce' || d.mode === 'replace') && options.taskId !== undefined)
          p.add('dedup.mode', `${d.mode} is not given with taskId (the key's task keeps its id)`);
        dedupKey = d.key;
        dedupTtlMs = d.ttl ?? DEFAULTS.dedupTtlMs;
        if (d.mode !== undefined && d.mode !== 'first') dedupMode = d.mode;
      }
    }
    p.throwIfAny(`enqueue options of task type ${JSON.stringify(type)}`);
    const encoded = encodePayload(type, payload === undefined ? null : payload, this.maxPayloadBytes);
    const unique = options.taskId !== undefined;
    return {
      keys: this.keysOf(queue),
      id,
      type,
      payload: encoded,
      maxRetry,
      timeoutMs: timeout,
      enqueuedAt: engineTime.now(),
      processAt,
      delayMs,
      dedupKey,
      dedupTtlMs,
      dedupMode,
      unique,
      group: options.group,
    };
  }
}

/** An object with no enumerable key (what an enqueue without options passes). */
function isEmptyObject(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  for (const _ in v) return false;
  return true;
}

/** A non-empty string of at most `max` characters (a task type, a task id, a dedup key). */
function isIdText(v: unknown, max: number): boolean {
  return typeof v === 'string' && v.length > 0 && v.length <= max;
}

function toResult(p: Prepared, o: EnqueueOutcome): EnqueueResult {
  if (o.status === 'replaced') return { id: o.id, queue: p.keys.queue, deduplicated: true, replaced: true, state: 'scheduled' };
  const state = o.status === 'scheduled' ? 'scheduled' : 'pending';
  return { id: o.id, queue: p.keys.queue, deduplicated: o.status === 'deduplicated', state };
}

function endSpan(span: ChronosSpan, r: EnqueueResult): void {
  if (r.deduplicated) span.set({ 'messaging.message.id': r.id, 'chronos.deduplicated': true });
  span.end();
}
