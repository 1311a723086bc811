// The specs an Inspector's schedule views share (admin/schedules.ts), kept between views.
import { nextTriggers, type ScheduleSpec } from '../scheduler/spec.js';
import { RecentMap } from '../runtime/recent-map.js';
import type { InspectorContext } from './context.js';

/**
 * A spec shared by the schedules of one (expression, zone, offset, bounds) in the views of one
 * Inspector, with what was computed of it. A spec is pure, so what was computed stays true: a view
 * reuses the next triggers an earlier one listed while none of them has passed.
 */
export interface SharedSpec {
  spec: ScheduleSpec;
  /** Its first {@link count} triggers after {@link from} (fewer: it has no more). */
  next: number[];
  /** The instant {@link next} follows, epoch ms. */
  from: number;
  /** How many triggers {@link next} was asked for. */
  count: number;
  /** Known answers of nextAfter: [base, next]: no trigger in (base, next), so nextAfter(b) = next for base ≤ b < next. */
  known: [number, number | null][];
}

/**
 * Specs an Inspector keeps between its views, per generation (runtime/recent-map.ts: it remembers
 * the last 1,024 to 2,048 distinct ones, a few KB each). A fleet's schedules share few specs (10,000 of the
 * benchmark's code-declared mix share 113): a warm view then compiles none and asks croner for
 * none of their next triggers (a cron in a zone costs tens of µs per trigger).
 */
const KEPT_SPECS = 1024;
const specCaches = new WeakMap<InspectorContext, RecentMap<string, SharedSpec>>();

/** The specs `ctx`'s views share (made at the first view). */
export function specCache(ctx: InspectorContext): RecentMap<string, SharedSpec> {
  let cache = specCaches.get(ctx);
  if (cache === undefined) specCaches.set(ctx, (cache = new RecentMap(KEPT_SPECS)));
  return cache;
}

/**
 * The first `count` triggers of `shared` after `now` (epoch ms): the ones it holds when they follow
 * an instant at or before `now` and the first of them is still after it (or there are none: a spec
 * with no trigger after an instant has none after a later one); else computed and kept.
 */
export function nextOf(shared: SharedSpec, now: number, count: number): number[] {
  const { next, from } = shared;
  if (shared.count !== count || from > now || (next.length > 0 && next[0] <= now)) {
    shared.next = nextTriggers(shared.spec, now, count);
    shared.from = now;
    shared.count = count;
  }
  return shared.next;
}

/** At most this many known answers are kept per spec (they are scanned in turn). */
const KNOWN_ANSWERS = 32;

/**
 * The first trigger of a spec after `base`, reusing a known answer when `base` falls in its gap
 * (schedules registered or fired about together share one croner call). Exact: a trigger is
 * never skipped.
 */
export function nextDue(shared: SharedSpec, base: number): number | null {
  for (const [b, next] of shared.known) if (b <= base && (next === null || base < next)) return next;
  const next = shared.spec.nextAfter(base);
  if (shared.known.length >= KNOWN_ANSWERS) shared.known.shift();
  shared.known.push([base, next]);
  return next;
}
