/**
 * The keys of the schedules' shards (docs/scheduler-shards.md): which shard holds a schedule, and
 * the keys of shard k under their own hash tag `{<ns>:sched:<k>[.<j>]}`, placed in shard k's 1/16 of
 * the cluster slots. Re-exported by keys.ts, the only code that joins key strings.
 */
import calculateSlot from 'cluster-key-slot';
import { SHARD_COUNT } from './protocol.js';

/** FNV-1a, 32-bit, of an ASCII string's bytes (names are ASCII: NAME_RULE). */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ (text.charCodeAt(i) & 0xff), 0x01000193);
  return h >>> 0;
}

/** The shard of a schedule (0 to SHARD_COUNT − 1): FNV-1a (32-bit) of its name, modulo SHARD_COUNT. Never changes. */
export function shardOf(name: string): number {
  return fnv1a32(name) % SHARD_COUNT;
}

/** Cluster hash slots (16,384) per shard: shard k's tag is placed in slots [k·span, (k+1)·span). */
const SLOT_SPAN = 16384 / SHARD_COUNT;

/**
 * The hash tag of shard `k` of a namespace: `<ns>:sched:<k>`, or `<ns>:sched:<k>.<j>` with the
 * smallest j ≥ 1 whose cluster slot (CRC16, as Redis computes it) falls in `[k·1024, (k+1)·1024)`,
 * so the shards spread evenly over a cluster's masters when its slots are split in even ranges.
 */
export function shardTag(namespace: string, k: number): string {
  const lo = k * SLOT_SPAN;
  const fits = (tag: string): boolean => {
    const slot = calculateSlot(tag);
    return slot >= lo && slot < lo + SLOT_SPAN;
  };
  const base = `${namespace}:sched:${k}`;
  if (fits(base)) return base;
  for (let j = 1; ; j++) if (fits(`${base}.${j}`)) return `${base}.${j}`; // ~16 tries on average
}

/**
 * Keys of one shard of the schedules (docs/scheduler-shards.md). All share the shard's hash tag
 * ({@link shardTag}), so each registry write and each tick of the shard's leader is one slot.
 */
export class ShardKeys {
  /** HASH schedule name → definition JSON: the registry of this shard's schedules. */
  readonly schedules: string;
  /**
   * ZSET schedule name → wake instant (epoch ms, Redis time): when the shard's leader must look at
   * it next; non-negative integer scores are a leader's, negative ones a registry change's mark (protocol.ts SHARD_DUE);
   * absent: nothing to plan (paused, ended, exhausted, orphaned).
   */
  readonly due: string;
  /** STRING rising counter (max(INCR, Redis time ms)): the generation of each change of this shard's schedules. */
  readonly version: string;
  /** ZSET every schedule name of the shard, score 0 (ZRANGEBYLEX pages and prefixes). */
  readonly nameIndex: string;
  /** HASH { phase, cursor }: the backfill of the shard's indexes (index-schedules.lua), `ready` once complete. */
  readonly indexState: string;
  /** The shard's key prefix `<ns>:{<tag>}:`, passed to the scripts that build keys on it (the label indexes). */
  readonly prefix: string;

  constructor(
    /** Key prefix of the app (e.g. `chronos`). */
    readonly namespace: string,
    /** The shard's number, 0 to SHARD_COUNT − 1. */
    readonly shard: number,
  ) {
    this.prefix = `${namespace}:{${shardTag(namespace, shard)}}:`;
    this.schedules = this.prefix + 'schedules';
    this.due = this.prefix + 'due';
    this.version = this.prefix + 'version';
    this.nameIndex = this.prefix + 'index:names';
    this.indexState = this.prefix + 'index:state';
  }

  /** ZSET the names of the shard's schedules with label `key` = `value`, score 0. */
  label(key: string, value: string): string {
    return this.prefix + 'label:' + key + '=' + value;
  }
}

/** The keys of every shard of a namespace, by shard number (tags computed once per namespace). */
export function shardKeysOf(namespace: string): readonly ShardKeys[] {
  let all = SHARDS_BY_NAMESPACE.get(namespace);
  if (all === undefined) {
    all = Array.from({ length: SHARD_COUNT }, (_, k) => new ShardKeys(namespace, k));
    SHARDS_BY_NAMESPACE.set(namespace, all);
  }
  return all;
}
const SHARDS_BY_NAMESPACE = new Map<string, readonly ShardKeys[]>();

/** The keys of the shard that holds schedule `name`. */
export function shardKeysFor(namespace: string, name: string): ShardKeys {
  return shardKeysOf(namespace)[shardOf(name)];
}

/** `items` grouped by the shard of their schedule (`nameOf`), in shard order, each group in the order given. */
export function byShard<T>(namespace: string, items: Iterable<T>, nameOf: (item: T) => string): Map<ShardKeys, T[]> {
  const all = shardKeysOf(namespace);
  const groups: T[][] = all.map(() => []);
  for (const item of items) groups[shardOf(nameOf(item))].push(item);
  const out = new Map<ShardKeys, T[]>();
  groups.forEach((g, k) => g.length > 0 && out.set(all[k], g));
  return out;
}
