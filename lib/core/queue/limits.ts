import { InvalidOptionsError } from '../runtime/errors.js';
import { show } from '../runtime/options.js';
import { GlobalKeys, QueueKeys, isGroupName, isValidName } from '../redis/keys.js';
import type { RedisClient } from '../redis/types.js';
import { setGroupLimitsScript, setLimitsScript, type GroupLimitsChange } from '../redis/commands/limits.js';

/**
 * A queue's fleet-wide limits, stored in Redis (the queue's `limits` hash, and `group-limits` for the
 * overrides of single groups) and applied by every worker server of the namespace within about a
 * second of a change (at once when the change's notice arrives). A limit is decided in the script
 * that hands a task to a worker (fetch-limited.lua), so no task of the queue starts over it.
 */
export interface QueueLimits {
  /**
   * Tasks of the queue running at once across all workers, at most (an integer from 1 to 10^14). A task holds
   * its slot from its fetch until it is acked, retried, dead, cancelled or reclaimed (by liveness
   * when its worker's process is gone; after the visibility timeout when it is stopped or stuck).
   */
  concurrency?: number;
  /** Starts of the queue's tasks (hand-outs, by Redis time) in any window of `duration` ms, at most `max` (integers from 1 to 10^14). */
  rate?: RateLimit;
  /**
   * Tasks of one group (enqueue option `group`) running at once across all workers, at most, for
   * every group of the queue (an integer from 1 to 10^14; `groups` overrides it per group). Its slots are held
   * and freed as `concurrency`'s are.
   */
  groupConcurrency?: number;
  /** Starts of one group's tasks in any window of `duration` ms, at most `max`, for every group of the queue (`groups` overrides it per group). */
  groupRate?: RateLimit;
  /** Per-group overrides of `groupConcurrency` and `groupRate`, by group name. */
  groups?: Record<string, GroupLimits>;
}

/** The limits of one group that override the queue's `groupConcurrency` / `groupRate`. */
export interface GroupLimits {
  /** Tasks of this group running at once, at most (an integer from 1 to 10^14). */
  concurrency?: number;
  /** Starts of this group's tasks per window, at most. */
  rate?: RateLimit;
}

/** A rate limit: at most `max` tasks handed out in any window of `duration` ms (by Redis time). */
export interface RateLimit {
  /** Hand-outs per window, at most (an integer from 1 to 10^14). */
  max: number;
  /** The window, ms (an integer from 1 to 10^14, about 3,170 years). */
  duration: number;
}

/**
 * An update of one group's override: `null` for a limit clears it (the queue's applies again); an
 * absent one is left as it is. At least one of `concurrency` and `rate` must be given: an empty
 * override (`{}`) changes nothing and is refused (`null` for the group drops its whole override).
 */
export type GroupLimitsUpdate = { [K in keyof GroupLimits]?: GroupLimits[K] | null };

/**
 * `null` for a limit clears it; an absent one is left as it is. In `groups`, `null` for a group
 * clears its whole override; an empty one (`{}`) is refused (InvalidOptionsError naming the group).
 */
export type QueueLimitsUpdate = {
  [K in Exclude<keyof QueueLimits, 'groups'>]?: QueueLimits[K] | null;
} & {
  /** Per-group overrides to change, by group name: `null` drops a group's override. */
  groups?: Record<string, GroupLimitsUpdate | null>;
};

/**
 * The largest limit value (a concurrency, a rate's `max` or `duration` in ms): 10^14. A group's
 * override is stored as JSON written by Redis's Lua cjson, which keeps 14 significant digits: a
 * larger value came back other than it was set (`9007199254740991` read back as `9007199254741000`).
 * Every limit has the one bound, so any limit can be given to a group as to the queue.
 */
export const LIMIT_MAX = 1e14;

function positiveInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= LIMIT_MAX;
}

/** An integer ≥ 1 past 10^14: its message names the bound. */
const tooLarge = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v > LIMIT_MAX;

