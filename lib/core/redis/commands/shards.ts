/**
 * The typed wrappers of the shard leases' scripts (conventions as in index.ts; docs/scheduler-shards.md):
 * shards (one instance's renewal, release above and take up to its fair share) and release-shards
 * (an instance that stops lets go). Instants are epoch ms, Redis time.
 */
import type { SchedulerKeys } from '../keys.js';
import { runScript, type ScriptName, type ScriptWrapper } from '../scripts.js';
import type { RedisClient } from '../types.js';

/** What shards.lua did for one instance. */
export interface ShardsOutcome {
  /** Redis time of the call, epoch ms. */
  redisNow: number;
  /** Every shard the instance leads after the call, with its term (taken ones included). */
  mine: Map<number, number>;
  /** Shards taken by this call. */
  taken: number[];
  /** Shards released by this call (above the instance's fair share, or all of them when it stood aside). */
  released: number[];
  /** The earliest expiry of another member or of another's shard lease, epoch ms; undefined when none. */
  nextCheckAt: number | undefined;
}

/**
 * Orders one process's shards.lua calls: `incarnation` names the process's lease loop (random, made
 * once), `seq` rises with each call. A call it gave up on at its deadline may still reach Redis later,
 * after a newer one (a client re-sends its queued calls after a failover, in any order): that call is
 * stale and changes nothing (shards.lua).
 */
export interface LeaseCallFence {
  incarnation: string;
  seq: number;
}

/** A shards.lua call reached Redis after a newer call of the same instance had run: it changed nothing. */
export class StaleLeaseCallError extends Error {
  constructor(
    readonly instanceId: string,
    readonly seq: number,
  ) {
    super(`shard lease call ${seq} of instance ${instanceId} reached Redis after a newer one: it changed nothing`);
    this.name = 'StaleLeaseCallError';
  }
}

/**
 * Renews an instance's membership and shard leases, releases the shards above its fair share and
 * takes free or expired ones up to it (shards.lua). `join` on its first call (the others rebalance at once).
 * `standAside`: the instance cannot fire within its leases (too slow a link): while another live member
 * campaigns it releases every shard, takes none and leaves the members (`mine` empty, `released` its
 * shards); alone, the call is as without it. `fence`: orders the calls of one process (a stale one
 * throws {@link StaleLeaseCallError}); without it (tests) every call runs.
 */
export async function shardsScript(
  client: RedisClient,
  keys: SchedulerKeys,
  instanceId: string,
  ttlMs: number,
  count: number,
  join: boolean,
  standAside = false,
  fence?: LeaseCallFence,
): Promise<ShardsOutcome> {
  const [redisNow, flat, taken, released, nextCheck, stale] = await runScript<[number, number[], number[], number[], number, number]>(
    client,
    'shards',
    [keys.shards, keys.members, keys.term, keys.leaseCall(instanceId)],
    [instanceId, ttlMs, count, keys.resignChannel, join ? '1' : '0', standAside ? '1' : '0', fence?.incarnation ?? '', fence?.seq ?? 0],
  );
  if (stale === 1) throw new StaleLeaseCallError(instanceId, fence?.seq ?? 0);
  const mine = new Map<number, number>();
  for (let i = 0; i + 1 < flat.length; i += 2) mine.set(Number(flat[i]), Number(flat[i + 1]));
  return { redisNow, mine, taken: taken.map(Number), released: released.map(Number), nextCheckAt: nextCheck > 0 ? nextCheck : undefined };
}

/** Releases every shard lease an instance holds and its membership, announcing it (release-shards.lua). @returns how many shards */
export function releaseShardsScript(client: RedisClient, keys: SchedulerKeys, instanceId: string): Promise<number> {
  return runScript<number>(client, 'release-shards', [keys.shards, keys.members], [instanceId, keys.resignChannel]);
}

/** The wrapper of each script of this area (the registry in index.ts). */
export const SHARDS_SCRIPTS = {
  shards: shardsScript,
  'release-shards': releaseShardsScript,
} as const satisfies Partial<Record<ScriptName, ScriptWrapper>>;
