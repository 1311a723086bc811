import { EventBus } from '../../lib/core/runtime/events.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { deleteNamespace, newNamespace, redisUrl } from './redis.js';
import { recordingLogger, within } from './wait.js';

/** How far ahead of its instant a 1 s trigger is enqueued (half a period: fireLeadMs). */
const LEAD_MS = 500;

/**
 * Another app (its own namespace) on the test Redis, led by an in-process Scheduler with one
 * `@every 1s` schedule and no worker. Its fires are the positive marker that scheduler time has
 * passed an instant while the fleet under test is down, or must be seen *not* doing something:
 * waiting for them replaces a wall-clock sleep. `close()` stops it and deletes its namespace.
 */
export class Witness {
  readonly ns = newNamespace('witness');
  private readonly events = new EventBus();
  private readonly scheduler: Scheduler;
  private lastTriggerAt = 0;
  private waiters: { atMs: number; resolve: () => void }[] = [];

  private constructor(url: string) {
    this.scheduler = new Scheduler({
      connection: url,
      namespace: this.ns,
      leaderTtl: 2000,
      heartbeatInterval: 1000,
      events: this.events,
      logger: recordingLogger(),
    });
    this.scheduler.register({ name: 'witness', spec: '@every 1s' });
    this.events.subscribe((e) => {
      if (e.type !== 'schedule.fired') return;
      this.lastTriggerAt = Math.max(this.lastTriggerAt, e.triggerAt);
      this.waiters = this.waiters.filter((w) => (w.atMs <= this.lastTriggerAt - LEAD_MS ? (w.resolve(), false) : true));
    });
  }

  static async start(url = redisUrl()): Promise<Witness> {
    const w = new Witness(url);
    await w.scheduler.start();
    return w;
  }

  /**
   * Resolves once the witness fired a trigger proving its clock (Redis time) is at or past `atMs`
   * (epoch ms): a trigger at `atMs` + half a period or later, since fires are enqueued that far ahead.
   * @throws naming `atMs` and `what` when that has not happened `slackMs` after `atMs`.
   */
  reached(atMs: number, what: string, slackMs = 10_000): Promise<void> {
    if (atMs <= this.lastTriggerAt - LEAD_MS) return Promise.resolve();
    const seen = new Promise<void>((resolve) => this.waiters.push({ atMs, resolve }));
    const timeoutMs = Math.max(0, atMs - Date.now()) + LEAD_MS + slackMs;
    return within(seen, timeoutMs, `the witness schedule to pass ${new Date(atMs).toISOString()} (${what})`);
  }

  async close(): Promise<void> {
    await this.scheduler.stop();
    await deleteNamespace(this.ns);
  }
}
