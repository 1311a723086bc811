import { CONSUMER_GROUP, type GlobalKeys, type QueueKeys } from '../keys.js';
import { runScript, type ScriptName, type ScriptWrapper } from '../scripts.js';
import type { RedisClient } from '../types.js';

/**
 * Typed wrappers of the scripts that keep the pending entries lists honest: recover.lua (reclaim
 * past the visibility timeout, poison, lost), reclaim-consumer.lua (reclaim a dead consumer's
 * entries at once), presence.lua (liveness of the worker servers), redis-run.lua (since when the
 * running Redis process has been answering them),
 * claim.lua (claims and markers of a live consumer), renew-markers.lua (markers of tasks put back
 * in the stream) and delete-consumers.lua (consumers of gone servers). Conventions as in index.ts.
 */

/** One round of recover.lua. */
export interface RecoverArgs {
  /** The recovering consumer: it holds the poison tasks afterwards, to kill them. */
  consumer: string;
  /** The visibility timeout, ms. */
  minIdleMs: number;
  /** Most entries this round. */
  count: number;
  /** Reclaims before a task is poison. */
  maxDeliveries: number;
  /** Lifetime of the day's lost counter, ms. */
  counterTtlMs: number;
  /** XAUTOCLAIM start id; protocol.ts SCAN_START for a new scan. */
  cursor: string;
  /**
   * Entry ids the recovering consumer holds live (its slot table): left pending for it, their idle
   * time reset, whatever their idle time was (a stall of its own process); none when absent.
   */
  keep?: readonly string[];
  /**
   * The lateness check: `sentAtMs` is Redis time (the sender's estimate, never ahead of it: epoch ms)
   * when the call is sent; a call Redis runs more than `maxLateMs` ms after it takes nothing (it
   * waited behind a stalled Redis, where live holders' claim renewals may wait too) and reports how
   * late it ran ({@link RecoverOutcome.lateMs}). None when absent.
   */
  late?: { readonly sentAtMs: number; readonly maxLateMs: number };
}

/** A task recover.lua put back in the stream: its id, type and new meta (JSON text of protocol.ts TaskMeta). */
export interface RequeuedTask {
  taskId: string;
  type: string;
  meta: string;
}

/** A poison task recover.lua left pending for the recovering consumer: its entry and its stored form (with the error). */
export interface PoisonTask {
  entryId: string;
  stored: string;
}

/** What one round of recover.lua did, and the cursor of the next round (SCAN_START = done). */
export interface RecoverOutcome {
  requeued: RequeuedTask[];
  poison: PoisonTask[];
  /** Entry ids whose stream entry was gone: lost (counted in the day's lost counter). */
  lost: string[];
  cursor: string;
  /**
   * 0 when the round ran; otherwise how many ms after `late.sentAtMs` Redis ran it (more than
   * `late.maxLateMs`): it took nothing, and `cursor` is the one it was given.
   */
  lateMs: number;
}

/** Reclaims entries idle past the visibility timeout: back to the stream, poison to kill, or lost (recover.lua). */
export async function recoverScript(client: RedisClient, keys: QueueKeys, r: RecoverArgs): Promise<RecoverOutcome> {
  const [requeued, poison, lost, cursor, lateMs] = await runScript<
    [[string, string, string][], [string, string][], string[], string, number]
  >(
    client,
    'recover',
    [keys.stream, keys.reclaimed, keys.counts, keys.base],
    [
      CONSUMER_GROUP,
      r.consumer,
      r.minIdleMs,
      r.count,
      r.maxDeliveries,
      r.counterTtlMs,
      r.cursor,
      r.late?.sentAtMs ?? 0,
      r.late?.maxLateMs ?? 0,
      ...(r.keep ?? []),
    ],
  );
  return {
    requeued: requeued.map(([taskId, type, meta]) => ({ taskId, type, meta })),
    poison: poison.map(([entryId, stored]) => ({ entryId, stored })),
    lost,
    cursor,
    lateMs: Number(lateMs ?? 0),
  };
}

/** An entry a consumer holds, with its task's markers (uid and/or overlap keys; none for most tasks). */
export interface HeldEntry {
  entryId: string;
  taskId: string;
  markers: readonly string[];
}

