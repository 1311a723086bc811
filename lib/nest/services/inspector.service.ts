import { Inject, Injectable } from '@nestjs/common';
import { Observable } from 'rxjs';
import { EventBus, type ChronosEvent } from '../../core/events.js';
import {
  Inspector,
  type InstanceInfo,
  type LeaderInfo,
  type QueueInfo,
  type ScheduleInfo,
  type ServerInfo,
  type TaskInfo,
  type TaskState,
} from '../../core/inspector/inspector.js';
import { CHRONOS_EVENT_BUS, CHRONOS_OPTIONS } from '../chronos.constants.js';
import type { ResolvedChronosOptions } from '../options/resolve-options.js';
import { ChronosClient } from './chronos.client.js';

/** Everything at a glance: what `InspectorService.overview()` returns. @publicApi */
export interface ChronosOverview {
  /** The current leader (instance, fencing term, since — epoch ms — and remaining lease ms), or null. */
  leader: LeaderInfo | null;
  /** Every schedule with spec, time zone, next triggers, last fire, paused and liveness. */
  schedules: ScheduleInfo[];
  /** Every known queue with its counts by state. */
  queues: QueueInfo[];
  /** Live worker servers (from their heartbeats). */
  servers: ServerInfo[];
}

/**
 * Read side of Chronos for the whole namespace (every instance, not only this one), plus
 * `events$`, this instance's lifecycle events. Any instance; reads go to Redis on each call.
 * @publicApi
 */
@Injectable()
export class InspectorService {
  /**
   * Lifecycle events of **this instance** as an rxjs Observable: `task.enqueued` (by this
   * instance's client), `task.started/succeeded/failed/retried/dead/requeued` (run here),
   * `schedule.fired/skipped` (while this instance leads), `leader.acquired/lost`. Instants are
   * epoch ms. Subscribers are called synchronously from the engine: keep them quick.
   */
  readonly events$: Observable<ChronosEvent>;
  private readonly inspector: Inspector;

  constructor(
    @Inject(CHRONOS_OPTIONS) options: ResolvedChronosOptions,
    @Inject(CHRONOS_EVENT_BUS) events: EventBus,
    client: ChronosClient,
  ) {
    // shares the client's connection (the client closes it)
    this.inspector = new Inspector({
      connection: client.redis,
      namespace: options.namespace,
      livenessWindow: options.heartbeatInterval * 3,
    });
    this.events$ = new Observable<ChronosEvent>((subscriber) => events.subscribe((e) => subscriber.next(e)));
  }

  /** Every known queue with its counts (pending, active, scheduled, retry, dead, paused, today's processed/failed). */
  queues(): Promise<QueueInfo[]> {
    return this.inspector.queues();
  }

  /** One queue's counts. */
  queue(name: string): Promise<QueueInfo> {
    return this.inspector.queue(name);
  }

  /** Tasks of a queue in one state, oldest first. @defaultValue page `{ offset: 0, limit: 50 }` */
  tasks(queue: string, state: TaskState, page?: { offset?: number; limit?: number }): Promise<TaskInfo[]> {
    return this.inspector.tasks(queue, state, page);
  }

  /** A task by id in a queue, whatever its state; undefined when not found. */
  task(queue: string, id: string): Promise<TaskInfo | undefined> {
    return this.inspector.task(queue, id);
  }

  /** Every schedule with its next `n` triggers (epoch ms), last fire, time zone, paused and liveness. */
  schedules(n = 5): Promise<ScheduleInfo[]> {
    return this.inspector.schedules(n);
  }

  /** The current leader (`instance`, `term`, `since` epoch ms, `ttlMs`), or null when nobody leads. */
  leader(): Promise<LeaderInfo | null> {
    return this.inspector.leader();
  }

  /** Live worker servers with their queues, concurrency and active count. */
  servers(): Promise<ServerInfo[]> {
    return this.inspector.servers();
  }

  /** Scheduler instances seen recently, with liveness. */
  instances(): Promise<InstanceInfo[]> {
    return this.inspector.instances();
  }

  /** Pauses a queue for every worker of the namespace (they stop fetching from it within about a second; enqueues still work). */
  pauseQueue(queue: string): Promise<void> {
    return this.inspector.pauseQueue(queue);
  }

  /** Resumes a paused queue. */
  resumeQueue(queue: string): Promise<void> {
    return this.inspector.resumeQueue(queue);
  }

  /** Leader, schedules, queues and servers in one call (e.g. for a status endpoint). */
  async overview(nextTriggers = 3): Promise<ChronosOverview> {
    const [leader, schedules, queues, servers] = await Promise.all([
      this.leader(),
      this.schedules(nextTriggers),
      this.queues(),
      this.servers(),
    ]);
    return { leader, schedules, queues, servers };
  }
}
