import type { OnApplicationShutdown } from '@nestjs/common';
import type { ChronosClient } from '../services/chronos.client.js';
import type { InspectorService } from '../services/inspector.service.js';
import type { WorkerService } from '../services/worker.service.js';
import type { PrivateRedisServer } from './private-redis.js';
import { ChronosTestingError } from './testing-error.js';

/** The private Redis of one `mode: 'redis'` module, once started. @internal */
export interface RedisHolder {
  server?: PrivateRedisServer;
}

/**
 * `ChronosTesting` of `mode: 'redis'`: the real module runs against the kit's private
 * `redis-server`; {@link waitForIdle} waits for the real workers. @internal (exposed as ChronosTesting)
 */
export class RedisTestingControl implements OnApplicationShutdown {
  /** The mode the module runs in. */
  readonly mode = 'redis' as const;

  constructor(
    private readonly holder: RedisHolder,
    private readonly worker: WorkerService,
    private readonly inspector: InspectorService,
    private readonly client: ChronosClient,
  ) {}

  /** Manual and inline modes only. @throws ChronosTestingError */
  enqueued(): never {
    return manualOnly('enqueued()');
  }
  /** Manual and inline modes only. @throws ChronosTestingError */
  expectEnqueued(): never {
    return manualOnly('expectEnqueued()');
  }
  /** Manual and inline modes only. @throws ChronosTestingError */
  perform(): never {
    return manualOnly('perform()');
  }
  /** Manual and inline modes only. @throws ChronosTestingError */
  drain(): never {
    return manualOnly('drain()');
  }
  /** Manual and inline modes only (use the Inspector's `backfillSchedule`). @throws ChronosTestingError */
  fireDue(): never {
    return manualOnly('fireDue()');
  }
  /** Manual and inline modes only. @throws ChronosTestingError */
  expectNotEnqueued(): never {
    return manualOnly('expectNotEnqueued()');
  }
  /** Manual and inline modes only (the real scheduler fires by the real clock). @throws ChronosTestingError */
  advanceTo(): never {
    return manualOnly('advanceTo()');
  }
  /** Manual and inline modes only. @throws ChronosTestingError */
  clear(): never {
    return manualOnly('clear()');
  }
  /** Manual and inline modes only (no virtual clock here). @throws ChronosTestingError */
  get now(): never {
    return manualOnly('now');
  }
  /** Manual and inline modes only. @throws ChronosTestingError */
  get history(): never {
    return manualOnly('history');
  }
  /** Manual and inline modes only (the `task.*` events of `InspectorService.events$` tell the outcomes). @throws ChronosTestingError */
  get outcomes(): never {
    return manualOnly('outcomes');
  }
  /** Manual and inline modes only (the Inspector lists the dead tasks). @throws ChronosTestingError */
  get dead(): never {
    return manualOnly('dead');
  }

  /** `redis://127.0.0.1:<port>` of the private redis-server. */
  get redisUrl(): string {
    return this.holder.server!.url;
  }

  /**
   * Resolves when every queue is empty (nothing pending, delivered, delayed or waiting for a
   * retry) and no handler runs on this app, twice in a row.
   * @throws ChronosTestingError after `timeout` ms (default 30 000), with the queues' counts.
   */
  async waitForIdle(options: { timeout?: number } = {}): Promise<void> {
    const timeout = options.timeout ?? 30_000;
    const deadline = performance.now() + timeout;
    let idleInARow = 0;
    let last: string;
    while (idleInARow < 2) {
      const queues = await this.inspector.queues();
      const busy = queues.filter((q) => q.pending + q.active + q.scheduled + q.retry > 0);
      last = busy.map((q) => `${q.name}: pending=${q.pending} active=${q.active} scheduled=${q.scheduled} retry=${q.retry}`).join('; ');
      idleInARow = busy.length === 0 && this.worker.activeCount === 0 ? idleInARow + 1 : 0;
      if (idleInARow >= 2) return;
      if (performance.now() > deadline)
        throw new ChronosTestingError(
          `waitForIdle: not idle after ${timeout} ms (${last || `${this.worker.activeCount} handler(s) running`})`,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** @internal Nest lifecycle: closes the client, then stops the private redis-server. */
  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
    await this.holder.server?.stop();
  }
}

/** The error of a member of the manual and inline modes used in mode 'redis'; `member`: a method as `name()`, a getter as `name`. */
function manualOnly(member: string): never {
  throw new ChronosTestingError(
    `ChronosTesting.${member} is for modes 'manual' and 'inline': in mode 'redis' the real workers run the tasks (await waitForIdle(); look at them with InspectorService)`,
  );
}
