// What both libraries (and the plain-Redis limit) are given: the same task type, payload and queue.

/** The three contenders of a workload, plus variants of the limit. */
export type Lib = 'chronos' | 'bullmq' | 'limit';

/** Task type (Chronos) / job name (BullMQ) of every benchmark task. */
export const TASK_TYPE = 'email';
/** BullMQ queue name (its keys are `<prefix>:bench:*`); Chronos uses its default queue `default`. */
export const BULL_QUEUE = 'bench';
/** Consumer group of the plain-Redis limit loops. */
export const LIMIT_GROUP = 'g';

/** The payload of task #n, identical for every contender. */
export function payload(n: number): { to: string; n: number } {
  return { to: 'user@example.com', n };
}

/** Keys of the plain-Redis limit loops under a run prefix. */
export function limitKeys(prefix: string): { stream: string; lastFired: string; dedup: (id: string) => string } {
  const tag = `{${prefix}:limit}`;
  return { stream: `${prefix}:${tag}:stream`, lastFired: `${prefix}:${tag}:last-fired`, dedup: (id) => `${prefix}:${tag}:dedup:${id}` };
}

/** ioredis options for BullMQ from a redis:// URL (BullMQ workers need maxRetriesPerRequest: null). */
export function bullConnection(url: string): {
  host: string;
  port: number;
  db: number;
  password?: string;
  username?: string;
  maxRetriesPerRequest: null;
} {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    db: Number(u.pathname.slice(1) || 0),
    password: u.password ? decodeURIComponent(u.password) : undefined,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    maxRetriesPerRequest: null,
  };
}

/** The trigger instant (epoch ms) of a BullMQ job-scheduler job: its id is `repeat:<scheduler>:<millis>`. */
export function bullTriggerAt(job: { id?: string; timestamp: number; opts: { delay?: number } }): number {
  const tail = Number(job.id?.slice(job.id.lastIndexOf(':') + 1));
  return Number.isFinite(tail) && tail > 1e12 ? tail : job.timestamp + (job.opts.delay ?? 0);
}

/** Lua of the limit's minimal add (one XADD in a script, as a library's add would be). */
export const LIMIT_ADD_LUA = "return redis.call('XADD', KEYS[1], '*', 'type', ARGV[1], 'payload', ARGV[2])";

/**
 * Lua of the limit's minimal leader fire: per trigger, SET NX PX of its dedup key, XADD, and the
 * advance of lastFired — what "once per trigger" needs at the least.
 * KEYS[1] stream, KEYS[2] last-fired hash, KEYS[3..] dedup keys; ARGV[1] trigger ms, ARGV[2..] names.
 */
export const LIMIT_FIRE_LUA = `
local tr = ARGV[1]
local n = 0
for i = 2, #ARGV do
  if redis.call('SET', KEYS[i + 1], '1', 'NX', 'PX', 3600000) then
    redis.call('XADD', KEYS[1], '*', 's', ARGV[i], 'tr', tr, 'payload', '{"to":"user@example.com"}')
    redis.call('HSET', KEYS[2], ARGV[i], tr)
    n = n + 1
  end
end
return n
`;
