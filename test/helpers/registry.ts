import type { RedisClient as Redis } from '../../lib/core/redis/types.js';
import { shardKeysFor, shardKeysOf } from '../../lib/core/redis/keys.js';
import { decodeStored } from '../../lib/core/scheduler/stored-form.js';

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

/** The stored definition of a schedule, decoded as the library reads it (stored-form.ts decodeStored: either form, with what the compact form leaves out filled in; null when not stored). */
export async function storedDefinition<T = Record<string, unknown>>(redis: Redis, ns: string, name: string): Promise<T | null> {
  const raw = await storedJson(redis, ns, name);
  return raw === null ? null : (decodeStored(name, raw) as unknown as T);
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

/** The members of one index ZSET of every shard (`key` builds it from a shard's keys), merged in name order. */
async function acrossShards(redis: Redis, ns: string, key: (k: ReturnType<typeof shardKeysOf>[number]) => string): Promise<string[]> {
  const all = await Promise.all(shardKeysOf(ns).map((k) => redis.zrange(key(k), 0, -1)));
  return all.flat().sort();
}

/** The names indexed under label `k` = `v`, every shard's, in name order. */
export function labelMembers(redis: Redis, ns: string, k: string, v: string): Promise<string[]> {
  return acrossShards(redis, ns, (s) => s.label(k, v));
}

/** The names in the names index, every shard's, in name order. */
export function indexedNames(redis: Redis, ns: string): Promise<string[]> {
  return acrossShards(redis, ns, (s) => s.nameIndex);
}

/** Every stored definition of a namespace, by name (HGETALL of each shard's registry). */
export async function allDefinitions(redis: Redis, ns: string): Promise<Record<string, string>> {
  const all = await Promise.all(shardKeysOf(ns).map((k) => redis.hgetall(k.schedules)));
  return Object.assign({}, ...all) as Record<string, string>;
}

/** The shards' registry versions (rising counters), joined: unchanged while no registry write took a generation. */
export async function shardVersions(redis: Redis, ns: string): Promise<string> {
  return (await Promise.all(shardKeysOf(ns).map((k) => redis.get(k.version)))).join(',');
}

/** The registry version of the shard of schedule `name` (0 when none yet). */
export async function versionOf(redis: Redis, ns: string, name: string): Promise<number> {
  return Number((await redis.get(shardKeysFor(ns, name).version)) ?? 0);
}
