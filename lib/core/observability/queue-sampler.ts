import type { RedisClient } from '../redis/connection.js';
import type { QueueKeys } from '../redis/keys.js';
import { sampleQueueScript } from '../redis/commands/stats.js';
import { DEFAULTS } from '../runtime/defaults.js';

/** How often a worker server samples the depth and latency of the queues it serves, ms (once a minute). */
export const SAMPLE_EVERY_MS = 60_000;

/**
 * Samples the depth and latency of a worker server's queues into their counts (sample-queue.lua),
 * so that the Inspector's history shows them per minute and hour. Every server of a queue tries
 * once a minute; the first in a minute samples, the others' calls cost one BITFIELD each. Nothing
 * per task: the cost is one script call per queue per server per minute.
 */
export class QueueSampler {
  constructor(
    private readonly client: RedisClient,
    private readonly queues: readonly { readonly keys: QueueKeys }[],
  ) {}

  /** One round: a sample-queue.lua call per queue (in parallel; each on its queue's slot). */
  async sample(): Promise<void> {
    await Promise.all(this.queues.map((q) => sampleQueueScript(this.client, q.keys, DEFAULTS.counterTtlMs)));
  }
}
