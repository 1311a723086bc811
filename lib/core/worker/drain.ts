/**
 * The drain of a running server at its shutdown, split from server.ts (which owns the parts and the
 * state): its loops stopped, the tasks it fetched but did not start given back, its running handlers
 * given up to `shutdownTimeout` and then aborted and put back, its acks written, its pending entries
 * and limit slots released, its presence removed; or, when Redis does not answer in time, what is
 * left to the visibility timeout.
 */
import type { EventBus } from '../runtime/events.js';
import type { ChronosLogger } from '../runtime/logger.js';
import { haltServices, stopServices, type Service } from '../runtime/service.js';
import { SHUTDOWN_REDIS_GRACE_MS, ShutdownAbort } from '../runtime/shutdown.js';
import type { ConsumedQueue } from '../fetch/consumer.js';
import type { Fetcher } from '../fetch/fetcher.js';
import type { Slots } from '../fetch/slots.js';
import type { Liveness } from '../recovery/liveness.js';
import type { Recoverer } from '../recovery/recoverer.js';
import type { AckBatcher } from './ack-batcher.js';
import type { Heartbeat } from './heartbeat.js';

/** The parts of a server its drain works on. */
export interface DrainParts {
  /** The background loops, in start order (stopped in reverse). */
  readonly services: Service[];
  readonly recoverer: Recoverer;
  readonly slots: Slots;
  readonly acker: AckBatcher;
  readonly fetcher: Fetcher;
  readonly liveness: Liveness;
  readonly heartbeat: Heartbeat;
  readonly logger: ChronosLogger;
  readonly events: EventBus;
  /** How long running handlers may finish before they are aborted, ms (`shutdownTimeout`). */
  readonly shutdownTimeoutMs: number;
}

/** The drain of one server (one per server; run once, at its shutdown). */
export class Drain {
  constructor(private readonly p: DrainParts) {}

  /** The drain of a running server: its loops stopped, its tasks finished or put back, its acks written, its presence removed. */
  async run(): Promise<void> {
    await stopServices(this.p.services);
    // entries fetched but not started (waiting for a slot, or held for their instant) go straight back
    await this.p.recoverer.giveBack(this.p.slots.takeUnstarted().map((w) => ({ queue: w.queue, entryId: w.task.entryId, task: w.task })));
    await this.abortRunning();
    await this.p.acker.flush();
    this.p.acker.stop();
    await this.p.recoverer.releaseOwnPending();
    await this.p.fetcher.announceGivenBack(this.p.recoverer.givenBack); // workers held back by a limit start them at once
    await this.p.liveness.close();
    await this.p.heartbeat.remove();
  }

  /**
   * The drain did not end within `deadlineMs` (Redis does not answer): handlers still running are
   * aborted, acks stop retrying, and the server stops without the rest. What it held stays pending
   * in Redis and is recovered by another server after the visibility timeout (at least once).
   */
  leaveUndrained(deadlineMs: number): void {
    haltServices(this.p.services); // the loops a stop still waiting on Redis did not reach
    for (const run of this.p.slots.running) {
      run.abandoned = true;
      run.abort(new ShutdownAbort());
    }
    this.p.acker.stop();
    this.p.logger.warn(
      `Shutdown: Redis did not answer within ${deadlineMs} ms (shutdownTimeout + ${SHUTDOWN_REDIS_GRACE_MS} ms); stopping without ` +
        `the rest of the drain: the tasks this server held stay pending and are recovered by another server after the visibility timeout`,
    );
  }

  /** Waits up to `shutdownTimeout` ms for running handlers, then aborts the rest and puts their tasks back. */
  private async abortRunning(): Promise<void> {
    const running = this.p.slots.running.length;
    if (running > 0) {
      this.p.logger.log(`Waiting for ${running} running task(s) (up to ${this.p.shutdownTimeoutMs} ms)`);
      await this.p.slots.waitIdle(this.p.shutdownTimeoutMs);
    }
    const unfinished = this.p.slots.running;
    if (unfinished.length === 0) return;
    for (const run of unfinished) {
      run.abandoned = true;
      run.abort(new ShutdownAbort());
    }
    // a run an operator cancelled is dead already, a timed-out one's failure recorded (its entry left the queue): nothing to put back or report
    const left = unfinished.filter((r) => !r.cancelled && !r.timedOut);
    if (left.length === 0) return;
    await this.p.recoverer.giveBack(left.map((r) => ({ queue: r.ref as ConsumedQueue, entryId: r.entry.entryId, task: r.entry })));
    const ids = left.map((r) => r.id).join(',');
    this.p.logger.warn(`Shutdown grace over: ${left.length} task(s) aborted and put back in the queue (ids=${ids})`);
    for (const { queue, id: taskId, type: taskType } of left) {
      if (this.p.events.active) this.p.events.emit({ type: 'task.requeued', queue, taskId, taskType, reason: 'shutdown' });
    }
  }
}
