import type { OnApplicationShutdown } from '@nestjs/common';
import { InvalidOptionsError } from '../../core/runtime/errors.js';
import { checkBulkTasks } from '../../core/queue/enqueue-options.js';
import { QueueClient, refuseClosedClientCalls, type BulkTask, type EnqueueOptions, type EnqueueResult } from '../../core/queue/client.js';
import { groupOf, plainPayload, queueOf, taskTypeOf, type PayloadClass } from '../payload-class.js';

/** One task of {@link ChronosClient.enqueueBulk}: the type may be a payload class. @publicApi */
export interface NestBulkTask extends Omit<BulkTask, 'type'> {
  /** The task type, or a payload class whose static `type` (else its name) is the task type. */
  type: string | PayloadClass;
}

/**
 * Enqueues tasks from any provider: inject `ChronosClient`. The engine's `QueueClient` (same methods,
 * same results) plus payload classes: `enqueue(new SendEmail(…))` or `enqueue(SendEmail, payload)`
 * derive the task type (and the default queue: the one its `@TaskHandler`s declare in this app, else
 * the class's static `queue`) from the class, so the
 * enqueue and the `@TaskHandler(SendEmail)` handler are typed end to end.
 * Closed at application shutdown (after the worker drained, so handlers can still enqueue).
 * @publicApi
 */
export class ChronosClient extends QueueClient implements OnApplicationShutdown {
  /** Task type of a payload class → the queue its `@TaskHandler`s declared (filled at discovery). */
  private readonly handlerQueues = new Map<string, string>();

  static {
    // its overrides are refused once closed before they look at their arguments, as the engine client's calls are
    refuseClosedClientCalls(ChronosClient.prototype);
  }

  /**
   * Enqueues a task whose type is a payload class, with a payload of that class's shape.
   * @throws InvalidPayloadError / InvalidOptionsError as the engine's `enqueue`.
   */
  override enqueue<T extends object>(type: PayloadClass<T>, payload: T, options?: EnqueueOptions): Promise<EnqueueResult>;
  /**
   * Enqueues an instance of a payload class: the type is the class's static `type` or name.
   * @throws InvalidOptionsError when `payload` is a plain object (pass the type first then).
   */
  override enqueue<T extends object>(payload: T, options?: EnqueueOptions): Promise<EnqueueResult>;
  /**
   * Enqueues one task of `type` with a JSON-serialisable payload. Options: `queue`, `delay` /
   * `processAt` (ms / epoch ms or Date), `maxRetry`, `timeout` (ms), `taskId`, `dedupKey`,
   * `dedupTtl` (ms). @returns `{ id, queue, deduplicated, state }`.
   * @throws InvalidPayloadError before anything is written when the payload is not JSON-serialisable.
   * @throws InvalidOptionsError naming each bad option (unknown keys included).
   */
  override enqueue(type: string, payload?: unknown, options?: EnqueueOptions): Promise<EnqueueResult>;
  override async enqueue(a: unknown, b?: unknown, c?: EnqueueOptions): Promise<EnqueueResult> {
    const t = normalize(a, b, c, 'enqueue', this.boundQueue);
    return super.enqueue(t.type, t.payload, t.options);
  }

  /**
   * Enqueues many tasks in one round trip (all validated first). `type` may be a payload class.
   * @throws InvalidPayloadError / InvalidOptionsError naming the index of the bad task.
   */
  override async enqueueBulk(tasks: readonly (BulkTask | NestBulkTask)[]): Promise<EnqueueResult[]> {
    checkBulkTasks(tasks);
    return super.enqueueBulk(tasks.map((t) => normalize(t.type, t.payload, t.options, 'enqueueBulk', this.boundQueue)));
  }

  /**
   * @internal The fan-out's dispatcher (discovery/fan-out.ts): enqueues the child tasks of a parent task,
   * each with the parent's payload in an envelope. Not held to `maxPayloadBytes`: the parent's payload was
   * accepted by its enqueue, and the envelope adds a few hundred bytes, so a payload near the limit would
   * make every dispatch fail, through all its retries, and no listener would ever run (trial 33).
   * @throws InvalidPayloadError / InvalidOptionsError as {@link enqueueBulk}.
   */
  enqueueFanOut(tasks: readonly BulkTask[]): Promise<EnqueueResult[]> {
    return this.enqueueBulkWithin({ ...this.enqueueContext, maxPayloadBytes: 0 }, tasks);
  }

  /**
   * @internal Discovery: the `@TaskHandler`s of payload classes of task type `type` declared `queue`
   * (their `queue` option, else the class's static `queue`), so an enqueue of the class goes there.
   */
  bindQueue(type: string, queue: string): void {
    this.handlerQueues.set(type, queue);
  }

  /** @internal The queue the handlers of a payload class's type declared in this app, if any. */
  readonly boundQueue = (type: string): string | undefined => this.handlerQueues.get(type);

  /** @internal Nest lifecycle: closes the connection if Chronos opened it. */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}

/**
 * @internal The task type, payload and options of an enqueue given a type, a payload class or an
 * instance of one. The queue of a payload class, unless the enqueue names one: the queue its handlers
 * declared in this app (`boundQueue`), else the class's static `queue`.
 */
export function normalize(
  a: unknown,
  b: unknown,
  c: EnqueueOptions | undefined,
  method: string,
  boundQueue?: (type: string) => string | undefined,
): { type: string; payload: unknown; options: EnqueueOptions } {
  if (typeof a === 'string') return { type: a, payload: b, options: c ?? {} };
  let cls: PayloadClass;
  let payload: unknown;
  let options: EnqueueOptions;
  if (typeof a === 'function') {
    cls = a as PayloadClass;
    payload = b;
    options = c ?? {};
  } else if (typeof a === 'object' && a !== null && !Array.isArray(a) && a.constructor !== Object && typeof a.constructor === 'function') {
    cls = a.constructor as PayloadClass;
    payload = a;
    options = (b as EnqueueOptions | undefined) ?? {};
  } else {
    throw new InvalidOptionsError(
      [
        `${method}: expected a task type (string), a payload class, or an instance of a payload class, got ${a === null ? 'null' : Array.isArray(a) ? 'an array' : typeof a === 'object' ? 'a plain object (pass the type first: enqueue(type, payload))' : typeof a}`,
      ],
      'enqueue arguments',
    );
  }
  const type = taskTypeOf(cls);
  if (!type) throw new InvalidOptionsError([`${method}: the payload class has no name and no static \`type\``], 'enqueue arguments');
  const queue = boundQueue?.(type) ?? queueOf(cls);
  const group = options.group === undefined ? groupOf(cls, payload) : undefined;
  payload = plainPayload(cls, payload);
  if ((queue !== undefined && options.queue === undefined) || group !== undefined) {
    options = { ...options };
    if (queue !== undefined && options.queue === undefined) options.queue = queue;
    if (group !== undefined) options.group = group as string; // checked by the engine: a bad value is named there
  }
  return { type, payload, options };
}