function rateProblem(key: string, rate: unknown): string | undefined {
  if (rate === undefined || rate === null) return undefined;
  const r = rate as RateLimit;
  if (typeof rate === 'object' && positiveInt(r.max) && positiveInt(r.duration)) {
    // a key besides max and duration is a mistake, not ignored (trial 10), as in `groups`
    const extra = Object.keys(rate).filter((k) => k !== 'max' && k !== 'duration');
    if (extra.length === 0) return undefined;
    return `${key}: unknown key${extra.length > 1 ? 's' : ''} ${extra.map((k) => `"${k}"`).join(', ')} (a rate is { max, duration })`;
  }
  const big = typeof rate === 'object' && rate !== null && (tooLarge(r.max) || tooLarge(r.duration));
  const ints = big ? `integers from 1 to ${LIMIT_MAX}` : 'integers >= 1';
  return `${key}: expected { max, duration } (${ints}, duration in ms) or null, got ${showRate(rate)}`;
}

/** A rate as text: JSON, with a non-finite number as itself (JSON would say null: trial 10). */
function showRate(rate: unknown): string {
  return typeof rate === 'object' && rate !== null
    ? `{ ${Object.entries(rate)
        .map(([k, v]) => `${k}: ${show(v)}`)
        .join(', ')} }`
    : show(rate);
}

function intProblem(key: string, v: unknown): string | undefined {
  if (v === undefined || v === null || positiveInt(v)) return undefined;
  return `${key}: expected ${tooLarge(v) ? `an integer from 1 to ${LIMIT_MAX}` : 'an integer >= 1'} or null, got ${show(v)}`;
}

const KNOWN = ['concurrency', 'rate', 'groupConcurrency', 'groupRate', 'groups'];

/** The problems of a limits update, one line each naming the option and the value. */
export function limitsProblems(queue: unknown, limits: QueueLimitsUpdate): string[] {
  const problems: string[] = [];
  if (!isValidName(queue)) problems.push(`queue: expected a queue name, got ${JSON.stringify(queue)}`);
  // an array is an object to typeof, and has no limit key: it was taken for {} (trial 14)
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits))
    return [...problems, `limits: expected an object, got ${JSON.stringify(limits)}`];
  const add = (p: string | undefined) => p !== undefined && problems.push(p);
  add(intProblem('concurrency', limits.concurrency));
  add(rateProblem('rate', limits.rate));
  add(intProblem('groupConcurrency', limits.groupConcurrency));
  add(rateProblem('groupRate', limits.groupRate));
  for (const k of Object.keys(limits)) if (!KNOWN.includes(k)) problems.push(`${k}: not a queue limit (known: ${KNOWN.join(', ')})`);
  const groups = limits.groups;
  if (groups === undefined) return problems;
  if (typeof groups !== 'object' || groups === null || Array.isArray(groups)) {
    problems.push(`groups: expected { [group]: { concurrency, rate } | null }, got ${JSON.stringify(groups)}`);
    return problems;
  }
  for (const [g, o] of Object.entries(groups)) {
    const at = `groups[${JSON.stringify(g)}]`;
    if (!isGroupName(g)) problems.push(`${at}: not a group name (1 to 200 characters, no control characters or lone surrogates)`);
    if (o === null) continue;
    if (typeof o !== 'object' || Array.isArray(o)) {
      problems.push(`${at}: expected { concurrency, rate } or null, got ${JSON.stringify(o)}`);
      continue;
    }
    // `{}` (or only undefined limits) neither sets nor clears: refused, as `null` is what drops an override (trial 32)
    if (o.concurrency === undefined && o.rate === undefined && Object.keys(o).every((k) => k === 'concurrency' || k === 'rate'))
      problems.push(`${at}: an override with no limit changes nothing (give concurrency and/or rate; null drops the group's override)`);
    add(intProblem(`${at}.concurrency`, o.concurrency));
    add(rateProblem(`${at}.rate`, o.rate));
    for (const k of Object.keys(o))
      if (k !== 'concurrency' && k !== 'rate') problems.push(`${at}.${k}: not a group limit (known: concurrency, rate)`);
  }
  return problems;
}

/** The stored form of a group's override (`<q>:group-limits`): `{c, rm, rd}` (fetch-limited.lua limitsOf). */
interface StoredOverride {
  c?: number;
  rm?: number;
  rd?: number;
}

