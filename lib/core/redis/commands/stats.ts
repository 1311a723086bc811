import { CONSUMER_GROUP, type QueueKeys } from '../keys.js';
import { runScript, type ScriptName, type ScriptWrapper } from '../scripts.js';
import type { RedisClient } from '../types.js';

/** Typed wrapper of the queue counts' sampler (sample-queue); conventions as in index.ts. */

/** What one sample-queue.lua call did: sampled the minute (with what it found), or found it sampled already. */
export type QueueSample = { sampled: true; depth: number; latencyMs: number } | { sampled: false };

/**
 * Samples a queue's depth (tasks waiting: undelivered in its stream, and in its groups) and latency
 * (of the stream's oldest undelivered task) into the current minute of its counts, unless that minute
 * was sampled already (sample-queue.lua). `counterTtlMs`: the counts key's lifetime, ms.
 */
export async function sampleQueueScript(client: RedisClient, keys: QueueKeys, counterTtlMs: number): Promise<QueueSample> {
  const r = await runScript<number[]>(client, 'sample-queue', [keys.stream, keys.counts, keys.limits], [CONSUMER_GROUP, counterTtlMs]);
  return r[0] === 1 ? { sampled: true, depth: r[1], latencyMs: r[2] } : { sampled: false };
}

/** The wrapper of each script of this area (the registry in index.ts). */
export const STATS_SCRIPTS = {
  'sample-queue': sampleQueueScript,
} as const satisfies Partial<Record<ScriptName, ScriptWrapper>>;
