import type { GlobalKeys } from '../keys.js';
import type { RedisClient } from '../types.js';

/**
 * Pauses (`SADD <ns>:paused`) or resumes (`SREM`) a queue for every server, then publishes the queue
 * name on `<ns>:{<ns>:global}:paused:wake` so the servers read the paused set again at once (their
 * fallback read runs every `DEFAULTS.pausedPollMs`). @returns 1 when the set changed, else 0.
 */
export async function writePause(client: RedisClient, keys: GlobalKeys, queue: string, paused: boolean): Promise<number> {
  const changed = paused ? await client.sadd(keys.paused, queue) : await client.srem(keys.paused, queue);
  await client.publish(keys.pausedWake, queue);
  return changed;
}
