/**
 * A schedule spec limited to a span of time (a schedule's `startAt` and `endAt`): its triggers are
 * those of the spec it wraps at instants `t` with `startAt ≤ t < endAt` (start inclusive, end
 * exclusive). Units: epoch milliseconds.
 */
import type { ScheduleSpec } from './spec-base.js';

/** Earliest and latest instants a bound can take (the range of a JavaScript Date), epoch ms. */
export const INSTANT_LIMIT_MS = 8.64e15;

/** A {@link ScheduleSpec} whose triggers fall in `[startAt, endAt)` (epoch ms). */
export class BoundedSpec implements ScheduleSpec {
  readonly kind: ScheduleSpec['kind'];
  readonly expression: string;
  readonly timeZone: string;
  readonly everyMs?: number;
  readonly offsetMs?: number;
  readonly minPeriodMs: number;

  /**
   * @param inner the unbounded spec
   * @param startAt first instant a trigger may fall on (inclusive), epoch ms
   * @param endAt instant from which no trigger falls (exclusive), epoch ms
   */
  constructor(
    readonly inner: ScheduleSpec,
    readonly startAt = -INSTANT_LIMIT_MS,
    readonly endAt = INSTANT_LIMIT_MS,
  ) {
    this.kind = inner.kind;
    this.expression = inner.expression;
    this.timeZone = inner.timeZone;
    this.everyMs = inner.everyMs;
    this.offsetMs = inner.offsetMs;
    this.minPeriodMs = inner.minPeriodMs;
  }

  /** First trigger strictly after `afterMs` and at or after `startAt`, or null when none falls before `endAt`. */
  nextAfter(afterMs: number): number | null {
    const next = this.inner.nextAfter(Math.max(afterMs, this.startAt - 1));
    return next === null || next >= this.endAt ? null : next;
  }

  /** The window (afterMs, untilMs] clipped to the span: `[startAt, endAt)` (epoch ms). */
  clip(afterMs: number, untilMs: number): [after: number, until: number] {
    return [Math.max(afterMs, this.startAt - 1), Math.min(untilMs, this.endAt - 1)];
  }
}

/** The spec limited to `[startAt, endAt)` when either is set, else the spec itself. */
export function boundedSpec(spec: ScheduleSpec, startAt: number | undefined, endAt: number | undefined): ScheduleSpec {
  return startAt === undefined && endAt === undefined ? spec : new BoundedSpec(spec, startAt, endAt);
}
