import { DEFAULTS } from '../runtime/defaults.js';
import { EventBus } from '../runtime/events.js';
import { startProducerSpan, tracingAvailable, type ChronosSpan } from '../observability/tracing.js';
import { OptionProblems, orThrow, type Checked } from '../runtime/options.js';
import { CLIENT_KEY_HINTS, ENQUEUE_KEY_HINTS } from '../runtime/migrant-hints.js';
import { sampleRedisTime } from '../redis/commands/time.js';
import { databaseChecked } from '../redis/server-check.js';
import { openConnection, unavailableFor, type RedisConnection } from '../redis/connection.js';
import {
  CLIENT_CLOSED,
  closeConnection,
  ownerClosure,
  refuseWhenClosed,
  type Closure,
  type ConnectionHandle,
} from '../redis/owner-close.js';
import { GlobalKeys, QueueKeys } from '../redis/keys.js';
import { enqueueOutcome, enqueueScript, type EnqueueOutcome } from '../redis/commands/queue.js';
import { entryFields } from '../redis/protocol.js';
import { sendEnqueueGroup } from '../redis/commands/queue.js';
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
import {
  NO_OPTIONS,
  checkBulkTasks,
  prepareTask,
  type BulkTask,
  type EnqueueContext,
  type EnqueueOptions,
  type EnqueueResult,
} from './enqueue-options.js';

export type { BulkTask, DedupOptions, EnqueueOptions, EnqueueResult } from './enqueue-options.js';
import { getQueueLimits, markGrouped, setQueueLimits, type QueueLimits, type QueueLimitsUpdate } from './limits.js';

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

/** The client's options resolved: its namespace and the defaults of every enqueue. */
export interface ResolvedClientOptions {
  /** The key prefix. */
  namespace: string;
  /** Defaults of an enqueue: queue, retries, timeout of an attempt (ms). */
  defaults: { queue: string; maxRetry: number; timeoutMs: number };
  /** Largest payload accepted, UTF-8 bytes of its JSON; 0 = no limit. */
  maxPayloadBytes: number;
}

/** The keys of {@link ClientOptions} and of its `defaults`: another key (BullMQ's `defaultJobOptions`, `attempts`) is refused, not ignored. */
const CLIENT_KEYS: ReadonlySet<string> = new Set(['connection', 'namespace', 'defaults', 'events', 'tracing', 'maxPayloadBytes']);
const DEFAULTS_KEYS: ReadonlySet<string> = new Set(['queue', 'maxRetry', 'timeout']);

