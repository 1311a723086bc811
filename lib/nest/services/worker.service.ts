import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { EventBus } from '../../core/runtime/events.js';
import { Mux } from '../../core/worker/mux.js';
import { checkServer } from '../../core/redis/server-check.js';
import { ChronosServer } from '../../core/worker/server.js';
import { CHRONOS_EVENT_BUS, CHRONOS_OPTIONS } from '../chronos.constants.js';
import { MESSAGES } from '../chronos.messages.js';
import { toChronosLogger } from '../nest-logger.js';
import type { ResolvedChronosOptions } from '../options/resolve-options.js';
import { ChronosLifecycle } from './chronos-lifecycle.js';
import { ChronosClient } from './chronos.client.js';

/**
 * The worker role of this instance: at bootstrap it starts fetching from its queues and runs the
 * discovered handlers (`@TaskHandler`, `@Cron`, `@Interval`) with at most `concurrency` at once;
 * at shutdown (`beforeApplicationShutdown`) it stops fetching at once, lets running handlers
 * finish for up to `shutdownTimeout` ms, then puts the rest back in their queues.
 * @publicApi
 */
@Injectable()
export class WorkerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WorkerService.name);
  /** @internal The handler registry the explorer fills; the server uses it. */
  readonly mux = new Mux();
  private server?: ChronosServer;
  /** Queues named by decorators, with where they come from. */
  private readonly declaredQueues = new Map<string, string[]>();

  /** Created by Nest's injector (inject the service; do not construct it). @internal */
  constructor(
    @Inject(CHRONOS_OPTIONS) private readonly options: ResolvedChronosOptions,
    @Inject(CHRONOS_EVENT_BUS) private readonly events: EventBus,
    private readonly lifecycle: ChronosLifecycle,
    private readonly client: ChronosClient,
  ) {
    lifecycle.onStop(async () => {
      await this.server?.shutdown();
      return !this.server?.gaveUpOnRedis;
    });
  }

  /** Whether this instance runs the worker role (`worker` option). */
  get enabled(): boolean {
    return this.options.worker.enabled;
  }

  /** True while the worker fetches and runs tasks. */
  get isRunning(): boolean {
    return this.server?.isRunning ?? false;
  }

  /** Health of the worker's loops (fetch, forward), see `ChronosServer.health()`; undefined before start. */
  health(): ReturnType<ChronosServer['health']> | undefined {
    return this.server?.health();
  }

  /** Handlers running now on this instance. */
  get activeCount(): number {
    return this.server?.activeCount ?? 0;
  }

  /** This worker's id (its consumer name on every queue), once started. */
  get serverId(): string | undefined {
    return this.server?.id;
  }

  /** Queues this worker serves, with their weights. */
  get queues(): Record<string, number> {
    if (this.options.queues) return { ...this.options.queues };
    const out: Record<string, number> = { [this.options.queue]: 1 };
    for (const q of this.declaredQueues.keys()) out[q] = 1;
    return out;
  }

  /** Task types this worker handles (fan-out listeners appear as `<type>#<listener>`). */
  get handledTypes(): string[] {
    return this.mux.types();
  }

  /**
   * The start-up check of Redis ({@link checkServer}: reachable, >= 6.2, the URL's database, the
   * eviction policy) on an instance with neither role (it only enqueues), which starts no server nor
   * scheduler to run it: such an app booted with Redis down, and with a `/db` the server does not have
   * it enqueued into database 0. A failure closes what Chronos opened and fails the bootstrap.
   */
  private async checkRedis(): Promise<void> {
    try {
      await checkServer(this.client.redis, {
        logger: toChronosLogger(this.logger),
        requireNoEviction: this.options.core.server.requireNoEviction,
      });
    } catch (err) {
      await this.lifecycle.startFailed();
      throw err;
    }
  }

  /** @internal The explorer reports a queue a decorator names (served by default). */
  addQueue(queue: string, source: string): void {
    this.declaredQueues.set(queue, [...(this.declaredQueues.get(queue) ?? []), source]);
  }

  /**
   * @internal Nest lifecycle: starts the worker. If it (or the scheduler role) fails to start,
   * whatever Chronos opened in this app is closed, so an app that catches the error can exit.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (this.lifecycle.stopRequested) return; // a failed start, or the app closed while it booted
    try {
      await this.applyQueueLimits();
    } catch (err) {
      await this.lifecycle.startFailed();
      throw err;
    }
    if (this.lifecycle.stopRequested) return; // stopped while the limits were written: no server after the stop
    if (!this.enabled) {
      this.logger.log('Worker role disabled on this instance: no handlers run here');
      if (!this.options.scheduler.enabled) await this.checkRedis();
      return;
    }
    const queues = this.queues;
    if (this.options.queues) {
      for (const [q, sources] of this.declaredQueues) {
        if (!(q in queues)) this.logger.warn(MESSAGES.queueNotServed(q, sources, Object.keys(queues)));
      }
    }
    this.server = new ChronosServer({
      ...this.options.core.server,
      queues: this.options.core.server.queues ?? queues,
      logger: toChronosLogger(this.logger),
      events: this.events,
      mux: this.mux,
    });
    try {
      await this.server.start();
    } catch (err) {
      await this.lifecycle.startFailed();
      throw err;
    }
    if (this.lifecycle.failed) await this.server.shutdown(); // the scheduler role failed meanwhile
  }

  /**
   * The fleet-wide limits of the `queues` option, stored in Redis before this instance fetches
   * (every instance applies them at boot, whatever its roles: the last one to boot wins over a change
   * made at runtime since).
   */
  private async applyQueueLimits(): Promise<void> {
    for (const [queue, limits] of Object.entries(this.options.queueLimits)) {
      const now = await this.client.setQueueLimits(queue, limits);
      this.logger.log(`Queue limits applied (queue=${queue} limits=${JSON.stringify(now)})`);
    }
  }

  /**
   * @internal Nest lifecycle: graceful drain (up to `shutdownTimeout`), then owned connections
   * close; at the same time as the scheduler role's stop (ChronosLifecycle).
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.lifecycle.stopRoles();
    await this.server?.shutdown(); // done by now: its error, if any, is reported here
  }
}
