import type { BackoffFn, Task } from '../../core/queue/task.js';
import { TASK_HANDLER_METADATA } from '../chronos.constants.js';
import type { PayloadClass } from '../payload-class.js';
import { appendMetadata } from './append-metadata.js';

/**
 * Options of `@TaskHandler`.
 * @publicApi
 */
export interface TaskHandlerOptions {
  /**
   * Listener name, stable across processes: with several handlers of one type (fan-out) each
   * gets its own task, with type `<type>#<name>` and id `<parentId>#<name>`.
   * @defaultValue `'ClassName.methodName'`
   */
  name?: string;
  /**
   * A queue where tasks of this type are expected: the worker serves it when the module's
   * `queues` is not set. With a payload class, it is also where `ChronosClient.enqueue` of the
   * class sends its tasks in this app when the enqueue names no `queue` (before the class's static
   * `queue`). Handlers of one class declaring different queues fail discovery (ChronosDiscoveryError).
   */
  queue?: string;
  /** Retry delay of this handler's failures, ms from the failed attempts so far. @defaultValue the module's `backoff` */
  backoff?: BackoffFn;
}

/** What `@TaskHandler` records on a method. @internal */
export interface TaskHandlerMetadata {
  type: string | PayloadClass;
  options: TaskHandlerOptions;
}

/**
 * A method decorator that checks the method accepts a `Task<T>`.
 * @typeParam F the decorated method's type: its first parameter must accept a `Task<T>`.
 */
export type TaskMethodDecorator<T> = <F extends (task: Task<T>, ...rest: any[]) => unknown>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<F>,
) => void;

/**
 * Makes the method the handler of tasks of `type`, enqueued by code (`ChronosClient.enqueue`)
 * from any instance. Resolve = done; throw = retried with backoff until `maxRetry`, then dead
 * (throw `NonRetryableError` to go to dead at once). `type` may be a payload class: its static
 * `type` (or its name) is the type, the handler receives `Task<ThatClass>` with the payload
 * turned back into an instance of the class, and `ChronosClient.enqueue(new ThatClass(…))` is
 * typed end to end.
 *
 * Several `@TaskHandler`s of one type (in any providers) **fan out**: each listener gets its own
 * task with its own retries (see docs/nest.md).
 * @publicApi
 */
export function TaskHandler<T extends object>(type: PayloadClass<T>, options?: TaskHandlerOptions): TaskMethodDecorator<T>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a string type carries no payload type: the caller may name it
export function TaskHandler<T = any>(type: string, options?: TaskHandlerOptions): TaskMethodDecorator<T>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the implementation signature serves both overloads
export function TaskHandler(type: string | PayloadClass, options: TaskHandlerOptions = {}): TaskMethodDecorator<any> {
  return (_target, _key, descriptor) => {
    appendMetadata(TASK_HANDLER_METADATA, { type, options } satisfies TaskHandlerMetadata, descriptor);
  };
}