/** Validates client options without throwing: every problem, and the options with the defaults applied. */
export function checkClientOptions(options: ClientOptions): Checked<ResolvedClientOptions> {
  const p = new OptionProblems();
  p.unknownKeys(options, CLIENT_KEYS, '', CLIENT_KEY_HINTS);
  p.name('namespace', options.namespace);
  const d = options.defaults ?? {};
  if (typeof d !== 'object' || d === null) p.expected('defaults', 'an object of queue, maxRetry and timeout', d);
  else p.unknownKeys(d, DEFAULTS_KEYS, 'defaults', ENQUEUE_KEY_HINTS);
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
  /**
   * The defaults of an enqueue and the payload limit, for prepareTask (enqueue-options.ts); the testing
   * kit's client checks its enqueues with it, as the engine does.
   * @internal
   */
  protected readonly enqueueContext: EnqueueContext;
  private readonly events?: EventBus;
  private readonly tracing: boolean;

  /** @throws InvalidOptionsError listing every bad option (namespace, defaults). */
  constructor(options: ClientOptions = {}) {
    const { namespace, defaults, maxPayloadBytes } = orThrow(checkClientOptions(options), 'client options');
    this.namespace = namespace;
    this.enqueueContext = { defaults, maxPayloadBytes, keysOf: (queue) => this.keysOf(queue) };
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
   * @throws ChronosError (code `CONFIG`) before anything is written when the connection names a
   * database (`/db` of its URL) Redis cannot select, naming it (ioredis stays on database 0 then).
   * @throws ChronosStateError after {@link close} closed the connection this client opened.
   */
  async enqueue(type: string, payload?: unknown, options: EnqueueOptions = NO_OPTIONS): Promise<EnqueueResult> {
    const p = prepareTask(this.enqueueContext, type, payload, options);
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
   * @throws ChronosError (code `CONFIG`) as {@link enqueue} does, for a database Redis cannot select.
   * @throws ChronosStateError after {@link close} closed the connection this client opened.
   */
  async enqueueBulk(tasks: readonly BulkTask[]): Promise<EnqueueResult[]> {
    return this.enqueueBulkWithin(this.enqueueContext, tasks);
  }

  /**
   * {@link enqueueBulk} with the checks of `ctx` (its defaults and payload limit) instead of this client's.
   * @internal The Nest fan-out's dispatcher enqueues its child tasks without the payload limit (chronos.client.ts).
   */
  protected async enqueueBulkWithin(ctx: EnqueueContext, tasks: readonly BulkTask[]): Promise<EnqueueResult[]> {
    checkBulkTasks(tasks);
    const n = tasks.length;
    const prepared: Prepared[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const t = tasks[i];
      try {
        prepared[i] = prepareTask(ctx, t.type, t.payload, t.options ?? NO_OPTIONS);
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
      if (newQueues) await this.checkedDatabase();
      for (const q of new Set(prepared.filter((p) => p.group !== undefined).map((p) => p.keys.queue)))
        if (!this.groupedQueues.has(q)) await this.markGrouped(q);
      if (newQueues) await sampleRedisTime(this.conn.client); // as registerQueue does: the delays below count from Redis time
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

  /**
   * Sets a queue's fleet-wide limits (`null` clears one; see queue/limits.ts).
   * @throws InvalidOptionsError naming the value; ChronosStateError after {@link close} closed the connection this client opened;
   * ChronosError (code `CONFIG`) as {@link enqueue} does, for a database Redis cannot select.
   */
  async setQueueLimits(queue: string, limits: QueueLimitsUpdate): Promise<QueueLimits> {
    await this.checkedDatabase();
    return setQueueLimits(this.conn.client, this.namespace, queue, limits);
  }

  /** A queue's fleet-wide limits as stored (`{}` when none). @throws ChronosStateError after {@link close} closed the connection this client opened. */
  async getQueueLimits(queue: string): Promise<QueueLimits> {
    return getQueueLimits(this.conn.client, this.namespace, queue);
  }

  /**
   * Closes the connection if this client opened it; the client's methods then throw a
   * `ChronosStateError` (a connection passed in is left open, and the client keeps using it).
   */
  async close(): Promise<void> {
    await closeConnection(this.conn);
  }

  /**
   * How this client's calls are refused now (owner-close.ts): undefined while its connection is open;
   * after its own {@link close}, `this client was closed`; after another part of Chronos closed the
   * connection it opened and this client shares, `this client's connection was closed by its owner`.
   * The testing kit's client answers for its module's close.
   * @internal
   */
  closure(): Closure | undefined {
    return ownerClosure(this.conn, CLIENT_CLOSED, 'this client');
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

  /**
   * Adds `queue` to the set of known queues before this client's first write to it, and in the same
   * round trip samples Redis time (redis/commands/time.ts): a delayed task's due time in the due-time
   * index is counted from it. Before, a client that only enqueued never heard Redis's time, and one
   * whose clock ran ahead of it indexed its delayed tasks that much late (the workers woke that late).
   */
  private async registerQueue(queue: string): Promise<void> {
    await this.checkedDatabase();
    const client = this.conn.client;
    await Promise.all([client.sadd(this.globalKeys.queues, queue), sampleRedisTime(client)]);
    this.knownQueues.add(queue);
  }

  /** Before this client's first write: the connection is on the database its options name (server-check.ts databaseChecked). */
  private checkedDatabase(): Promise<void> {
    return databaseChecked(this.conn.client);
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
}

function toResult(p: Prepared, o: EnqueueOutcome): EnqueueResult {
  if (o.status === 'replaced') return { id: o.id, queue: p.keys.queue, deduplicated: true, replaced: true, state: 'scheduled' };
  if (o.status === 'deduplicated') return { id: o.id, queue: p.keys.queue, deduplicated: true, state: o.state! };
  return { id: o.id, queue: p.keys.queue, deduplicated: false, state: o.status === 'scheduled' ? 'scheduled' : 'pending' };
}

function endSpan(span: ChronosSpan, r: EnqueueResult): void {
  if (r.deduplicated) span.set({ 'messaging.message.id': r.id, 'chronos.deduplicated': true });
  span.end();
}

/** The calls of a client that need its connection: refused once it is closed (see `QueueClient.closure`). */
const CLIENT_CALLS: ReadonlySet<string> = new Set(['enqueue', 'enqueueBulk', 'enqueueFanOut', 'setQueueLimits', 'getQueueLimits']);

/**
 * @internal Guards the calls of a client class that need the connection (`proto`'s own overrides of
 * them included: a subclass calls this on its prototype too, so a closed client is refused before it
 * checks its arguments).
 */
export function refuseClosedClientCalls(proto: QueueClient, calls: ReadonlySet<string> = CLIENT_CALLS): void {
  refuseWhenClosed(
    proto,
    (c) => c.closure(),
    (name) => calls.has(name),
  );
}

refuseClosedClientCalls(QueueClient.prototype);
