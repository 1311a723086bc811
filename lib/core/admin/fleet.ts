import { execReads, SlotPipeline } from '../redis/cluster.js';
import { checkServer } from '../redis/connection.js';
import { CONSUMER_GROUP, shardOf } from '../redis/keys.js';
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
  const replies = await execReads(ctx.client, (p) => p.hgetall(ctx.sched.shards).time());
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

/**
 * The names of the queues no live worker server serves (an `overdue` server — stopped, hung — holds
 * tasks but serves nothing), in the order of `queues`: their tasks wait until a worker serving them
 * starts. What `chronos stats` and the console's overview warn of.
 */
export function unservedQueues(queues: readonly { name: string }[], servers: readonly ServerInfo[]): string[] {
  const served = new Set(servers.filter((s) => s.state === 'live').flatMap((s) => Object.keys(s.queues)));
  return queues.filter((q) => !served.has(q.name)).map((q) => q.name);
}

/**
 * The worker servers (see {@link ServerInfo}): those whose heartbeat is within 3 beats, and past that
 * those that still hold entries in their queues' pending entries lists, listed `overdue` — a server
 * stopped (SIGSTOP), hung or gone unnoticed keeps its tasks until the visibility timeout or its death
 * hands them on, and an operator must see who holds them. Before, a server left the list 15 s after
 * its last heartbeat whatever it held. State from its presence in `<ns>:live` (Redis time).
 * Costs one pipeline on the global slot (ZRANGE WITHSCORES of `servers`; per server a GET of its info
 * and a ZSCORE in `live`), and while some server is overdue one XPENDING (summary form) per queue
 * the overdue servers serve.
 */
export async function servers(ctx: InspectorContext): Promise<ServerInfo[]> {
  const rows = await ctx.client.zrange(ctx.global.servers, 0, -1, 'WITHSCORES');
  if (rows.length === 0) return [];
  const ids: string[] = [];
  const beatUntil = new Map<string, number>();
  for (let i = 0; i + 1 < rows.length; i += 2) {
    ids.push(rows[i]);
    beatUntil.set(rows[i], Number(rows[i + 1]));
  }
  // one GET and one ZSCORE each (not MGET): one slot ({<ns>:global}), one pipeline
  // a read refused while the global slot migrates is sent again (execReads): read as absent, a live server was left out
  const replies = (
    await execReads(ctx.client, (p) => {
      for (const id of ids) p.get(ctx.global.server(id)).zscore(ctx.global.live, id);
    })
  ).map(([err, v]) => (err ? null : (v as string | null)));
  const now = engineTime.now();
  const out: ServerInfo[] = [];
  ids.forEach((id, i) => {
    const raw = replies[2 * i];
    if (!raw) return; // stopped or found dead meanwhile, or its info expired (DEFAULTS.serverInfoKeepMs)
    const presence = replies[2 * i + 1];
    const { runningSince: _, ...info } = JSON.parse(raw) as ServerInfo & { runningSince?: unknown }; // read by activeRows
    // an absent presence (pruned 5 min after it passed, or a server of a version before presence) counts as passed
    out.push({ ...info, state: presence !== null && Number(presence) >= now ? 'live' : 'overdue' });
  });
  const overdue = out.filter((s) => s.state === 'overdue');
  if (overdue.length === 0) return out;
  const held = await pendingOf(ctx, overdue);
  for (const s of overdue) s.pending = held.get(s.id) ?? 0;
  // past its heartbeat a server is listed only while it holds entries
  return out.filter((s) => s.state === 'live' || beatUntil.get(s.id)! >= now || s.pending! > 0);
}

/** How many entries each of `servers` holds in its queues' pending entries lists: one XPENDING (summary) per queue. */
async function pendingOf(ctx: InspectorContext, servers: readonly ServerInfo[]): Promise<Map<string, number>> {
  const wanted = new Set(servers.map((s) => s.id));
  const queues = [...new Set(servers.flatMap((s) => Object.keys(s.queues)))];
  const p = new SlotPipeline(ctx.client);
  for (const q of queues) {
    const stream = ctx.keys(q).stream;
    p.add(stream, (c) => c.xpending(stream, CONSUMER_GROUP));
  }
  const held = new Map<string, number>();
  for (const [err, reply] of await p.exec()) {
    if (err) continue; // NOGROUP: nothing pending there
    const consumers = (reply as [number, string | null, string | null, [string, string][] | null])[3] ?? [];
    for (const [id, n] of consumers) if (wanted.has(id)) held.set(id, (held.get(id) ?? 0) + Number(n));
  }
  return held;
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