/**
 * Sets (or with `null` clears) limits of `queue`: writes its `limits` hash and its groups'
 * overrides, lists the queue in the namespace's `limited` set (or drops it when no limit is left and
 * it has no groups) and, when a limit is stored, in its known queues (`queues`: shown by name before
 * its first task), makes every group held back by a limit due for a look (a raised limit applies at
 * once) and publishes a notice so every worker applies the change at once. Changes of one queue made
 * at once (two operators, a replica's boot) all land, each limit as last written; none is lost to the
 * clearing of another (set-limits.lua).
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
  const set: [string, number][] = [];
  const del: string[] = [];
  const int = (field: string, v: number | null | undefined) => {
    if (v === null) del.push(field);
    else if (v !== undefined) set.push([field, v]);
  };
  const rate = (max: string, ms: string, v: RateLimit | null | undefined) => {
    if (v === null) del.push(max, ms);
    else if (v !== undefined) set.push([max, v.max], [ms, v.duration]);
  };
  int('concurrency', limits.concurrency);
  rate('rateMax', 'rateMs', limits.rate);
  int('groupConcurrency', limits.groupConcurrency);
  rate('groupRateMax', 'groupRateMs', limits.groupRate);
  if (limits.groups) {
    // each group's override changed in one script (a read-modify-write here lost concurrent changes: trial 10)
    const changes = Object.entries(limits.groups).map(([group, o]): GroupLimitsChange => {
      if (o === null) return { group, concurrency: null, rateMax: null, rateMs: null };
      const rate =
        o.rate === null ? { rateMax: null, rateMs: null } : o.rate === undefined ? {} : { rateMax: o.rate.max, rateMs: o.rate.duration };
      return { group, concurrency: o.concurrency, ...rate };
    });
    await setGroupLimitsScript(client, keys, changes);
  }
  // the hash is written, and deleted when nothing is left, in one step (set-limits.lua); the `limited` set
  // is in another slot: a queue unlisted here while another change stored a limit (or the first grouped
  // task came) is listed again by the look that follows, so no concurrent change is lost (trial 28)
  if (await setLimitsScript(client, keys, set, del)) await client.sadd(g.limited, queue);
  else {
    await client.srem(g.limited, queue);
    if (await setLimitsScript(client, keys, [], [])) await client.sadd(g.limited, queue);
  }
  const now = await getQueueLimits(client, namespace, queue);
  // a queue with stored limits is known (listed, shown, acted on by name), as one with a task or a schedule is:
  // limits set before its first task were stored but the queue was "not found" by the CLI's show (trial 32)
  if (Object.keys(now).length > 0) await client.sadd(g.queues, queue);
  // groups held back by a limit look again at once (a raised or cleared limit lets them start)
  if (limits.groupConcurrency !== undefined || limits.groupRate !== undefined || limits.groups !== undefined)
    await client.zunionstore(keys.groupsParked, 1, keys.groupsParked, 'WEIGHTS', 0);
  await client.publish(g.limitsChannel, queue);
  return now;
}

/** The limits of `queue` as stored (an empty object when it has none). */
export async function getQueueLimits(client: RedisClient, namespace: string, queue: string): Promise<QueueLimits> {
  const keys = new QueueKeys(namespace, queue);
  const h = await client.hgetall(keys.limits);
  const out: QueueLimits = {};
  if (h.concurrency !== undefined) out.concurrency = Number(h.concurrency);
  if (h.rateMax !== undefined && h.rateMs !== undefined) out.rate = { max: Number(h.rateMax), duration: Number(h.rateMs) };
  if (h.groupConcurrency !== undefined) out.groupConcurrency = Number(h.groupConcurrency);
  if (h.groupRateMax !== undefined && h.groupRateMs !== undefined)
    out.groupRate = { max: Number(h.groupRateMax), duration: Number(h.groupRateMs) };
  if (Number(h.goverrides ?? 0) > 0) {
    // fields, not assignments: a group may be named "__proto__", which `groups[group] = …` took for the prototype (trial 43)
    const groups: Record<string, GroupLimits> = Object.fromEntries(
      Object.entries(await client.hgetall(keys.groupLimits)).map(([group, text]) => {
        const o = JSON.parse(text) as StoredOverride;
        const limit: GroupLimits = {};
        if (o.c !== undefined) limit.concurrency = o.c;
        if (o.rm !== undefined && o.rd !== undefined) limit.rate = { max: o.rm, duration: o.rd };
        return [group, limit];
      }),
    );
    if (Object.keys(groups).length > 0) out.groups = groups;
  }
  return out;
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
  const marked = await client.hset(new QueueKeys(namespace, queue).limits, 'grouped', 1);
  const listed = await client.sadd(g.limited, queue);
  if (marked === 1 || listed === 1) await client.publish(g.limitsChannel, queue);
}
