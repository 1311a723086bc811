import { execReads } from '../redis/cluster.js';
import { afterLastDelivered, readyAt } from './latency.js';
import { decodeDays } from './history.js';
import { utcDay } from '../queue/codec.js';
import { CONSUMER_GROUP } from '../redis/keys.js';
import { writePause } from '../redis/commands/pause.js';
import type { InspectorContext } from './context.js';
import type { DayCounts, QueueInfo } from './types.js';
import { engineTime } from '../runtime/time.js';
import { QueueNotFoundError } from '../runtime/errors.js';
import { LIMIT_READS, limitState, limitsView, pipeLimits } from './queue-limits.js';

/** Days of counters a {@link QueueInfo} carries. */
const DAYS = 7;
const DAY_MS = 86_400_000;

/** Queue names known in the namespace (enqueued to, served or scheduled), sorted. One `SMEMBERS`. */
export async function queueNames(ctx: InspectorContext): Promise<string[]> {
  return (await ctx.client.smembers(ctx.global.queues)).sort();
}

/** @throws QueueNotFoundError naming the queue, the namespace and the known queues (see `Inspector.requireQueue`). */
export async function requireQueue(ctx: InspectorContext, queue: string, hint: string): Promise<void> {
  ctx.keys(queue); // a name no queue can have is bad input, not a queue not found (trial 8: '' was "not found")
  const names = await queueNames(ctx);
  if (names.includes(queue)) return;
  const err = new QueueNotFoundError(queue);
  const known = names.length ? `known: ${names.join(', ')}` : 'it has no queue yet';
  err.message = `Queue "${queue}" not found in namespace "${ctx.namespace}" (${known})${hint}`;
  throw err;
}

/** Every known queue with its counts: `SMEMBERS` ×2, then {@link queueInfo}'s two round trips per queue (in parallel). */
export async function queues(ctx: InspectorContext): Promise<QueueInfo[]> {
  const [names, paused] = await Promise.all([queueNames(ctx), ctx.client.smembers(ctx.global.paused)]);
  const p = new Set(paused);
  return Promise.all(names.map((n) => queueInfo(ctx, n, p.has(n))));
}

/**
 * One queue: counts by state (pending = stream length − pending entries list + tasks waiting in
 * groups), paused or limited, its limits and groups (admin/queue-limits.ts, in parallel), latency
 * (age of the oldest undelivered entry, by Redis time), processed/failed/lost for the last 7 UTC
 * days, and approximate memory. Two round trips on the queue's slot: a pipeline of XLEN, XPENDING
 * (summary, O(1)), ZCARD ×3, MGET ×3 (7 keys each), MEMORY USAGE ×6 (SAMPLES 5), XINFO GROUPS,
 * TIME, GET of the counts (the day ring, added to the day keys written before it) and the 5 reads of
 * its limits and groups (queue-limits.ts pipeLimits); then XRANGE … COUNT 1 after the group's
 * last-delivered id (and, for a limited or grouped queue, limitsView's one more). `paused` (a global key) is read
 * apart: pass it when known.
 */
