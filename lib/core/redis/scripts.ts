import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ChainableCommander } from 'ioredis';
import { RedisScriptError } from '../errors.js';
import type { RedisClient } from './connection.js';

/**
 * The Lua scripts of Chronos, one atomic operation per `.lua` file in `./scripts/`, each with a
 * header naming its KEYS and ARGV. Each is loaded once per client with `defineCommand` under a
 * content-versioned name (`chronos_<name>_<sha1-8>`), so two Chronos versions can share one Redis
 * during a rolling deploy (BullMQ's idea). Key counts vary per call (optional keys), so the
 * commands are defined without `numberOfKeys` and called with the count first.
 */
export const SCRIPT_NAMES = [
  'enqueue',
  'ack',
  'retry',
  'kill',
  'forward',
  'recover',
  'requeue',
  'fire',
  'acquire-lease',
  'renew-lease',
  'release-lease',
  'register-schedules',
  'heartbeat',
  'schedule-admin',
  'page-tasks',
  'run-tasks',
  'delete-tasks',
  'delete-pending',
  'retry-dead',
  'backfill',
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];

interface LoadedScript {
  readonly name: ScriptName;
  readonly command: string;
  readonly lua: string;
}

/** Reads a script's source (exported for the header lint test). */
export function scriptSource(name: ScriptName): string {
  return readFileSync(new URL(`./scripts/${name}.lua`, import.meta.url), 'utf8');
}

let loaded: Map<ScriptName, LoadedScript> | undefined;

function scripts(): Map<ScriptName, LoadedScript> {
  if (!loaded) {
    loaded = new Map();
    for (const name of SCRIPT_NAMES) {
      const lua = scriptSource(name);
      const sha = createHash('sha1').update(lua).digest('hex').slice(0, 8);
      loaded.set(name, { name, lua, command: `chronos_${name.replace(/-/g, '_')}_${sha}` });
    }
  }
  return loaded;
}

const defined = new WeakSet<object>();

/** Defines every Chronos script on `client` (once per client object; idempotent). */
export function defineScripts(client: RedisClient): void {
  if (defined.has(client)) return;
  for (const s of scripts().values()) client.defineCommand(s.command, { lua: s.lua });
  defined.add(client);
}

type ScriptCaller = Record<string, (...args: (string | number)[]) => Promise<unknown>>;

/**
 * Runs a script on a client (or queues it on a pipeline). Redis error replies become
 * {@link RedisScriptError} naming the script; connection errors pass through unchanged.
 */
export function runScript<T>(
  client: RedisClient,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<T> {
  defineScripts(client);
  const command = scripts().get(name)!.command;
  return ((client as unknown as ScriptCaller)[command](keys.length, ...keys, ...args) as Promise<T>).catch(
    (err: unknown) => {
      throw wrapScriptError(name, err);
    },
  );
}

/** Queues a script call on a pipeline created from a client on which {@link defineScripts} ran. */
export function pipeScript(
  pipeline: ChainableCommander,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): void {
  const command = scripts().get(name)!.command;
  (pipeline as unknown as ScriptCaller)[command](keys.length, ...keys, ...args);
}

/** Maps a Redis error reply to a {@link RedisScriptError}; other errors are returned as they are. */
export function wrapScriptError(name: ScriptName, err: unknown): unknown {
  if (err instanceof Error && err.name === 'ReplyError') return new RedisScriptError(name, err.message, { cause: err });
  return err;
}
