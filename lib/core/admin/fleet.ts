import { checkServer } from '../redis/connection.js';
import type { InspectorContext } from './context.js';
import type { LeaderInfo, RedisInfo, ServerInfo } from './types.js';
import { engineTime } from '../runtime/time.js';

/** The current leader, or null when nobody holds the lease: one MULTI of GET + PTTL (lease) and HGETALL (leader). */
export async function leader(ctx: InspectorContext): Promise<LeaderInfo | null> {
  const multi = ctx.client.multi().get(ctx.sched.lease).pttl(ctx.sched.lease).hgetall(ctx.sched.leader);
  const [[, lease], [, ttl], [, info]] = (await multi.exec()) as [
    [unknown, string | null],
    [unknown, number],
    [unknown, Record<string, string>],
  ];
  if (!lease) return null;
  const sep = lease.lastIndexOf('|');
  const term = Number(lease.slice(sep + 1));
  return { instance: lease.slice(0, sep), term, since: info.term === String(term) ? Number(info.since) : NaN, ttlMs: ttl };
}

/** Live worker servers (heartbeat within 3 beats): ZRANGEBYSCORE + MGET of their info keys. */
export async function servers(ctx: InspectorContext): Promise<ServerInfo[]> {
  const ids = await ctx.client.zrangebyscore(ctx.global.servers, engineTime.now(), '+inf');
  if (ids.length === 0) return [];
  // one GET each (not MGET): the info keys are global and may live on different cluster slots
  const p = ctx.client.pipeline();
  for (const id of ids) p.get(ctx.global.server(id));
  const raws = (await p.exec())!.map(([err, v]) => (err ? null : (v as string | null)));
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