export async function queueInfo(ctx: InspectorContext, name: string, paused?: boolean): Promise<QueueInfo> {
  const k = ctx.keys(name);
  const now = engineTime.now();
  const days = Array.from({ length: DAYS }, (_, i) => utcDay(now - (DAYS - 1 - i) * DAY_MS));
  const memoryKeys = [k.stream, k.scheduled, k.retry, k.tasks, k.dead, k.deadTasks];
  // sent again whole while the slot migrates and a read is refused (cluster.ts execReads): a refused read counted 0
  const r = await execReads(ctx.client, (p) => {
    p.xlen(k.stream);
    p.call('XPENDING', k.stream, CONSUMER_GROUP);
    p.zcard(k.scheduled);
    p.zcard(k.retry);
    p.zcard(k.dead);
    p.mget(...days.map((d) => k.processed(d)));
    p.mget(...days.map((d) => k.failed(d)));
    p.mget(...days.map((d) => k.lost(d)));
    for (const key of memoryKeys) p.call('MEMORY', 'USAGE', key, 'SAMPLES', 5);
    p.call('XINFO', 'GROUPS', k.stream);
    p.time();
    p.getBuffer(k.counts);
    pipeLimits(p, k);
  });
  const val = (i: number): unknown => (r[i][0] ? undefined : r[i][1]);
  const len = Number(val(0) ?? 0);
  const active = Number(((val(1) as [number] | undefined) ?? [0])[0] ?? 0); // NOGROUP: nobody consumed yet
  const counts = (i: number) => ((val(i) as (string | null)[] | undefined) ?? []).map((v) => Number(v ?? 0));
  // the day keys written before the counts key (and by older workers during a rolling deploy), plus the counts' day ring
  const countsBuf = (val(10 + memoryKeys.length) as Buffer | null | undefined) ?? null;
  const ring = decodeDays(countsBuf, now, DAYS);
  const [processed, failed, lost] = [counts(5), counts(6), counts(7)].map((c, f) => c.map((v, i) => v + ring[i][f]));
  let memoryBytes = 0;
  for (let i = 0; i < memoryKeys.length; i++) memoryBytes += Number(val(8 + i) ?? 0);
  memoryBytes += countsBuf?.length ?? 0; // its value's size (at most 1,872 bytes)
  const after = afterLastDelivered(val(8 + memoryKeys.length));
  const [sec, usec] = val(9 + memoryKeys.length) as [string, string];
  const redisNow = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
  const limitsAt = 11 + memoryKeys.length; // the replies of pipeLimits (after TIME and the counts)
  const lim = await limitsView(ctx, k, (i) => (i < LIMIT_READS ? val(limitsAt + i) : undefined), redisNow);
  const undelivered = Math.max(0, len - active);
  const { limitedBy, waiting: pending } = limitState(lim, { active, undelivered });
  let latencyMs = 0;
  if (undelivered > 0) {
    const first = (await ctx.client.xrange(k.stream, after, '+', 'COUNT', 1)) as [string, string[]][];
    if (first[0]) latencyMs = Math.max(0, redisNow - readyAt(first[0][0], first[0][1]));
  }
  if (paused === undefined) paused = (await ctx.client.sismember(ctx.global.paused, name)) === 1;
  const dayCounts: DayCounts[] = days.map((day, i) => ({ day, processed: processed[i] ?? 0, failed: failed[i] ?? 0, lost: lost[i] ?? 0 }));
  return {
    name,
    pending,
    active,
    scheduled: Number(val(2) ?? 0),
    retry: Number(val(3) ?? 0),
    dead: Number(val(4) ?? 0),
    paused,
    state: paused ? 'paused' : limitedBy ? 'limited' : 'running',
    ...(limitedBy ? { limitedBy } : {}),
    ...(lim.limits ? { limits: lim.limits } : {}),
    ...(lim.rateUsed !== undefined ? { rateUsed: lim.rateUsed } : {}),
    ...(lim.groups ? { groups: lim.groups } : {}),
    latencyMs,
    processedToday: dayCounts[DAYS - 1].processed,
    failedToday: dayCounts[DAYS - 1].failed,
    lost: dayCounts.reduce((s, d) => s + d.lost, 0),
    days: dayCounts,
    memoryBytes,
  };
}

/** Pauses a queue for every server (they stop fetching from it at once: a publish, fetcher.ts writePause). One `SADD` and one `PUBLISH`; safe to repeat. */
export async function pauseQueue(ctx: InspectorContext, queue: string, actor?: string): Promise<boolean> {
  ctx.keys(queue);
  const added = await writePause(ctx.client, ctx.global, queue, true);
  ctx.emit('queue.pause', actor, { queue, count: added });
  return added === 1;
}

/** Resumes a paused queue. One `SREM` and one `PUBLISH`; safe to repeat. */
export async function resumeQueue(ctx: InspectorContext, queue: string, actor?: string): Promise<boolean> {
  ctx.keys(queue);
  const removed = await writePause(ctx.client, ctx.global, queue, false);
  ctx.emit('queue.resume', actor, { queue, count: removed });
  return removed === 1;
}
