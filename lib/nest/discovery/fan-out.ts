import { createHash } from 'node:crypto';
import { taskWith, type BackoffFn, type Task } from '../../core/queue/task.js';
import { FAN_OUT_DEDUP_TTL_MS, FAN_OUT_SEPARATOR } from '../chronos.constants.js';
import type { PayloadClass } from '../payload-class.js';
import { rehydrate } from '../payload-class.js';
import type { ChronosClient } from '../services/chronos.client.js';

/** One handler of a task type: a decorated method bound to its instance. @internal */
export interface Listener {
  /** The task type it handles. */
  type: string;
  /** Stable listener name (`Class.method` or the `name` option). */
  name: string;
  /** `Class#method`, for messages. */
  source: string;
  /** Calls the method with the task view. */
  invoke: (task: Task) => unknown;
  payloadClass?: PayloadClass;
  /** The queue the handler declared (its `queue` option, else its payload class's static `queue`). */
  queue?: string;
  backoff?: BackoffFn;
}

/** Payload of a fan-out child task: the parent's payload and where it came from. */
export interface FanOutEnvelope {
  /** The parent task's payload, as enqueued (each listener receives it as its task's payload). */
  payload: unknown;
  /** The parent task the child was fanned out from. */
  parent: {
    /** The parent task's id (the child's id is `<parentId>#<listener>`). */
    id: string;
    /** The parent's task type (the type the listeners are declared for). */
    type: string;
    /** For a trigger's task: the schedule that fired the parent. */
    schedule?: string;
    /** For a trigger's task: the parent's trigger instant, epoch ms. */
    triggerAt?: number;
  };
}

/** Task type of a listener's child tasks: `<type>#<listener>`. */
export function childType(type: string, listener: string): string {
  return `${type}${FAN_OUT_SEPARATOR}${listener}`;
}

/**
 * Id (and dedup key) of a listener's child task: `<parentId>#<listener>`, or a SHA-1 of it when
 * that is longer than the 200 characters task ids may have.
 */
export function childId(parentId: string, listener: string): string {
  const id = `${parentId}${FAN_OUT_SEPARATOR}${listener}`;
  return id.length <= 200 ? id : `fanout-${createHash('sha1').update(id).digest('hex')}`;
}

/** The handler of a listener that has its type to itself: the method, with the payload class restored. */
export function directHandler(l: Listener): (task: Task) => unknown {
  return (task) => l.invoke(l.payloadClass ? taskWith(task, { payload: rehydrate(l.payloadClass, task.payload) }) : task);
}

/**
 * The dispatcher of a type with several listeners: enqueues one child task per listener, in the
 * parent's queue with the parent's retry budget and timeout, each with id and dedup key
 * `<parentId>#<listener>` — so a retried dispatcher (same parent id) creates no second child
 * while the first is live (unique id) or within 24 h of it (dedup key). The children are not held to
 * `maxPayloadBytes` (ChronosClient.enqueueFanOut): their payload is the parent's, accepted at its enqueue.
 */
export function dispatcher(client: ChronosClient, type: string, listeners: Listener[]): (task: Task) => Promise<void> {
  return async (task) => {
    const envelope: FanOutEnvelope = {
      payload: task.payload,
      parent: { id: task.id, type, ...(task.schedule !== undefined ? { schedule: task.schedule, triggerAt: task.triggerAt } : {}) },
    };
    await client.enqueueFanOut(
      listeners.map((l) => {
        const id = childId(task.id, l.name);
        return {
          type: childType(type, l.name),
          payload: envelope,
          options: {
            queue: task.queue,
            maxRetry: task.maxRetry,
            timeout: task.timeoutMs,
            taskId: id,
            dedupKey: id,
            dedupTtl: FAN_OUT_DEDUP_TTL_MS,
            ...(task.group !== undefined ? { group: task.group } : {}),
          },
        };
      }),
    );
  };
}

/**
 * The handler of one listener's child tasks: unwraps the envelope and calls the method with a
 * task that looks like the parent's (type, payload, schedule, trigger) but has the child's id,
 * queue, retries and signal.
 */
export function childHandler(l: Listener): (task: Task) => unknown {
  return (task) => {
    const env = task.payload as FanOutEnvelope | null;
    const parent = env?.parent;
    return l.invoke(
      taskWith(task, {
        type: parent?.type ?? l.type,
        payload: rehydrate(l.payloadClass, env?.payload ?? null),
        schedule: parent?.schedule,
        triggerAt: parent?.triggerAt,
        group: task.group,
      }),
    );
  };
}
