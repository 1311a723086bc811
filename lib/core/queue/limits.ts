import { InvalidOptionsError } from '../runtime/errors.js';
import { GlobalKeys, QueueKeys, isValidName } from '../redis/keys.js';
import type { RedisClient } from '../redis/types.js';

/**
 * A queue's fleet-wide limits, stored in Redis (the queue's `limits` hash) and applied by every
 * worker server of the namespace within about a second of a change (at once when the change's
 * notice arrives). A limit is decided in the script that hands a task to a worker
 * (fetch-limited.lua), so no task of the queue starts over it.
 */
export interface QueueLimits {
  /**
   * Tasks of the queue running at once across all workers, at most (an integer ≥ 1). A task holds
   * its slot from its fetch until it is acked, retried, dead, cancelled or reclaimed (by liveness
   * when its worker's process is gone; after the visibility timeout when it is stopped or stuck).
   */
  concurrency?: number;
  /** Starts of the queue's tasks (hand-outs, by Redis time) in any window of `duration` ms, at most `max` (integers ≥ 1). */
  rate?: RateLimit;
}

/** A rate limit: at most `max` tasks handed out in any window of `duration` ms (by Redis time). */
export interface RateLimit {
  /** Hand-outs per window, at most (an integer ≥ 1). */
  max: number;
  /** The window, ms (an integer ≥ 1). */
  duration: number;
}

/** `null` for a limit clears it; an absent one is left as it is. */
export type QueueLimitsUpdate = { [K in keyof QueueLimits]?: QueueLimits[K] | null };

function positiveInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;
}

/** The problems of a limits update, one line each naming the option and the value. */
export function limitsProblems(queue: unknown, limits: QueueLimitsUpdate): string[] {
  const problems: string[] = [];
  if (!isValidName(queue)) problems.push(`queue: expected a queue name, got ${JSON.stringify(queue)}`);
  if (typeof limits !== 'object' || limits === null) return [...problems, `limits: expected an object, got ${JSON.stringify(limits)}`];
  const { concurrency, rate } = limits;
  if (concurrency !== undefined && concurrency !== null && !positiveInt(concurrency))
    problems.push(`concurrency: expected an integer >= 1 or null, got ${JSON.stringify(concurrency)}`);
  if (rate !== undefined && rate !== null) {
    if (typeof rate !== 'object' || !positiveInt(rate.max) || !positiveInt(rate.duration))
      problems.push(`rate: expected { max, duration } (integers >= 1, duration in ms) or null, got ${JSON.stringify(rate)}`);
  }
  const known = new Set(['concurrency', 'rate']);
  for (const k of Object.keys(limits)) if (!known.has(k)) problems.push(`${k}: not a queue limit (known: concurrency, rate)`);
  return problems;
}

/**
 * Sets (or with `null` clears) limits of `queue`: writes its `limits` hash, lists the queue in the
 * namespace's `limited` set (or drops it when no limit is left) and publishes a notice so every
 * worker applies the change at once.
 * @throws InvalidOptionsError naming the option and the value.
 * @returns the queue's limits after the change.
 */
export async function setQueueLimits(
  client: RedisClient,
  namespace: string,
  queue: string,
  limits: QueueLimitsUpdate,
): Promise<QueueLimits> {
  const problems = limitsProblems(queue, limits);
  if (problems.length > 0) throw new InvalidOptionsError(problems, 'queue limits');
  const keys = new QueueKeys(namespace, queue);
  const g = new GlobalKeys(namespace);
  const set: (string | number)[] = [];
  const del: string[] = [];
  if (limits.concurrency === null) del.push('concurrency');
  else if (limits.concurrency !== undefined) set.push('concurrency', limits.concurrency);
  if (limits.rate === null) del.push('rateMax', 'rateMs');
  else if (limits.rate !== undefined) set.push('rateMax', limits.rate.max, 'rateMs', limits.rate.duration);
  if (set.length > 0) await client.hset(keys.limits, ...set);
  if (del.length > 0) await client.hdel(keys.limits, ...del);
  const now = await getQueueLimits(client, namespace, queue);
  if (now.concurrency !== undefined || now.rate !== undefined) await client.sadd(g.limited, queue);
  else if ((await client.hget(keys.limits, 'grouped')) !== '1') {
    await client.srem(g.limited, queue);
    await client.del(keys.limits); // its bookkeeping (waitingUntil) too
  }
  await client.publish(g.limitsChannel, queue);
  return now;
}

/**
 * Marks `queue` as grouped, before its first grouped task: the `grouped` field of its `limits` hash
 * (fetch-limited.lua serves its groups, and moves grouped tasks coming back through the stream into
 * them), the namespace's `limited` set (every worker fetches the queue through fetch-limited.lua from
 * then on) and a notice on `<ns>:limits` so that workers switch at once (within 1 s at the latest).
 * A grouped queue stays grouped: clearing its limits keeps it in the `limited` set.
 */
export async function markGrouped(client: RedisClient, namespace: string, queue: string): Promise<void> {
  const g = new GlobalKeys(namespace);
  await client.hset(new QueueKeys(namespace, queue).limits, 'grouped', 1);
  if ((await client.sadd(g.limited, queue)) === 1) await client.publish(g.limitsChannel, queue);
}

/** The limits of `queue` as stored (an empty object when it has none). */
export async function getQueueLimits(client: RedisClient, namespace: string, queue: string): Promise<QueueLimits> {
  const h = await client.hgetall(new QueueKeys(namespace, queue).limits);
  const out: QueueLimits = {};
  if (h.concurrency !== undefined) out.concurrency = Number(h.concurrency);
  if (h.rateMax !== undefined && h.rateMs !== undefined) out.rate = { max: Number(h.rateMax), duration: Number(h.rateMs) };
  return out;
}
