/**
 * Orphaned schedules, as the leader tracks them. A code-declared schedule is orphaned after the
 * instant its last declaring instance stops counting as live (live-names.ts {@link liveUntil}: the
 * last heartbeat, Redis time, plus the liveness window). The leader
 * - never plans a trigger dated after a schedule's liveUntil by its last liveness read (a stale
 *   read only makes that bound earlier), and passes the bound to fire.lua, which refuses a trigger
 *   dated after it: no trigger after the orphaned-since instant is ever enqueued;
 * - stores that instant once per orphaning, in the scheduler's `orphaned` hash (HSETNX: the first
 *   writer's instant stands), so the Inspector shows the leader's instant, and a later leader knows it
 *   (a leader that never saw the last declarer live, its declaration gone before this leader's first
 *   read, stores the schedule's lastFired: the last trigger enqueued, an earlier instant);
 * - takes an orphaned schedule out of its shard's due index; when a live instance declares it
 *   again, the leader's liveness refresh marks it "look at it now" (mark-due.lua), and its plan
 *   skips the orphaned span like a paused one (plan.ts: counted, logged once, `schedule.skipped`
 *   with reason `orphaned`), never catching it up, then forgets the stored instant.
 * Units: epoch ms (Redis time).
 */
import { SlotPipeline } from '../redis/cluster.js';
import type { RedisClient } from '../redis/connection.js';
import type { SchedulerKeys } from '../redis/keys.js';
import type { Entry } from './due-entry.js';
import type { LiveRead } from './live-names.js';

/** Fields asked for per HSCAN / HMGET call of the orphaned hash. */
const SCAN_COUNT = 1000;

/**
 * When `name` became orphaned, by a read that found it undeclared: the latest final liveUntil of
 * the digests holding it that stopped being live (recently: live-names.ts); else `fallback` (its
 * lastFired: a lower bound, and no trigger after it was enqueued).
 */
export function orphanedSinceOf(name: string, read: LiveRead, fallback: number): number {
  let since = -Infinity;
  for (const v of read.vanished) if (v.until > since && v.names.has(name)) since = v.until;
  return since === -Infinity ? fallback : since;
}

/** The stored orphaned-since instants, by schedule name (HSCAN, {@link SCAN_COUNT} per call). */
export async function readOrphaned(client: RedisClient, keys: SchedulerKeys): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let cursor = '0';
  do {
    const [next, flat] = await client.hscan(keys.orphaned, cursor, 'COUNT', SCAN_COUNT);
    for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i], Number(flat[i + 1]));
    cursor = next;
  } while (cursor !== '0');
  return out;
}

/** The stored orphaned-since instants of `names` (HMGET in chunks of {@link SCAN_COUNT}, all in flight), by name. */
export async function orphanedOf(client: RedisClient, keys: SchedulerKeys, names: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const calls: Promise<void>[] = [];
  for (let i = 0; i < names.length; i += SCAN_COUNT) {
    const chunk = names.slice(i, i + SCAN_COUNT);
    calls.push(
      client.hmget(keys.orphaned, ...chunk).then((values) => {
        values.forEach((v, j) => v !== null && v !== undefined && out.set(chunk[j], Number(v)));
      }),
    );
  }
  await Promise.all(calls);
  return out;
}

/**
 * Stores the orphaned-since instant of each entry unless one is stored (HSETNX), and sets each
 * entry's `orphanedSince` to the stored one (one pipeline).
 */
export async function storeOrphaned(client: RedisClient, keys: SchedulerKeys, entries: readonly Entry[]): Promise<void> {
  if (entries.length === 0) return;
  const p = new SlotPipeline(client); // a command refused while the slot migrates is sent again (cluster.ts)
  for (const e of entries) {
    p.add(keys.orphaned, (c) => c.hsetnx(keys.orphaned, e.stored.name, String(e.orphanedSince)));
    p.add(keys.orphaned, (c) => c.hget(keys.orphaned, e.stored.name));
  }
  const replies = await p.exec();
  entries.forEach((e, i) => {
    const [err, v] = replies[i * 2 + 1];
    if (err) throw err;
    if (v !== null && v !== undefined) e.orphanedSince = Number(v);
  });
}

/** Forgets stored orphaned-since instants (their span was skipped, or the schedule is gone). */
export async function forgetOrphaned(client: RedisClient, keys: SchedulerKeys, names: readonly string[]): Promise<void> {
  for (let i = 0; i < names.length; i += SCAN_COUNT) await client.hdel(keys.orphaned, ...names.slice(i, i + SCAN_COUNT));
}

/**
 * Applies a liveness read to the code-declared entries of a batch (runtime ones are always live):
 * each one's liveUntil; a live one with a stored orphaned-since instant gets the span to skip,
 * (since, now]; an undeclared one gets its orphaned-since instant (the stored one, else from the
 * read: {@link orphanedSinceOf}) and is returned to be stored.
 * @param stored the stored orphaned-since instants of these entries ({@link orphanedOf})
 */
export function applyLiveness(
  entries: readonly Entry[],
  read: LiveRead,
  stored: ReadonlyMap<string, number>,
  now: number,
  liveUntilOf: (name: string) => number,
): Entry[] {
  const toStore: Entry[] = [];
  for (const e of entries) {
    const name = e.stored.name;
    e.liveUntil = liveUntilOf(name);
    e.live = read.names.has(name);
    const at = stored.get(name);
    if (!e.live) {
      e.orphanedSince = at ?? orphanedSinceOf(name, read, e.lastFired);
      if (at === undefined) toStore.push(e);
    } else if (at !== undefined) {
      e.orphanSpan = { since: at, until: Math.max(now, at) };
    }
  }
  return toStore;
}