/**
 * What claim.lua did: the entries still this consumer's (claims reset), those pending whose stream
 * entry is gone, and the claimed ones one of whose markers another task holds now (a newer trigger
 * took the overlap marker of a `cancel-previous` schedule: `holder` is that trigger's task id).
 */
export interface ClaimOutcome {
  claimed: string[];
  gone: string[];
  taken: { entryId: string; holder: string }[];
  /** Entries pending for no consumer any more: acked or dead-lettered by someone else (an operator's cancel). */
  ended: string[];
}

/**
 * Resets the idle time of the entries `consumer` still holds and renews their markers to
 * `markerTtlMs` (claim.lua); entries it no longer holds are left alone, gone ones stay pending;
 * reports the claimed ones whose markers another task holds now, and those pending for no consumer.
 */
export async function claimScript(
  client: RedisClient,
  keys: QueueKeys,
  consumer: string,
  markerTtlMs: number,
  entries: readonly HeldEntry[],
): Promise<ClaimOutcome> {
  const plain: string[] = [];
  const k = [keys.stream];
  const flagged: (string | number)[] = [];
  for (const e of entries) {
    if (e.markers.length === 0) plain.push(e.entryId);
    else {
      k.push(...e.markers);
      flagged.push(e.entryId, e.taskId, e.markers.length);
    }
  }
  const a = [CONSUMER_GROUP, consumer, markerTtlMs, plain.length, ...plain, ...flagged];
  const [claimed, gone, taken, ended] = await runScript<[string[], string[], [string, string][], string[]]>(client, 'claim', k, a);
  return { claimed, gone, taken: taken.map(([entryId, holder]) => ({ entryId, holder })), ended };
}

/**
 * Renews the markers of tasks of one queue put back in the stream to MARKER_TTL.waitingMs
 * (renew-markers.lua); tasks without markers are skipped.
 */
export async function renewMarkersScript(
  client: RedisClient,
  tasks: readonly { taskId: string; markers: readonly string[] }[],
): Promise<void> {
  const k: string[] = [];
  const a: (string | number)[] = [];
  for (const t of tasks) {
    if (t.markers.length === 0) continue;
    k.push(...t.markers);
    a.push(t.taskId, t.markers.length);
  }
  if (a.length > 0) await runScript(client, 'renew-markers', k, a);
}

/** True when a recoverer took `entryId` from its consumer lately (it is in `<q>:reclaimed`); false when it is simply gone. */
export async function wasReclaimed(client: RedisClient, keys: QueueKeys, entryId: string): Promise<boolean> {
  return (await client.zscore(keys.reclaimed, entryId)) !== null;
}

/** One call of reclaim-consumer.lua: what it did to the entries of `from`, and whether more may be pending. */
export interface ReclaimOutcome {
  requeued: RequeuedTask[];
  poison: PoisonTask[];
  /** Entry ids whose stream entry was gone: lost (counted in the day's lost counter). */
  lost: string[];
  /** True when `count` entries were pending: call again for the rest. */
  more: boolean;
}

/**
 * Takes up to `count` pending entries of consumer `from` at once, whatever their idle time, to
 * `consumer` (reclaim-consumer.lua): back to the stream, poison to kill, or lost, as recover.lua does.
 */
export async function reclaimConsumerScript(
  client: RedisClient,
  keys: QueueKeys,
  r: { consumer: string; from: string; count: number; maxDeliveries: number; counterTtlMs: number },
): Promise<ReclaimOutcome> {
  const [requeued, poison, lost, more] = await runScript<[[string, string, string][], [string, string][], string[], number]>(
    client,
    'reclaim-consumer',
    [keys.stream, keys.reclaimed, keys.counts, keys.base],
    [CONSUMER_GROUP, r.consumer, r.from, r.count, r.maxDeliveries, r.counterTtlMs],
  );
  return {
    requeued: requeued.map(([taskId, type, meta]) => ({ taskId, type, meta })),
    poison: poison.map(([entryId, stored]) => ({ entryId, stored })),
    lost,
    more: more === 1,
  };
}

