import { SlotPipeline } from '../redis/cluster.js';
import type { RedisClient } from '../redis/connection.js';
import type { QueueKeys } from '../redis/keys.js';
import { HISTORY } from '../redis/protocol.js';

/**
 * The fire history of schedules: per schedule, a capped LIST of its last fires, newest first, at
 * `QueueKeys.history(schedule)` (the target queue's hash tag), capped and expiring by protocol.ts
 * HISTORY. The scheduler's fire path writes it inside fire.lua, with the fire itself (the same
 * records; fire.lua's `historyOutcome` maps its results to {@link FireOutcome}s, and early, stale or
 * fenced triggers leave none); the Inspector's trigger and backfill acts add theirs with
 * {@link recordFires} (one pipeline per call and queue: one hash slot); the Inspector reads it
 * with {@link readFires}.
 */

/**
 * What became of one trigger: `enqueued` (its task was added), `buffered` (it waited behind the
 * schedule's live task, overlap `buffer-one`: its task was added when that one ended),
 * `superseding` (enqueued, superseding the schedule's live task: overlap `cancel-previous`),
 * `duplicate` (its dedup key existed: fired before), `skipped-overlap` (the previous task of the schedule was still live),
 * `skipped-paused` / `skipped-catch-up` (not enqueued by the pause or the catch-up policy; `count`
 * may cover several triggers), `retracted` (enqueued ahead of its instant, then taken back before it
 * came by a pause, removal or change of the schedule: fence-schedules.lua), `manual` (an operator's trigger-now), `backfill` (an operator's
 * backfill enqueued it).
 */
export type FireOutcome =
  | 'enqueued'
  | 'buffered'
  | 'superseding'
  | 'duplicate'
  | 'skipped-overlap'
  | 'skipped-paused'
  | 'skipped-catch-up'
  | 'retracted'
  | 'manual'
  | 'backfill';

/** One entry of a schedule's history. Instants are epoch ms. @publicApi */
export interface FireRecord {
  /** The trigger instant (for `manual`, when it was asked for). */
  triggerAt: number;
  /** When it was recorded (Redis time when known, else the recorder's clock). */
  at: number;
  /** What became of the trigger: enqueued, buffered, superseding, duplicate, skipped-overlap, skipped-paused, skipped-catch-up, retracted, manual or backfill. */
  outcome: FireOutcome;
  /** The task it enqueued (or found, for `duplicate`): `<schedule>:<trigger-unix>`, or `<schedule>:manual:<uuid>`. */
  taskId?: string;
  /** Triggers this record stands for (skips are recorded once per run of skips). @defaultValue 1 */
  count?: number;
  /** Who fired it: the leader's instance id, or the operator's actor string. */
  by?: string;
}

/** Most records kept per schedule (the oldest are trimmed). */
export const HISTORY_LIMIT: number = HISTORY.limit;
/** A schedule's history expires this long after its last record, ms (30 days): a removed schedule's goes away. */
export const HISTORY_TTL_MS: number = HISTORY.ttlMs;

/**
 * Appends fire records of schedules that target one queue (`keys`): per schedule one `LPUSH` of
 * its records (oldest first in `records`, so the newest ends up at the head), `LTRIM` to
 * {@link HISTORY_LIMIT} and `PEXPIRE` {@link HISTORY_TTL_MS} — one pipeline, one round trip.
 * `upkeep(schedule, added)` may leave the trim or the expiry out of a call (the leader trims every
 * few fires and renews the TTL about hourly, so a fire costs about one command of history).
 * Records whose `outcome` is undefined are left out.
 */
export async function recordFires(
  client: RedisClient,
  keys: QueueKeys,
  records: readonly (Omit<FireRecord, 'outcome'> & { schedule: string; outcome: FireOutcome | undefined })[],
  upkeep: (schedule: string, added: number) => { trim: boolean; expire: boolean } = () => ({ trim: true, expire: true }),
): Promise<void> {
  const bySchedule = new Map<string, string[]>();
  for (const { schedule, ...r } of records) {
    if (r.outcome === undefined) continue;
    const list = bySchedule.get(schedule) ?? [];
    list.push(JSON.stringify(r));
    bySchedule.set(schedule, list);
  }
  if (bySchedule.size === 0) return;
  // a SlotPipeline: while the slot migrates, a command refused (its key left) is sent again by itself,
  // to the importing node (a plain pipeline threw, or never reached a master just added)
  const p = new SlotPipeline(client);
  for (const [schedule, items] of bySchedule) {
    const key = keys.history(schedule);
    const { trim, expire } = upkeep(schedule, items.length);
    p.add(key, (c) => c.lpush(key, ...items.slice(-HISTORY_LIMIT)));
    if (trim) p.add(key, (c) => c.ltrim(key, 0, HISTORY_LIMIT - 1));
    if (expire) p.add(key, (c) => c.pexpire(key, HISTORY_TTL_MS));
  }
  for (const [err] of await p.exec()) if (err) throw err;
}

/** The last `limit` fire records of a schedule, newest first (`LRANGE`, O(limit)). Unparsable entries are skipped. */
export async function readFires(client: RedisClient, keys: QueueKeys, schedule: string, limit = 20): Promise<FireRecord[]> {
  const raws = await client.lrange(keys.history(schedule), 0, Math.max(0, Math.min(limit, HISTORY_LIMIT) - 1));
  const out: FireRecord[] = [];
  for (const raw of raws) {
    try {
      out.push(JSON.parse(raw) as FireRecord);
    } catch {
      /* not ours: skip */
    }
  }
  return out;
}
