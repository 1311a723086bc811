/**
 * The leader's backfill of the schedule registry's indexes (the names ZSET and the label ZSETs of
 * the `schedule-index` Lua snippet), for a registry written by a version without them: at each
 * acquisition of the lease, index-schedules.lua steps (each bounded: 250 entries or 4 ms of Redis)
 * with a pause between them, in the background, until the indexes are complete. Once they are,
 * that is one O(1) step. The first `Inspector.schedulePage` call completes them itself when this
 * has not finished (admin/schedule-page.ts ensureIndexed).
 */
import type { RedisClient } from '../redis/connection.js';
import { indexSchedulesScript } from '../redis/commands/schedule.js';
import type { SchedulerKeys } from '../redis/keys.js';
import type { ChronosLogger } from '../runtime/logger.js';

/** Registry entries per step (as the page call's). */
const STEP_COUNT = 250;
/** Pause between two steps, ms: the backfill keeps Redis busy a fraction of the time only (fires go between). */
const PAUSE_MS = 10;

/**
 * Runs the backfill until the indexes are complete or `keepGoing()` turns false (the lease was
 * lost; the next leader goes on from the state kept in Redis). Never throws: a failure is logged
 * (debug) and left to the next acquisition or page call.
 * @returns the number of steps run.
 */
export async function backfillIndexes(
  client: RedisClient,
  keys: SchedulerKeys,
  keepGoing: () => boolean,
  logger: ChronosLogger,
): Promise<number> {
  let steps = 0;
  try {
    while (keepGoing()) {
      steps++;
      if ((await indexSchedulesScript(client, keys, STEP_COUNT)).ready) break;
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS).unref());
    }
    if (steps > 1) logger.debug?.(`Schedule registry indexes complete after ${steps} backfill steps`);
  } catch (err) {
    logger.debug?.(`Schedule registry index backfill stopped: ${(err as Error).message}`);
  }
  return steps;
}