/** What one presence tick saw (presence.lua), Redis time. */
export interface PresenceOutcome {
  /** Redis time of the tick, whole epoch ms. */
  nowMs: number;
  /** The same with its sub-millisecond part (Redis's TIME has microseconds), epoch ms: a tighter sample for the time source. */
  exactNowMs: number;
  /** Other servers with no subscriber on their liveness channel (only read with `judge`). */
  silent: string[];
  /** Other servers whose score has passed (their main loop has not ticked for their `staleAfterMs`), with by how much, ms. */
  overdue: { id: string; overdueMs: number }[];
  /** Subscribers of the ticking server's own liveness shard channel on the Redis that ran the script (judge `'sharded'` only, else 0). */
  ownSubscribers: number;
  /** Other servers of the namespace in `<ns>:live` (live, or overdue by less than `keepMs`): 0 when the ticking server is alone. */
  others: number;
}

/**
 * A worker server's presence tick (presence.lua): renews `serverId`'s score in `<ns>:live` to Redis
 * now + `staleAfterMs` (unless `register` is false), drops members expired more than `keepMs` ago,
 * and reports the overdue servers and, with `judge`, those whose liveness channel has no subscriber:
 * `true` counts channel subscribers (SUBSCRIBE: one Redis, Sentinel), `'sharded'` shard-channel
 * subscribers (SSUBSCRIBE: Redis Cluster, Redis ≥ 7.0), `false` neither.
 */
export async function presenceScript(
  client: RedisClient,
  keys: GlobalKeys,
  p: { serverId: string; staleAfterMs: number; keepMs: number; judge: boolean | 'sharded'; register: boolean },
): Promise<PresenceOutcome> {
  const judge = p.judge === 'sharded' ? '2' : p.judge ? '1' : '0';
  const [nowMs, silent, flat, own, others, us] = await runScript<[number, string[], (string | number)[], number, number, number]>(
    client,
    'presence',
    [keys.live],
    [p.serverId, p.staleAfterMs, p.keepMs, judge, keys.aliveChannelPrefix, p.register ? '1' : '0'],
  );
  const overdue: { id: string; overdueMs: number }[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) overdue.push({ id: String(flat[i]), overdueMs: Number(flat[i + 1]) });
  return {
    nowMs,
    exactNowMs: nowMs + Number(us ?? 0) / 1000,
    silent,
    overdue,
    ownSubscribers: Number(own ?? 0),
    others: Number(others ?? 0),
  };
}

/**
 * Since when the running Redis process (`runId`, INFO server `run_id`) has been answering the worker
 * servers of the namespace, Redis time (redis-run.lua): as recorded by the first server that started
 * under it; now when this call is that first one (Redis restarted or failed over since the record); or
 * Redis's own start (now − `uptimeMs`) when there is no record.
 */
export async function redisRunScript(
  client: RedisClient,
  keys: GlobalKeys,
  p: { runId: string; uptimeMs: number },
): Promise<{ sinceMs: number; nowMs: number }> {
  const [sinceMs, nowMs] = await runScript<[number, number]>(client, 'redis-run', [keys.redisRun], [p.runId, p.uptimeMs]);
  return { sinceMs, nowMs };
}

/**
 * Deletes the consumers among `names` that are still idle longer than `idleMs` and own no pending
 * entry, each checked and deleted atomically (delete-consumers.lua).
 * @returns the names deleted
 */
export function deleteConsumersScript(client: RedisClient, stream: string, idleMs: number, names: readonly string[]): Promise<string[]> {
  return runScript<string[]>(client, 'delete-consumers', [stream], [CONSUMER_GROUP, String(idleMs), ...names]);
}

/** The wrapper of each script of this area (the registry in index.ts). */
export const RECOVERY_SCRIPTS = {
  recover: recoverScript,
  'reclaim-consumer': reclaimConsumerScript,
  presence: presenceScript,
  'redis-run': redisRunScript,
  claim: claimScript,
  'renew-markers': renewMarkersScript,
  'delete-consumers': deleteConsumersScript,
} as const satisfies Partial<Record<ScriptName, ScriptWrapper>>;
