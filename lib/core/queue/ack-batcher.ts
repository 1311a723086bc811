import type { ChronosLogger } from '../logger.js';
import { ackScript } from '../redis/commands.js';
import type { QueueKeys } from '../redis/keys.js';
import type { RedisClient } from '../redis/types.js';

interface Pending {
  keys: QueueKeys;
  plain: string[];
  /** entry id, task id, keys to release */
  flagged: [string, string, string[]][];
}

/**
 * Batches the acks of succeeded tasks: everything acked in one event-loop turn goes to Redis as
 * one `ack.lua` call per queue (XACK + XDEL + INCRBY of the day's counter), so the per-task cost
 * at high concurrency is a fraction of a command. An ack that cannot be written leaves the task
 * pending; it is reclaimed and run again (at-least-once).
 */
export class AckBatcher {
  private batch = new Map<string, Pending>();
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly client: RedisClient,
    private readonly logger: ChronosLogger,
    private readonly counterTtlMs: number,
    private readonly onAcked: (n: number) => void,
  ) {}

  add(keys: QueueKeys, entryId: string, taskId: string, release: string[]): void {
    let p = this.batch.get(keys.stream);
    if (!p) {
      p = { keys, plain: [], flagged: [] };
      this.batch.set(keys.stream, p);
    }
    if (release.length === 0) p.plain.push(entryId);
    else p.flagged.push([entryId, taskId, release]);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
  }

  /** Writes what is batched and waits for every write under way. */
  async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.batch;
    this.batch = new Map();
    for (const p of batch.values()) {
      const write = this.write(p).finally(() => this.inFlight.delete(write));
      this.inFlight.add(write);
    }
    await Promise.all([...this.inFlight]);
  }

  private async write(p: Pending): Promise<void> {
    const sent = p.plain.length + p.flagged.length;
    try {
      const acked = await ackScript(this.client, p.keys, { plain: p.plain, flagged: p.flagged, counterTtlMs: this.counterTtlMs });
      this.onAcked(acked);
      if (acked < sent) {
        this.logger.warn(
          `${sent - acked} task(s) finished after another server had reclaimed them; they may run twice (queue=${p.keys.queue})`,
        );
      }
    } catch (err) {
      this.logger.error(
        `Could not ack ${sent} finished task(s); they stay pending and will run again after the visibility timeout (queue=${p.keys.queue})`,
        err,
      );
    }
  }
}
