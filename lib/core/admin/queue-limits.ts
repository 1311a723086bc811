// The Inspector's view of a queue's fleet-wide limits and groups (issue 21): the limits as stored,
// the slots taken, the groups with the most waiting tasks, and whether a limit holds the queue back
// now. (The act that changes them is the Inspector's setQueueLimits, audited.)
import { execReads } from '../redis/cluster.js';
import { getQueueLimits, type QueueLimits } from '../queue/limits.js';
import type { ChainableCommander } from 'ioredis';
import type { QueueKeys } from '../redis/keys.js';
import type { InspectorContext } from './context.js';
import type { GroupsView, QueueInfo } from './types.js';

/** How many of the groups with the most waiting tasks a {@link GroupsView} lists. */
const TOP_GROUPS = 5;

/** What {@link limitsView} reads; `state` is decided once the queue's counts are known ({@link limitState}). */
export interface LimitsRead {
  limits?: QueueLimits;
  /** Hand-outs in the rate window now (with a `rate`). */
  rateUsed?: number;
  groups?: GroupsView;
  /** Groups in the round (waiting, not held back). */
  inRound: number;
}

/** The commands {@link pipeLimits} adds to a queue's pipeline. */
export const LIMIT_READS = 4;

/**
 * Adds the reads of a queue's limits and groups to its pipeline (HGETALL of `limits`, ZCARD ×2 and
 * ZREVRANGE … 0 4 of the groups' indexes: {@link LIMIT_READS} commands); read them back with
 * {@link limitsView}.
 */
export function pipeLimits(p: ChainableCommander, k: QueueKeys): void {
  p.hgetall(k.limits);
  p.zcard(k.groupsWaiting);
  p.zcard(k.groups);
  p.zrevrange(k.groupsWaiting, 0, TOP_GROUPS - 1, 'WITHSCORES');
}

/**
 * A queue's limits and groups from the replies of {@link pipeLimits} (`val(i)`: the i-th of them) and
 * Redis time, then, for a limited or grouped queue, one more round trip on its slot (HGETALL of the
 * overrides when it has some, ZCOUNT of the rate log in the window, SCARD of the top groups' slots,
 * ZCOUNT of the groups held back past now: a parked group whose instant came or whose slot freed,
 * score 0, is due for a look at the next fetch, not held; trial 14).
 */
export async function limitsView(ctx: InspectorContext, k: QueueKeys, val: (i: number) => unknown, now: number): Promise<LimitsRead> {
  const h = (val(0) as Record<string, string> | undefined) ?? {};
  const top = (val(3) as string[] | undefined) ?? [];
  const out: LimitsRead = { inRound: Number(val(2) ?? 0) };
  const limited = ['concurrency', 'rateMax', 'groupConcurrency', 'groupRateMax', 'goverrides'].some((f) => h[f] !== undefined);
  if (limited) {
    const limits = await getQueueLimits(ctx.client, ctx.namespace, k.queue);
    if (Object.keys(limits).length > 0) out.limits = limits;
  }
  const grouped = h.grouped === '1';
  if (!grouped && !out.limits?.rate) return out;
  const rate = out.limits?.rate;
  const r2 = await execReads(ctx.client, (p2) => {
    if (rate) p2.zcount(k.rateLog, `(${now - rate.duration}`, '+inf');
    for (let i = 0; i < top.length; i += 2) p2.scard(k.groupRunning(top[i]));
    if (grouped) p2.zcount(k.groupsParked, `(${now}`, '+inf');
  });
  let j = 0;
  if (rate) out.rateUsed = Number(r2[j++][1] ?? 0);
  if (grouped) {
    const list: GroupsView['top'] = [];
    for (let i = 0; i < top.length; i += 2) list.push({ group: top[i], waiting: Number(top[i + 1]), running: Number(r2[j++][1] ?? 0) });
    const held = Number(r2[j][1] ?? 0);
    out.groups = { waiting: Math.max(0, Number(h.gwaiting ?? 0)), count: Number(val(1) ?? 0), held, top: list };
  }
  return out;
}

/**
 * Whether a limit holds the queue back now, from its counts: its `concurrency` when every slot is
 * taken and tasks wait, its `rate` when the window is full and tasks wait, its groups when tasks wait
 * only in groups held back by their limits.
 */
export function limitState(
  read: LimitsRead,
  counts: { active: number; undelivered: number },
): Pick<QueueInfo, 'limitedBy'> & { waiting: number } {
  const waiting = counts.undelivered + (read.groups?.waiting ?? 0);
  const l = read.limits;
  if (waiting > 0 && l?.concurrency !== undefined && counts.active >= l.concurrency) return { limitedBy: 'concurrency', waiting };
  if (waiting > 0 && l?.rate !== undefined && (read.rateUsed ?? 0) >= l.rate.max) return { limitedBy: 'rate', waiting };
  if (read.groups && read.groups.held > 0 && read.inRound === 0 && counts.undelivered === 0) return { limitedBy: 'group', waiting };
  return { waiting };
}
