import type { EventBus } from '../events.js';
import type { ChronosLogger } from '../logger.js';
import type { ConsumedQueue, Consumer } from './consumer.js';
import type { ResolvedServerOptions } from './server-options.js';
import type { Slots } from './slots.js';

/** An entry of a queue's stream, as this consumer holds it in the pending entries list (PEL). */
interface Pending {
  readonly queue: ConsumedQueue;
  readonly entryId: string;
}

/**
 * The pending entries lists of a worker server's queues — where a task is reclaimed: entries of
 * crashed consumers idle past the visibility timeout go back to their queue (or dead as poison),
 * this server's own entries have their claims kept fresh, and at shutdown what it still holds goes
 * straight back to the queue. Keeps no state: the slot table says what this server holds.
 */
export class Recoverer {
  constructor(
    private readonly queues: readonly ConsumedQueue[],
    private readonly consumer: Consumer,
    private readonly slots: Slots,
    private readonly opts: ResolvedServerOptions,
    private readonly logger: ChronosLogger,
    private readonly events: EventBus,
  ) {}

  /** Reclaims entries idle past the visibility timeout, in every queue (recover.lua via {@link Consumer.recover}). */
  async recover(): Promise<void> {
    const o = this.opts;
    for (const q of this.queues) {
      const { requeued, dead } = await this.consumer.recover(q.keys, {
        visibilityTimeoutMs: o.visibilityTimeout,
        maxDeliveries: o.maxDeliveries,
        deadMaxCount: o.deadMaxCount,
        deadMaxAgeMs: o.deadMaxAge,
      });
      if (requeued.length > 0) {
        this.logger.warn(
          `Reclaimed ${requeued.length} task(s) idle past the visibility timeout and put them back in the queue ` +
            `(queue=${q.name} ids=${requeued.join(',')})`,
        );
        if (this.events.active) {
          for (const id of requeued) {
            this.events.emit({ type: 'task.requeued', queue: q.name, taskId: id, taskType: '', reason: 'recovered' });
          }
        }
      }
      for (const id of dead) {
        this.logger.error(`Task dead as poison: reclaimed more than ${o.maxDeliveries} times without finishing (queue=${q.name} id=${id})`);
      }
    }
  }

  /** Resets the idle time of every entry this server holds, so a long handler is not reclaimed. */
  async extendClaims(): Promise<void> {
    for (const [q, ids] of byQueue(this.slots.entries())) await this.consumer.claim(q.keys.stream, ids);
  }

  /** Deletes, in every queue's consumer group, the consumers of servers that are gone. */
  async deleteGoneConsumers(): Promise<void> {
    for (const q of this.queues) await this.consumer.deleteGoneConsumers(q.keys.stream);
  }

  /**
   * Puts entries this server holds back at the end of their streams, uncounted (one requeue.lua
   * per queue). A queue that fails is logged and left to the recoverers (visibility timeout).
   */
  async giveBack(items: Iterable<Pending>): Promise<void> {
    for (const [q, ids] of byQueue(items)) {
      try {
        await this.consumer.giveBack(q.keys.stream, ids);
      } catch (err) {
        this.logger.error(
          `Could not put ${ids.length} task(s) back in the queue; they will be reclaimed after the visibility timeout (queue=${q.name})`,
          err,
        );
      }
    }
  }

  /**
   * Puts back whatever this consumer still has pending (e.g. a read whose reply never arrived),
   * so nothing waits for the visibility timeout.
   */
  async releaseOwnPending(): Promise<void> {
    for (const q of this.queues) {
      try {
        const ids = await this.consumer.pending(q.keys.stream);
        if (ids.length > 0) await this.giveBack(ids.map((entryId) => ({ queue: q, entryId })));
      } catch {
        /* Redis gone: the recoverer of another server reclaims them */
      }
    }
  }
}

/** Entry ids grouped by queue, in order of first appearance. */
function byQueue(items: Iterable<Pending>): Map<ConsumedQueue, string[]> {
  const groups = new Map<ConsumedQueue, string[]>();
  for (const { queue, entryId } of items) {
    const ids = groups.get(queue);
    if (ids) ids.push(entryId);
    else groups.set(queue, [entryId]);
  }
  return groups;
}
