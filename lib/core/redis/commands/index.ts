/**
 * One typed wrapper per Lua script, grouped by the engine's areas:
 *
 * - queue.ts: enqueue, enqueue-bulk, ack, retry, kill, forward, requeue (the queue and the worker);
 * - due.ts: claim-due, settle-due, lower-due (the due-time index read by the forwarders, and its wakes);
 * - recovery.ts: recover, reclaim-consumer, presence, claim, renew-markers (the pending entries lists);
 * - schedule.ts: fire, fence-schedules, the lease's, the schedule registry's and schedule-admin;
 * - schedule-bulk.ts: put-schedules, remove-schedules (the bulk runtime API of the registry);
 * - shards.ts: shards, release-shards (the shard leases);
 * - shard-due.ts: take-due, advance-due, mark-due (the shards' due index), adopt-schedules, drop-legacy
 *   (the migration of the registry of a version before shards);
 * - admin.ts: page-tasks and the operator's acts (run-tasks, delete-tasks, delete-pending,
 *   retry-dead, backfill);
 * - limits.ts: fetch-limited (a fetch under a queue's fleet-wide limits), set-group-limits;
 * - stats.ts: sample-queue (a queue's depth and latency, once a minute, into its counts).
 *
 * A wrapper lays out KEYS and ARGV as the script's header declares them and maps the bare reply to
 * named results (the code tables are in protocol.ts). A code a script never returns is a
 * RedisScriptError naming the script; Redis error replies are too (scripts.ts runScript).
 * Durations are ms, instants epoch ms; payloads and meta are JSON text. Nothing outside this folder
 * calls runScript or pipeScript: test/unit/script-wrappers.spec.ts checks that, and that every
 * script has exactly one wrapper in {@link SCRIPT_WRAPPERS}.
 */
import type { ScriptName, ScriptWrapper } from '../scripts.js';
import { ADMIN_SCRIPTS } from './admin.js';
import { DUE_SCRIPTS } from './due.js';
import { LIMITS_SCRIPTS } from './limits.js';
import { QUEUE_SCRIPTS } from './queue.js';
import { RECOVERY_SCRIPTS } from './recovery.js';
import { SCHEDULE_SCRIPTS } from './schedule.js';
import { SCHEDULE_BULK_SCRIPTS } from './schedule-bulk.js';
import { SHARD_DUE_SCRIPTS } from './shard-due.js';
import { SHARDS_SCRIPTS } from './shards.js';
import { STATS_SCRIPTS } from './stats.js';

/** Each area's wrappers, by script; the file of area `a` is `./<a>.ts`. */
export const SCRIPT_AREAS = {
  queue: QUEUE_SCRIPTS,
  due: DUE_SCRIPTS,
  recovery: RECOVERY_SCRIPTS,
  schedule: SCHEDULE_SCRIPTS,
  'schedule-bulk': SCHEDULE_BULK_SCRIPTS,
  'shard-due': SHARD_DUE_SCRIPTS,
  shards: SHARDS_SCRIPTS,
  admin: ADMIN_SCRIPTS,
  limits: LIMITS_SCRIPTS,
  stats: STATS_SCRIPTS,
} as const;

/** The typed wrapper of every script (a script missing here does not compile). */
export const SCRIPT_WRAPPERS: Readonly<Record<ScriptName, ScriptWrapper>> = {
  ...QUEUE_SCRIPTS,
  ...DUE_SCRIPTS,
  ...RECOVERY_SCRIPTS,
  ...SCHEDULE_SCRIPTS,
  ...SCHEDULE_BULK_SCRIPTS,
  ...SHARD_DUE_SCRIPTS,
  ...SHARDS_SCRIPTS,
  ...ADMIN_SCRIPTS,
  ...LIMITS_SCRIPTS,
  ...STATS_SCRIPTS,
};
