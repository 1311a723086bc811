import { execReplies } from '../redis/cluster.js';
import { checkServer } from '../redis/connection.js';
import { shardOf } from '../redis/keys.js';
import type { InspectorContext } from './context.js';
import type { LeaderInfo, RedisInfo, ServerInfo, ShardLeaseInfo } from './types.js';
import { engineTime } from '../runtime/time.js';

/**
 * The shards' leaders (docs/scheduler-shards.md), or null when no shard's lease is held: one pipeline of
 * HGETALL (the `shards` hash: `<instance>|<term>|<expiresAtMs>` per shard) and TIME; an expired
 * entry counts as not held. The instance leading the most shards is named first (see {@link LeaderInfo}).
 * Not a MULTI: Redis refuses every command queued in a MULTI while it is over `maxmemory`, reads
 * included, so the leader (and `chronos stats`, the console's overview, the metrics' fleet gauges, the
 * health indicator's lease read) could not be read while Redis was full — when an operator needs them.
 */
export async function leader(ctx: InspectorContext): Promise<LeaderInfo | null> {
  const replies = await execReplies(ctx.client.pipeline().hgetall(ctx.sched.shards).time());
  const failed = replies.find(([err]) => err);
  if (failed) throw failed[0]!;
  const [[, table], [, time]] = replies as [[unknown, Record<string, string>], [unknown, [string, string]]];
  const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
  const shards: ShardLeaseInfo[] = [];
  for (const [field, value] of Object.entries(table)) {
    const parts = value.split('|');
    if (parts.length < 3) continue;
    const expiresAt = Number(parts[parts.length - 1]);
    const term = Number(parts[parts.length - 2]);
    if (!(expiresAt > now)) continue;
    shards.push({ shard: Number(field), instance: parts.slice(0, -2).join('|'), term, ttlMs: expiresAt - now });
  }
  if (shards.length === 0) return null;
  shards.sort((a, b) => a.shard - b.shard);
  const count = new Map<string, number>();
  for (const s of shards) count.set(s.instance, (count.get(s.instance) ?? 0) + 1);
  let top = shards[0].instance;
  for (const s of shards) if (count.get(s.instance)! > count.get(top)!) top = s.instance;
  const own = shards.filter((s) => s.instance === top);
  const newest = own.reduce((a, b) => (b.term > a.term ? b : a));
  // a term is max(INCR, Redis ms) at its acquisition: the acquisition instant unless terms ran ahead of the clock
  const since = newest.term <= now && newest.term > now - 366 * 86_400_000 ? newest.term : NaN;
  return { instance: top, term: newest.term, since, ttlMs: Math.min(...own.map((s) => s.ttlMs)), shards };
}

/** Whether some instance leads the shard of schedule `name` by `leader` (what {@link leader} read); false for null. */
export function shardLed(leader: LeaderInfo | null, name: string): boolean {
  const shard = shardOf(name);
  return leader !== null && leader.shards.some((s) => s.shard === shard);
}

/** Live worker servers (heartbeat within 3 beats): ZRANGEBYSCORE + MGET of their info keys. */
export async function servers(ctx: InspectorContext): Promise<ServerInfo[]> {
  const ids = await ctx.client.zrangebyscore(ctx.global.servers, engineTime.now(), '+inf');
  if (ids.length === 0) return [];
  // one GET each (not MGET): the info keys are global and may live on different cluster slots
  const p = ctx.client.pipeline();
  for (const id of ids) p.get(ctx.global.server(id));
  const raws = (await execReplies(p)).map(([err, v]) => (err ? null : (v as string | null)));
  return raws.flatMap((raw) => {
    if (!raw) return [];
    const { runningSince: _, ...info } = JSON.parse(raw) as ServerInfo & { runningSince?: unknown }; // read by activeRows
    return [info];
  });
}

function field(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/**
 * The Redis server from one `INFO` (default sections): version, mode, role, memory, the eviction
 * policy — with a warning unless `noeviction` (evicting a lease, a dedup key or a stream breaks
 * Chronos's guarantees) — clients and uptime.
 */
export async function redisInfo(ctx: InspectorContext): Promise<RedisInfo> {
  const info = await ctx.client.info();
  const policy = field(info, 'maxmemory_policy') ?? 'unknown';
  const out: RedisInfo = {
    version: field(info, 'redis_version') ?? '0',
    mode: field(info, 'redis_mode') ?? 'standalone',
    role: field(info, 'role') ?? 'master',
    usedMemoryBytes: Number(field(info, 'used_memory') ?? 0),
    maxMemoryBytes: Number(field(info, 'maxmemory') ?? 0),
    maxMemoryPolicy: policy,
    connectedClients: Number(field(info, 'connected_clients') ?? 0),
    uptimeMs: Number(field(info, 'uptime_in_seconds') ?? 0) * 1000,
  };
  if (policy !== 'noeviction') {
    out.warning =
      `maxmemory-policy is ${policy}: under memory pressure Redis may evict leases, dedup keys or whole queues. ` + 'Set it to noeviction.';
  }
  return out;
}

/**
 * Checks that Redis answers within `timeoutMs` and is >= 6.2 (one `INFO server`).
 * @returns the Redis version. @throws RedisUnreachableError naming the address; RedisVersionError.
 */
export function check(ctx: InspectorContext, timeoutMs: number): Promise<string> {
  return checkServer(ctx.client, { timeoutMs });
}
