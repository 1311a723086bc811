import type { ChainableCommander } from 'ioredis';
import { DUE_INDEX, NONE_DUE } from '../protocol.js';
import { dueWakeChannel } from '../keys.js';
import { pipeScript, runScript, type ScriptName, type ScriptWrapper } from '../scripts.js';
import type { RedisClient } from '../types.js';
import { engineTime } from '../../runtime/time.js';

/**
 * Typed wrappers of the due-time index `<ns>:{<ns>:global}:due` (keys.ts GlobalKeys.due): one ZSET,
 * queue name → earliest due time (epoch ms) of its delayed and retry tasks, read by the forwarders
 * once per round instead of polling every queue. Writers only ever lower a score (`ZADD LT`), so the
 * index stays at or before the real due time; claim-due.lua / settle-due.lua let a forwarder raise
 * or remove a score without losing a due time an enqueuer wrote meanwhile.
 */

/** What claim-due.lua answered. */
export interface DueClaim {
  /** Redis server time of the call, epoch ms. */
  redisNow: number;
  /** This round's claim mark (pass it to {@link settleDue}). */
  mark: number;
  /** When the next of the served queues not claimed now is due (epoch ms); undefined when none is waiting. */
  nextDueAt: number | undefined;
  /** The served queues that are due now, claimed (at most `limit`). */
  claimed: string[];
}

/** Claims the served queues whose tasks are due (claim-due.lua), at most `limit`. */
export async function claimDue(client: RedisClient, dueKey: string, limit: number, queues: readonly string[]): Promise<DueClaim> {
  const reply = await runScript<[number, number, number, ...string[]]>(
    client,
    'claim-due',
    [dueKey],
    [limit, DUE_INDEX.claimBase, ...queues],
  );
  const [redisNow, mark, next] = reply;
  return { redisNow, mark, nextDueAt: next === NONE_DUE ? undefined : Number(next), claimed: reply.slice(3) as string[] };
}

/**
 * Puts the claimed queues back at their next due time, or out of the index when nothing waits and no
 * enqueuer wrote meanwhile (settle-due.lua). `next` maps queue → next due time (epoch ms), undefined = none.
 */
export async function settleDue(
  client: RedisClient,
  dueKey: string,
  mark: number,
  next: ReadonlyMap<string, number | undefined>,
): Promise<void> {
  if (next.size === 0) return;
  const args: (string | number)[] = [mark];
  for (const [q, at] of next) args.push(q, at ?? NONE_DUE);
  await runScript<number>(client, 'settle-due', [dueKey], args);
}

/**
 * A task of `queue` is due at `dueAt` (epoch ms): lower-due.lua lowers or adds the queue's score
 * (`ZADD LT`, never raising it) and, when it did, publishes the time on the wake channel
 * (keys.ts dueWakeChannel) so the queue's worker servers re-arm their forward timer to it.
 * Resolves to 1 when the score was lowered (a wake was published), else 0.
 */
export function lowerDue(client: RedisClient, dueKey: string, queue: string, dueAt: number): Promise<number> {
  return runScript<number>(client, 'lower-due', [dueKey], [dueWakeChannel(dueKey), Math.floor(dueAt), queue]);
}

/** {@link lowerDue} queued on a pipeline (of a client on which scripts.ts defineScripts ran). */
export function pipeLowerDue(pipeline: ChainableCommander, dueKey: string, queue: string, dueAt: number): void {
  pipeScript(pipeline, 'lower-due', [dueKey], [dueWakeChannel(dueKey), Math.floor(dueAt), queue]);
}

/** A wake published by lower-due.lua: `<dueAt>:<queue>`; undefined when the text is not one. */
export function parseDueWake(text: string): { queue: string; dueAt: number } | undefined {
  const colon = text.indexOf(':');
  const dueAt = Number(text.slice(0, colon));
  if (colon <= 0 || !Number.isFinite(dueAt)) return undefined;
  return { queue: text.slice(colon + 1), dueAt };
}

/**
 * The due time an enqueue writes into the index for a delayed task (epoch ms): `processAtMs`, else now
 * + `delayMs` by the process's time source (Redis time, estimated never ahead of it: runtime/time.ts;
 * a client samples it before its first write to a queue). enqueue.lua counts the delay from Redis
 * time itself: an estimate behind it costs the forwarder an empty forward.lua; one ahead would make it
 * that much late. Undefined when the task is not delayed (both 0).
 */
export function dueTime(processAtMs: number, delayMs: number): number | undefined {
  if (processAtMs > 0) return processAtMs;
  return delayMs > 0 ? engineTime.now() + delayMs : undefined;
}

/** The wrapper of each script of this area (the registry in index.ts). */
export const DUE_SCRIPTS = {
  'claim-due': claimDue,
  'settle-due': settleDue,
  'lower-due': lowerDue,
} as const satisfies Partial<Record<ScriptName, ScriptWrapper>>;
