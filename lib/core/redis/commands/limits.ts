import { CONSUMER_GROUP, type QueueKeys } from '../keys.js';
import { LIMIT_STATE } from '../protocol.js';
import { RedisScriptError } from '../../runtime/errors.js';
import { runScript, type ScriptName, type ScriptWrapper } from '../scripts.js';
import type { RedisClient } from '../types.js';

/** Typed wrapper of the fleet-wide limits' script (fetch-limited); conventions as in index.ts. */

/**
 * Why a limited fetch handed out nothing while tasks may wait (protocol.ts LIMIT_STATE): `open` (not
 * held back), the queue limit that binds, `groups` (tasks wait only in groups held back by their
 * limits), or `again` (grouped entries were moved into their groups: fetch again at once).
 */
export type LimitState = keyof typeof LIMIT_STATE;

const STATES: LimitState[] = [];
for (const [name, code] of Object.entries(LIMIT_STATE)) STATES[code] = name as LimitState;

/** What fetch-limited.lua handed out, and whether a limit held the queue back. */
export interface LimitedFetch {
  /** Entries handed to the consumer: `[entry id, flat field/value list]` (fields null when the entry is gone). */
  entries: [string, string[] | null][];
  /** `open`, or the limit that binds (nothing was handed out then). */
  state: LimitState;
  /** With state `rate`: in how many ms (Redis time) the next start is allowed; with `groups`: when the next held-back group is looked at again (0 = unknown). */
  waitMs: number;
  /** With state `open` and no entry: the group's last-delivered id (a blocking `XREAD` from there wakes when one comes); else ''. */
  lastId: string;
  /** With state `open` and no entry, in a grouped queue: the group signal's last entry id (block on it too); else ''. */
  signalId: string;
  /** A fetch was held back by the concurrency limit lately (someone may wait for a slot: announce freed ones). */
  waited: boolean;
}

/**
 * fetch-limited.lua: up to `count` entries for `consumer`, no more than the queue's limits allow; a
 * fetch held back by concurrency marks the queue as waited on for `waitMarkMs`. With a `token`, the
 * entries handed out are remembered under it for the consumer: the same call again (its reply was lost)
 * returns those still pending for it instead of handing out more.
 */
export async function fetchLimitedScript(
  client: RedisClient,
  keys: QueueKeys,
  consumer: string,
  count: number,
  waitMarkMs: number,
  token = '',
): Promise<LimitedFetch> {
  const r = await runScript<[[string, string[] | null][], number, number, string, number, string]>(
    client,
    'fetch-limited',
    [keys.stream, keys.limits, keys.rateLog, keys.base],
    [CONSUMER_GROUP, consumer, count, waitMarkMs, token],
  );
  const state = STATES[r[1]];
  if (state === undefined) throw new RedisScriptError('fetch-limited', `unexpected state ${JSON.stringify(r[1])}`);
  return { entries: r[0], state, waitMs: r[2], lastId: r[3], waited: r[4] === 1, signalId: r[5] };
}

/** One group's override change for set-group-limits.lua: each value undefined (leave), null (clear) or the number to set. */
export interface GroupLimitsChange {
  group: string;
  concurrency?: number | null;
  rateMax?: number | null;
  rateMs?: number | null;
}

/**
 * Changes the overrides of some groups of one queue, each atomically (set-group-limits.lua), and
 * keeps the queue's count of overridden groups. @returns that count after the change.
 */
export async function setGroupLimitsScript(client: RedisClient, keys: QueueKeys, changes: readonly GroupLimitsChange[]): Promise<number> {
  const v = (x: number | null | undefined) => (x === undefined ? '' : x === null ? '-' : x);
  const a: (string | number)[] = [];
  for (const c of changes) a.push(c.group, v(c.concurrency), v(c.rateMax), v(c.rateMs));
  return runScript<number>(client, 'set-group-limits', [keys.groupLimits, keys.limits, keys.base], a);
}

/**
 * Sets the fields `set` (field → integer) and deletes the fields `del` of a queue's limits hash in one
 * step (set-limits.lua); with no limit, group override or groups left, the hash is deleted too.
 * @returns true when the queue still has a limit, a group override or groups (it belongs in the `limited` set).
 */
export async function setLimitsScript(
  client: RedisClient,
  keys: QueueKeys,
  set: readonly (readonly [string, number])[],
  del: readonly string[],
): Promise<boolean> {
  const a: (string | number)[] = [set.length];
  for (const [field, value] of set) a.push(field, value);
  a.push(...del);
  return (await runScript<number>(client, 'set-limits', [keys.limits, keys.rateLog, keys.base], a)) === 1;
}

/** The wrapper of each script of this area (the registry in index.ts). */
export const LIMITS_SCRIPTS = {
  'fetch-limited': fetchLimitedScript,
  'set-group-limits': setGroupLimitsScript,
  'set-limits': setLimitsScript,
} as const satisfies Partial<Record<ScriptName, ScriptWrapper>>;
