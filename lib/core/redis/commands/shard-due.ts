/**
 * The typed wrappers of the shards' due index and of the migration into the shards (conventions as
 * in index.ts): take-due and advance-due (a batch of a shard leader's tick), mark-due ("look at it
 * now"), adopt-schedules and drop-legacy (the registry of a version before shards, moved into the
 * shards). docs/scheduler-shards.md. Instants are epoch ms (Redis time); definitions JSON text.
 */
import type { SchedulerKeys, ShardKeys } from '../keys.js';
import { runScript, runScriptBuffer, type ScriptName, type ScriptWrapper } from '../scripts.js';
import type { RedisClient } from '../types.js';

/** One schedule whose wake instant has come, as take-due.lua returns it. */
export interface DueItem {
  name: string;
  /** Its score in the due index, as stored (a string: advance-due.lua compares it exactly). */
  score: string;
  /**
   * Its definition JSON as UTF-8 bytes (undecoded: the leader compares them with the cached
   * definition's, and decodes only a changed one); undefined when the registry holds none (an
   * index entry left behind). A view of the reply's buffer: copy it to keep it.
   */
  json: Buffer | undefined;
}

/** A batch of a shard's tick: the schedules due by `upTo`, and the next wake instant after them (undefined: none). */
export interface DueBatch {
  items: DueItem[];
  /** The first wake instant after `upTo`, epoch ms (possibly fractional: a change's mark). */
  next: number | undefined;
}

/**
 * The schedules of a shard's due index whose wake instant is at or before `upTo` (epoch ms), oldest
 * first, at most `limit`, with their definitions as bytes (take-due.lua; reads only). A definition is
 * left undecoded: at every tick the leader reads each due schedule's, and decodes only a changed one.
 */
export async function takeDueScript(client: RedisClient, keys: ShardKeys, upTo: number, limit: number): Promise<DueBatch> {
  const flat = await runScriptBuffer<Buffer[]>(client, 'take-due', [keys.due, keys.schedules], [Math.floor(upTo), limit]);
  const items: DueItem[] = [];
  for (let i = 0; i + 2 < flat.length; i += 3) {
    const json = flat[i + 2];
    items.push({ name: flat[i].toString(), score: flat[i + 1].toString('latin1'), json: json.length > 0 ? json : undefined });
  }
  const next = flat[flat.length - 1];
  return { items, next: next === undefined || next.length === 0 ? undefined : Number(next.toString('latin1')) };
}

/** A planned schedule's move in the due index: from the score read to its next wake instant (epoch ms), or out of it (`undefined`). */
export interface DueMove {
  name: string;
  /** The score take-due.lua returned. */
  read: string;
  /** The new wake instant, epoch ms (floored to an integer: a leader's score), or undefined to take it out. */
  next: number | undefined;
}

/**
 * Moves planned schedules' wake instants on, each only when its score is still the one read
 * (advance-due.lua: the batch's moves as the lines of one argument). @returns how many had moved
 * meanwhile (a change marked them: left as they were).
 */
export async function advanceDueScript(client: RedisClient, keys: ShardKeys, moves: readonly DueMove[]): Promise<number> {
  if (moves.length === 0) return 0;
  let lines = '';
  for (const m of moves) lines += `${m.name} ${m.read} ${m.next === undefined ? '' : Math.floor(m.next)}\n`;
  return runScript<number>(client, 'advance-due', [keys.due], [lines]);
}

/** Marks schedules of one shard "look at it now" in its due index, those stored and not paused (mark-due.lua). @returns how many */
export async function markDueScript(client: RedisClient, keys: ShardKeys, names: readonly string[]): Promise<number> {
  if (names.length === 0) return 0;
  return runScript<number>(client, 'mark-due', [keys.schedules, keys.prefix], names);
}

/**
 * Stores definitions of a version before shards in their shard unless it holds them at least as new
 * (adopt-schedules.lua). @returns how many were stored, and the names the shard now holds at least as new.
 */
export async function adoptSchedulesScript(
  client: RedisClient,
  keys: ShardKeys,
  defs: readonly (readonly [name: string, json: string])[],
): Promise<{ adopted: number; settled: string[] }> {
  if (defs.length === 0) return { adopted: 0, settled: [] };
  const [adopted, settled] = await runScript<[number, string[]]>(
    client,
    'adopt-schedules',
    [keys.schedules, keys.version, keys.prefix],
    defs.flat(),
  );
  return { adopted, settled };
}

/**
 * Deletes definitions from the registry of a version before shards, each only when unchanged since
 * read (drop-legacy.lua). @returns how many were deleted, and how many are left there.
 */
export async function dropLegacyScript(
  client: RedisClient,
  keys: SchedulerKeys,
  defs: readonly (readonly [name: string, json: string])[],
): Promise<{ deleted: number; left: number }> {
  const [deleted, left] = await runScript<[number, number]>(client, 'drop-legacy', [keys.legacySchedules], defs.flat());
  return { deleted, left };
}

/** The wrapper of each script of this area (the registry in index.ts). */
export const SHARD_DUE_SCRIPTS = {
  'take-due': takeDueScript,
  'advance-due': advanceDueScript,
  'mark-due': markDueScript,
  'adopt-schedules': adoptSchedulesScript,
  'drop-legacy': dropLegacyScript,
} as const satisfies Partial<Record<ScriptName, ScriptWrapper>>;
