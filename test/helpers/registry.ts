import type { RedisClient as Redis } from '../../lib/core/redis/types.js';
import { shardKeysFor, shardKeysOf } from '../../lib/core/redis/keys.js';

/**
 * Reads of the schedule registry for tests' assertions: since shards (docs/scheduler-shards.md) a
 * schedule's definition lives in its shard's `schedules` hash (keys.ts shardKeysFor).
 */

/** The registry hash that holds schedule `name` of namespace `ns`. */
export function registryKey(ns: string, name: string): string {
  return shardKeysFor(ns, name).schedules;
}

/** The stored definition JSON of a schedule (null when not stored). */
export function storedJson(redis: Redis, ns: string, name: string): Promise<string | null> {
  return redis.hget(registryKey(ns, name), name);
}

/** The stored definition of a schedule, parsed (null when not stored). */
export async function storedDefinition<T = Record<string, unknown>>(redis: Redis, ns: string, name: string): Promise<T | null> {
  const raw = await storedJson(redis, ns, name);
  return raw === null ? null : (JSON.parse(raw) as T);
}

/** Every stored schedule name of a namespace, sorted (HKEYS of each shard's registry). */
export async function registryNames(redis: Redis, ns: string): Promise<string[]> {
  const all = await Promise.all(shardKeysOf(ns).map((k) => redis.hkeys(k.schedules)));
  return all.flat().sort();
}

/** How many schedules a namespace stores (HLEN of each shard's registry, summed). */
export async function registrySize(redis: Redis, ns: string): Promise<number> {
  const all = await Promise.all(shardKeysOf(ns).map((k) => redis.hlen(k.schedules)));
  return all.reduce((a, b) => a + b, 0);
}

/** The schedule's score in its shard's due index (null when it is not there: paused, ended, orphaned). */
export async function dueScore(redis: Redis, ns: string, name: string): Promise<number | null> {
  const v = await redis.zscore(shardKeysFor(ns, name).due, name);
  return v === null ? null : Number(v);
}
