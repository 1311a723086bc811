import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ChainableCommander } from 'ioredis';
import { ChronosError, RedisScriptError } from '../runtime/errors.js';
import type { RedisClient } from './types.js';

/**
 * The Lua scripts of Chronos, one atomic operation per `.lua` file in `./scripts/`, each with a
 * header naming its KEYS and ARGV. Each is loaded once per client with `defineCommand` under a
 * content-versioned name (`chronos_<name>_<sha1-8>` of the expanded source), so two Chronos
 * versions can share one Redis during a rolling deploy (BullMQ's idea). Key counts vary per call
 * (optional keys), so the commands are defined without `numberOfKeys` and called with the count first.
 * A line `-- @include <snippet>` in a script is replaced by `./scripts/includes/<snippet>.lua`
 * ({@link expandIncludes}).
 */
export const SCRIPT_NAMES = [
  'enqueue',
  'enqueue-bulk',
  'enqueue-group',
  'ack',
  'retry',
  'kill',
  'forward',
  'claim-due',
  'settle-due',
  'lower-due',
  'recover',
  'reclaim-consumer',
  'presence',
  'redis-run',
  'claim',
  'renew-markers',
  'requeue',
  'fire',
  'shards',
  'release-shards',
  'register-schedules',
  'declare-schedules',
  'heartbeat',
  'schedule-admin',
  'put-schedules',
  'remove-schedules',
  'take-due',
  'advance-due',
  'mark-due',
  'adopt-schedules',
  'drop-legacy',
  'page-tasks',
  'run-tasks',
  'delete-tasks',
  'delete-pending',
  'retry-dead',
  'backfill',
  'fence-schedules',
  'drop-runs',
  'read-runs',
  'delete-consumers',
  'fetch-limited',
  'set-group-limits',
  'set-limits',
  'sample-queue',
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];

interface LoadedScript {
  readonly name: ScriptName;
  readonly command: string;
  readonly lua: string;
  /** SHA1 of `lua`, 40 hex digits (what EVALSHA names). */
  readonly sha: string;
}

/** Reads a script's source as written, includes not expanded (exported for the header lint test). */
export function scriptSource(name: ScriptName): string {
  return readFileSync(new URL(`./scripts/${name}.lua`, import.meta.url), 'utf8');
}

/** Reads an include snippet's source; undefined when there is no such file. */
export function includeSource(snippet: string): string | undefined {
  try {
    return readFileSync(new URL(`./scripts/includes/${snippet}.lua`, import.meta.url), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

const INCLUDE_LINE = /^--[ \t]*@include[ \t]+(\S+)[ \t]*$/gm;

/**
 * Replaces each `-- @include <snippet>` line of `source` by the snippet's source (recursively).
 * A snippet is inserted once per script: a second include of it is dropped.
 * @param origin the script's name, for messages.
 * @param read a snippet's source, undefined when it does not exist.
 * @throws ChronosError (code `REDIS_SCRIPT`) naming the script, the include chain and the snippet
 * when a snippet is missing or includes itself (directly or through others).
 */
export function expandIncludes(source: string, origin: string, read: (snippet: string) => string | undefined = includeSource): string {
  const done = new Set<string>();
  const expand = (text: string, chain: readonly string[]): string =>
    text.replace(INCLUDE_LINE, (_line, snippet: string) => {
      const path = [...chain, snippet].join(' -> ');
      if (chain.includes(snippet)) throw new ChronosError('REDIS_SCRIPT', `Circular include in script ${origin}: ${path}`);
      if (done.has(snippet)) return `-- (${snippet}: included above)`;
      const lua = read(snippet);
      if (lua === undefined) {
        const problem = `Script ${origin} includes "${snippet}" (${path}), but there is no scripts/includes/${snippet}.lua`;
        throw new ChronosError('REDIS_SCRIPT', problem);
      }
      done.add(snippet);
      return expand(lua.trimEnd(), [...chain, snippet]);
    });
  return expand(source, [origin]);
}

/** A script's source with its includes expanded: what Redis runs. */
export function expandedSource(name: ScriptName): string {
  return expandIncludes(scriptSource(name), name);
}

let loaded: Map<ScriptName, LoadedScript> | undefined;

function scripts(): Map<ScriptName, LoadedScript> {
  if (!loaded) {
    const all = new Map<ScriptName, LoadedScript>();
    for (const name of SCRIPT_NAMES) {
      const lua = expandedSource(name);
      const sha = createHash('sha1').update(lua).digest('hex');
      all.set(name, { name, lua, sha, command: `chronos_${name.replace(/-/g, '_')}_${sha.slice(0, 8)}` });
    }
    loaded = all;
  }
  return loaded;
}

/** The command name a script is defined under on every client (content-versioned: sha1 of the expanded source). */
export function scriptCommand(name: ScriptName): string {
  return scripts().get(name)!.command;
}

/**
 * A script's expanded source and its SHA1 (40 hex digits), for a command that sends EVAL/EVALSHA
 * itself instead of through `defineCommand` (queue.ts's prebuilt ack).
 */
export function scriptText(name: ScriptName): { readonly lua: string; readonly sha: string } {
  return scripts().get(name)!;
}

const defined = new WeakSet<object>();

/** Defines every Chronos script on `client` (once per client object; idempotent). */
export function defineScripts(client: RedisClient): void {
  if (defined.has(client)) return;
  for (const s of scripts().values()) client.defineCommand(s.command, { lua: s.lua });
  defined.add(client);
}

/**
 * A script's typed wrapper (lib/core/redis/commands/): the one function that lays out the script's
 * KEYS and ARGV as its header declares them and maps its bare reply to a typed result.
 */
export type ScriptWrapper = (...args: never[]) => unknown;

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
  return callScript<T>(client, scriptCommand(name), name, keys, args);
}

/**
 * {@link runScript} with the reply's strings left as Buffers (ioredis's `<command>Buffer` variant):
 * for a reply whose texts the caller may not need to decode (take-due.lua's definitions, compared
 * with the cached ones as bytes).
 */
export function runScriptBuffer<T>(
  client: RedisClient,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<T> {
  return callScript<T>(client, `${scriptCommand(name)}Buffer`, name, keys, args);
}

function callScript<T>(
  client: RedisClient,
  command: string,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<T> {
  defineScripts(client);
  // one argument array, spread alone (V8's fast path): a call with two spreads walks both through the
  // iterator protocol (garbage per argument: a fire.lua call has about 3 per trigger)
  const argv: (string | number)[] = new Array(1 + keys.length + args.length);
  argv[0] = keys.length;
  for (let i = 0; i < keys.length; i++) argv[1 + i] = keys[i];
  for (let i = 0, o = 1 + keys.length; i < args.length; i++) argv[o + i] = args[i];
  return ((client as unknown as ScriptCaller)[command](...argv) as Promise<T>).catch((err: unknown) => {
    throw wrapScriptError(name, err);
  });
}

/** Queues a script call on a pipeline created from a client on which {@link defineScripts} ran. */
export function pipeScript(
  pipeline: ChainableCommander,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): void {
  const command = scriptCommand(name);
  (pipeline as unknown as ScriptCaller)[command](keys.length, ...keys, ...args);
}

/** Maps a Redis error reply to a {@link RedisScriptError}; other errors are returned as they are. */
export function wrapScriptError(name: ScriptName, err: unknown): unknown {
  if (err instanceof Error && err.name === 'ReplyError') return new RedisScriptError(name, err.message, { cause: err });
  return err;
}
