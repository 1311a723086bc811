/**
 * The typed wrappers of the bulk runtime API's scripts (conventions as in index.ts): put-schedules
 * (add or upsert one chunk of definitions) and remove-schedules (one chunk of names). Definitions
 * are JSON text; instants are epoch ms (Redis time).
 */
import type { ShardKeys } from '../keys.js';
import { runScript, type ScriptName, type ScriptWrapper } from '../scripts.js';
import type { RedisClient } from '../types.js';
import type { Fence } from './schedule.js';

/** How put-schedules.lua treats a name the registry holds: `add` leaves it untouched, `upsert` replaces it when its fingerprint differs. */
/** `upsert-force`: an upsert that also replaces definitions declared in code. */
export type PutMode = 'add' | 'upsert' | 'upsert-force';

/** One definition for put-schedules.lua: its name, fingerprint and JSON. */
export interface PutDefinition {
  name: string;
  /** The fingerprint (`fp`) of the definition. */
  fp: string;
  /** The registry form as JSON text, without registeredAt, changedAt, paused, resumedAt and generation. */
  json: string;
  /** The shard's label index keys of its labels (ShardKeys.label), one per label: the script adds a new schedule to them without decoding its JSON. */
  labelKeys: readonly string[];
}

/** What put-schedules.lua did with one chunk. */
export interface PutOutcome {
  /** Names stored that the registry did not hold. */
  added: number;
  /** Stored definitions replaced (a different fingerprint; mode `upsert` only). */
  changed: number;
  /** Stored definitions with the same fingerprint: not written (mode `upsert` only). */
  unchanged: number;
  /** Names the registry held, left untouched (mode `add` only). */
  existing: string[];
  /** Names whose stored definition is declared in code, left untouched (mode `upsert` only). */
  declared: string[];
  /** Redis time of the call, epoch ms. */
  redisNow: number;
  /** The chunk's new registry version, the written schedules' generation (0 when nothing was written). */
  generation: number;
  /** The replaced schedules' fences: their generation to raise in the slot of the queue each targeted before. */
  fences: Fence[];
}

/**
 * Stores one chunk of runtime schedules of one shard under one new version of the shard
 * (put-schedules.lua); the caller raises the fences, then announces the change; about 125
 * definitions per call.
 */
export async function putSchedulesScript(
  client: RedisClient,
  keys: ShardKeys,
  mode: PutMode,
  definitions: readonly PutDefinition[],
): Promise<PutOutcome> {
  const a: string[] = [mode];
  // the JSON without its closing brace: the script appends the registry fields to it
  for (const d of definitions) a.push(d.name, d.fp, d.json.slice(0, -1), String(d.labelKeys.length), ...d.labelKeys);
  const [added, changed, unchanged, redisNow, generation, flat, existing, declared] = await runScript<
    [number, number, number, number, number, string[], string[], string[]]
  >(client, 'put-schedules', [keys.schedules, keys.version, keys.prefix], a);
  const fences: Fence[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) fences.push({ schedule: flat[i], queue: flat[i + 1], generation });
  return { added, changed, unchanged, existing, declared, redisNow, generation, fences };
}

/** What remove-schedules.lua did with one chunk. */
export interface RemoveOutcome {
  /** Schedules removed. */
  removed: number;
  /** Names the registry did not hold. */
  missing: string[];
  /** Redis time of the call, epoch ms. */
  redisNow: number;
  /** The chunk's new registry version (0 when nothing was removed). */
  generation: number;
  /** The removed schedules' fences, in the slot of the queue each targeted. */
  fences: Fence[];
}

/**
 * Removes one chunk of schedules of one shard under one new version of the shard
 * (remove-schedules.lua; the caller deletes their pause notes); about 125 names per call.
 */
export async function removeSchedulesScript(client: RedisClient, keys: ShardKeys, names: readonly string[]): Promise<RemoveOutcome> {
  const [removed, redisNow, generation, flat, missing] = await runScript<[number, number, number, string[], string[]]>(
    client,
    'remove-schedules',
    [keys.schedules, keys.version, keys.prefix],
    names,
  );
  const fences: Fence[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) fences.push({ schedule: flat[i], queue: flat[i + 1], generation });
  return { removed, missing, redisNow, generation, fences };
}

/** The wrapper of each script of this area (the registry in index.ts). */
export const SCHEDULE_BULK_SCRIPTS = {
  'put-schedules': putSchedulesScript,
  'remove-schedules': removeSchedulesScript,
} as const satisfies Partial<Record<ScriptName, ScriptWrapper>>;
