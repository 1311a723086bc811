import { Redis } from 'ioredis';
import { refuseClosedClientCalls, type BulkTask, type EnqueueOptions, type EnqueueResult } from '../../core/queue/client.js';
import { CLIENT_CLOSED, type Closure } from '../../core/redis/owner-close.js';
import type { Prepared } from '../../core/queue/enqueue-write.js';
import { checkBulkTasks, prepareTask, type EnqueueContext } from '../../core/queue/enqueue-options.js';
import { ChronosClient, normalize, type NestBulkTask } from '../services/chronos.client.js';
import type { QueueLimits, QueueLimitsUpdate } from '../../core/queue/limits.js';
import { ChronosTestingError } from './testing-error.js';
import type { NewTask } from './testing-store.js';

/** Where the kit's client hands its tasks (the ChronosTesting service). @internal */
export interface TaskSink {
  /** The virtual clock, epoch ms. */
  now(): number;
  /** Records the tasks (and, inline, runs them) in order. */
  accept(tasks: NewTask[]): Promise<EnqueueResult[]>;
}

/**
 * The `ChronosClient` of the testing module (manual and inline modes): every enqueue is checked
 * exactly as the engine checks it (type, options, payload JSON and size, payload classes) and
 * handed to the kit instead of Redis. Its Redis client is never connected.
 * @internal
 */
export class TestingChronosClient extends ChronosClient {
  private sink?: TaskSink;
  /** The base client's Redis: never connected (no method of the kit's client reaches it), disconnected at close. */
  private readonly offline: Redis;
  /** Set at the module's close: the enqueues are refused then, with the engine client's error. */
  private closedByKit = false;

  static {
    // the enqueues it overrides are refused after the close too, before their argument checks (as the engine client's)
    refuseClosedClientCalls(TestingChronosClient.prototype, new Set(['enqueue', 'enqueueBulk', 'enqueueFanOut']));
  }

  constructor(options: ConstructorParameters<typeof ChronosClient>[0] = {}) {
    const offline = new Redis({ lazyConnect: true, enableOfflineQueue: false });
    super({ ...options, connection: offline });
    this.offline = offline;
  }

  /** Not in the kit's manual and inline modes (nothing talks to Redis). @throws ChronosTestingError */
  override get redis(): never {
    throw redisOnly('redis');
  }

  /** Not in the kit's manual and inline modes (queue limits live in Redis). @throws ChronosTestingError */
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the engine client's signature
  override setQueueLimits(queue: string, limits: QueueLimitsUpdate): Promise<QueueLimits> {
    return Promise.reject(redisOnly('setQueueLimits'));
  }

  /** Not in the kit's manual and inline modes (queue limits live in Redis). @throws ChronosTestingError */
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the engine client's signature
  override getQueueLimits(queue: string): Promise<QueueLimits> {
    return Promise.reject(redisOnly('getQueueLimits'));
  }

  /** @internal Connects the client to the kit. */
  attach(sink: TaskSink): void {
    this.sink = sink;
  }

  override enqueue(...args: any[]): Promise<EnqueueResult> {
    return this.enqueueAll([normalize(args[0], args[1], args[2] as EnqueueOptions | undefined, 'enqueue', this.boundQueue)]).then(
      (r) => r[0],
    );
  }

  override async enqueueBulk(tasks: readonly (BulkTask | NestBulkTask)[]): Promise<EnqueueResult[]> {
    checkBulkTasks(tasks);
    const all = tasks.map((t, i) => {
      try {
        return normalize(t.type, t.payload, t.options, 'enqueueBulk', this.boundQueue);
      } catch (err) {
        (err as Error).message = `enqueueBulk: task #${i}: ${(err as Error).message}`;
        throw err;
      }
    });
    return this.enqueueAll(all, 'enqueueBulk');
  }

  /** @internal As the engine's: a fan-out's child tasks, not held to `maxPayloadBytes` (ChronosClient.enqueueFanOut). */
  override async enqueueFanOut(tasks: readonly BulkTask[]): Promise<EnqueueResult[]> {
    const sink = this.sink;
    if (!sink) throw new Error('ChronosTestingModule: the client is not attached to the kit (was the module initialised?)');
    const all = tasks.map((t) => ({ type: t.type, payload: t.payload, options: t.options ?? {} }));
    return sink.accept(this.prepareAll(all, sink.now(), 'enqueueBulk', { ...this.enqueueContext, maxPayloadBytes: 0 }));
  }

  /** @internal Closed at the module's close (its Redis is never connected, so never closed by its owner). */
  override closure(): Closure | undefined {
    return this.closedByKit ? CLIENT_CLOSED : undefined;
  }

  override async close(): Promise<void> {
    this.closedByKit = true;
    this.offline.disconnect(); // never connected: this only makes sure no socket outlives the module
  }

  private async enqueueAll(tasks: { type: string; payload: unknown; options: EnqueueOptions }[], bulk?: string): Promise<EnqueueResult[]> {
    const sink = this.sink;
    if (!sink) throw new Error('ChronosTestingModule: the client is not attached to the kit (was the module initialised?)');
    return sink.accept(this.prepareAll(tasks, sink.now(), bulk));
  }

  /**
   * @internal The kit's tasks of an enqueue (type or payload class, payload, options), checked as an enqueue checks them.
   * @throws InvalidPayloadError / InvalidOptionsError as `enqueue`.
   */
  build(tasks: { type: unknown; payload: unknown; options?: EnqueueOptions }[]): NewTask[] {
    const all = tasks.map((t) => normalize(t.type, t.payload, t.options, 'perform', this.boundQueue));
    return this.prepareAll(all, this.sink!.now());
  }

  private prepareAll(
    tasks: { type: string; payload: unknown; options: EnqueueOptions }[],
    now: number,
    bulk?: string,
    ctx: EnqueueContext = this.enqueueContext,
  ): NewTask[] {
    return tasks.map((t, i) => {
      try {
        return toNewTask(prepareTask(ctx, t.type, t.payload, t.options), t.options, now);
      } catch (err) {
        if (bulk) (err as Error).message = `${bulk}: task #${i}: ${(err as Error).message}`;
        throw err;
      }
    });
  }
}

function toNewTask(p: Prepared, o: EnqueueOptions, now: number): NewTask {
  let runAt = now;
  if (o.delay !== undefined) runAt = now + Math.ceil(o.delay);
  else if (o.processAt !== undefined) runAt = Math.max(now, Math.ceil(o.processAt instanceof Date ? o.processAt.getTime() : o.processAt));
  const options: NewTask['options'] = { maxRetry: p.maxRetry, timeout: p.timeoutMs };
  if (p.unique) options.taskId = p.id;
  if (p.dedupKey !== undefined) Object.assign(options, { dedupKey: p.dedupKey, dedupTtl: p.dedupTtlMs });
  if (p.dedupMode !== undefined && p.dedupMode !== 'first') options.dedupMode = p.dedupMode;
  return {
    id: p.id,
    type: p.type,
    payload: JSON.parse(p.payload) as unknown,
    queue: p.keys.queue,
    options,
    enqueuedAt: now,
    runAt,
    ...(p.group !== undefined ? { group: p.group } : {}),
  };
}

function redisOnly(member: string): ChronosTestingError {
  return new ChronosTestingError(
    `ChronosClient.${member} needs Redis: it is not in the testing kit's modes 'manual' and 'inline' (use ChronosTestingModule.forRoot({ mode: 'redis' }))`,
  );
}
