/**
 * The rolling deploy from a version before shards (docs/scheduler-shards.md, "Compatibility"): the
 * registry it wrote, one HASH in the scheduler's slot (keys.ts SchedulerKeys.legacySchedules), is
 * moved into the shards in bounded steps — HSCAN of {@link MIGRATE_COUNT} definitions,
 * adopt-schedules.lua per shard (stored unless the shard holds the name at least as new, indexed,
 * marked "look at it now" in the due index), then drop-legacy.lua (each deleted only when unchanged
 * since read: a definition an older instance wrote again meanwhile waits for the next pass). When the
 * legacy registry is empty, its indexes (names, labels, backfill state) go too.
 *
 * Any instance runs a pass at its start and when an older version's change notice arrives (its
 * message is not a list of shard numbers); passes of several instances may overlap safely. Meanwhile
 * an older version's leader fires from its own table: both may fire a trigger, and its dedup key
 * `<schedule>:<trigger-unix>` keeps it once.
 */
import type { ChronosLogger } from '../runtime/logger.js';
import type { RedisClient } from '../redis/connection.js';
import { byShard, type SchedulerKeys } from '../redis/keys.js';
import { adoptSchedulesScript, dropLegacyScript } from '../redis/commands/shard-due.js';

/** Legacy definitions per HSCAN call of a migration step. */
export const MIGRATE_COUNT = 250;
/** Keys asked for per SCAN call when the legacy indexes are deleted. */
const SCAN_COUNT = 500;

/** What a migration pass did. */
export interface MigrationResult {
  /** Definitions stored in a shard. */
  adopted: number;
  /** Definitions deleted from the legacy registry. */
  dropped: number;
  /** Definitions left in the legacy registry (written again meanwhile). */
  left: number;
}

/**
 * Moves the legacy registry into the shards (see the module doc), one step at a time with a turn of
 * the event loop between steps. `going()` is asked before each step (false: stop, e.g. the
 * scheduler stops). @returns what the pass did. Errors of Redis reject (the next pass goes on).
 */
export async function migrateLegacyRegistry(
  client: RedisClient,
  keys: SchedulerKeys,
  logger: ChronosLogger,
  going: () => boolean = () => true,
): Promise<MigrationResult> {
  const out: MigrationResult = { adopted: 0, dropped: 0, left: 0 };
  if ((await client.hlen(keys.legacySchedules)) === 0) return out;
  logger.log('Moving the schedule registry of an earlier version into the shards (a rolling deploy)');
  let cursor = '0';
  do {
    if (!going()) return out;
    const [next, flat] = await client.hscan(keys.legacySchedules, cursor, 'COUNT', MIGRATE_COUNT);
    cursor = next;
    const defs: [string, string][] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) defs.push([flat[i], flat[i + 1]]);
    const settled: [string, string][] = [];
    for (const [shard, group] of byShard(keys.namespace, defs, (d) => d[0])) {
      const r = await adoptSchedulesScript(client, shard, group);
      out.adopted += r.adopted;
      const done = new Set(r.settled);
      for (const d of group) if (done.has(d[0])) settled.push(d);
    }
    if (settled.length > 0) {
      const r = await dropLegacyScript(client, keys, settled);
      out.dropped += r.deleted;
      out.left = r.left;
    }
    await new Promise((resolve) => setImmediate(resolve));
  } while (cursor !== '0');
  if (out.left === 0) await dropLegacyIndexes(client, keys);
  logger.log(`Moved the earlier version's schedules into the shards (adopted=${out.adopted} dropped=${out.dropped} left=${out.left})`);
  return out;
}

/**
 * Deletes the legacy registry's indexes (the scheduler's slot: names, labels, backfill state): SCAN
 * in bounded calls on each master (on a cluster they all sit on the master of the scheduler's slot).
 */
async function dropLegacyIndexes(client: RedisClient, keys: SchedulerKeys): Promise<void> {
  await client.unlink(keys.prefix + 'index:names', keys.prefix + 'index:state');
  const cluster = client as RedisClient & { isCluster?: boolean; nodes?(role: 'master'): RedisClient[] };
  const nodes = cluster.isCluster && cluster.nodes ? cluster.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', `${keys.prefix}label:*`, 'COUNT', SCAN_COUNT);
      cursor = next;
      for (const key of found) await client.unlink(key);
    } while (cursor !== '0');
  }
}
