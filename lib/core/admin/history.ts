import { STATS } from '../redis/protocol.js';
import { engineTime } from '../runtime/time.js';
import type { InspectorContext } from './context.js';
import type { HistoryPoint, HistoryWindow, QueueHistory, FleetHistory } from './types.js';

/** The windows of {@link queueHistory}: which ring of the counts, and its bucket length (ms). */
const WINDOWS: Record<HistoryWindow, { stamp: number; base: number; size: number; stepMs: number; points: number }> = {
  hour: { stamp: STATS.stampMinute, base: STATS.minuteBase, size: STATS.minutes, stepMs: 60_000, points: 60 },
  day: { stamp: STATS.stampHour, base: STATS.hourBase, size: STATS.hours, stepMs: 3_600_000, points: 24 },
};

/** The history windows, for option checks. */
export const HISTORY_WINDOWS = Object.keys(WINDOWS) as HistoryWindow[];

/** Reads u32 slot `i` of a counts value (0 past its end: Redis grows the string only as far as it is written). */
function slot(buf: Buffer, i: number): number {
  return buf.length >= (i + 1) * 4 ? buf.readUInt32BE(i * 4) : 0;
}

/**
 * The points of one window from a queue's counts (the value of `QueueKeys.counts`, or null when
 * the key does not exist), oldest first, the last being the bucket of `now` (epoch ms, Redis time).
 * A bucket is read only when the ring still holds it (between the ring's stamp − size and its stamp);
 * an older or newer one counts 0. O(1) per point. Layout: protocol.ts STATS.
 */
export function decodeCounts(buf: Buffer | null, now: number, window: HistoryWindow): HistoryPoint[] {
  const w = WINDOWS[window];
  const current = Math.floor(now / w.stepMs);
  const stamp = buf ? slot(buf, w.stamp) : 0;
  const points: HistoryPoint[] = [];
  for (let b = current - w.points + 1; b <= current; b++) {
    const p: HistoryPoint = { at: b * w.stepMs, processed: 0, failed: 0, lost: 0 };
    if (buf && b <= stamp && b > stamp - w.size) {
      const at = w.base + (b % w.size) * STATS.fields;
      p.processed = slot(buf, at + STATS.processed);
      p.failed = slot(buf, at + STATS.failed);
      p.lost = slot(buf, at + STATS.lost);
      const depth = slot(buf, at + STATS.depth);
      const latency = slot(buf, at + STATS.latency);
      if (depth > 0) p.depth = depth - 1;
      if (latency > 0) p.latencyMs = latency - 1;
    }
    points.push(p);
  }
  return points;
}

/**
 * The counts' day ring for the last `n` UTC days (n ≤ 8), oldest first, the last being the day of
 * `now`: `[processed, failed, lost]` per day (0 for a day the ring does not hold).
 */
export function decodeDays(buf: Buffer | null, now: number, n: number): [number, number, number][] {
  const today = Math.floor(now / 86_400_000);
  const stamp = buf ? slot(buf, STATS.stampDay) : 0;
  const out: [number, number, number][] = [];
  for (let b = today - n + 1; b <= today; b++) {
    if (!buf || b > stamp || b <= stamp - STATS.days) {
      out.push([0, 0, 0]);
      continue;
    }
    const at = STATS.dayBase + (b % STATS.days) * STATS.fields;
    out.push([slot(buf, at + STATS.processed), slot(buf, at + STATS.failed), slot(buf, at + STATS.lost)]);
  }
  return out;
}

/** One queue's history over a window ending at `now` (epoch ms, Redis time): one `GET` of its counts key (1,872 bytes at most). */
export async function queueHistory(
  ctx: InspectorContext,
  queue: string,
  window: HistoryWindow,
  now = engineTime.now(),
): Promise<QueueHistory> {
  const k = ctx.keys(queue);
  const buf = await ctx.client.getBuffer(k.counts);
  return { queue, window, stepMs: WINDOWS[window].stepMs, points: decodeCounts(buf, now, window) };
}

/**
 * Sums queues' histories point by point: processed, failed and lost added up, depth added up over
 * the queues that have a sample, latency the largest.
 */
export function totalOf(window: HistoryWindow, now: number, histories: readonly QueueHistory[]): HistoryPoint[] {
  const out = decodeCounts(null, now, window);
  for (const h of histories) {
    for (let i = 0; i < out.length && i < h.points.length; i++) {
      const p = h.points[i];
      const t = out[i];
      t.processed += p.processed;
      t.failed += p.failed;
      t.lost += p.lost;
      if (p.depth !== undefined) t.depth = (t.depth ?? 0) + p.depth;
      if (p.latencyMs !== undefined) t.latencyMs = Math.max(t.latencyMs ?? 0, p.latencyMs);
    }
  }
  return out;
}

/** Every queue's history (or those named) and their total: `SMEMBERS`, then one `GET` per queue (in parallel). */
export async function fleetHistory(ctx: InspectorContext, window: HistoryWindow, queues?: readonly string[]): Promise<FleetHistory> {
  const names = queues ?? (await ctx.client.smembers(ctx.global.queues)).sort();
  const now = engineTime.now();
  const histories = await Promise.all(names.map((q) => queueHistory(ctx, q, window, now)));
  return { window, stepMs: WINDOWS[window].stepMs, total: totalOf(window, now, histories), queues: histories };
}
