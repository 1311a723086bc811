/**
 * Compiled cron patterns, shared: one croner instance per (croner pattern, zone, day rule), held
 * weakly, so 10,000 schedules of a few expressions hold a few instances, and the memory of one
 * instance made small (see {@link compactPattern}).
 *
 * Why: a croner@11 `CronPattern` holds a 10,000-element year array (`Array(1e4).fill(1)`, one slot
 * per year 0-9999, even for a `*` year in 5-part mode), about 80 KiB per instance; its other field
 * arrays (second, minute, hour, day, month, day-of-week, nearest weekdays: 225 slots) about 2 KiB.
 * The arrays are only read after the constructor, so content-equal arrays can be one frozen array.
 * See docs/upstream/croner-memory.md for the report to croner.
 * Units: epoch milliseconds.
 */
import type { Cron } from 'croner';

/** Triggers remembered per compiled pattern: schedules sharing one ask for the same instants at a tick. */
const MEMO_SIZE = 8;

/**
 * A croner instance and what is derived from its pattern, shared by every spec that compiles to it.
 * {@link nextAfter} is pure, so it remembers its last few answers: at a burst, the schedules of one
 * expression ask for the same instants (their lastFired and the tick's now are the same).
 */
export class CompiledCron {
  private readonly memoAfter: Float64Array;
  /** NaN stands for null (no trigger ever). */
  private readonly memoNext: Float64Array;
  private memoAt = 0;

  constructor(
    /** The croner instance (its pattern arrays compacted when shared). */
    readonly cron: Cron,
    /** Lower bound of the gap between two triggers, ms (see spec-cron.ts cronMinPeriodMs). */
    readonly minPeriodMs: number,
    /** Whether {@link nextAfter} remembers its answers (off for the fresh instances of {@link withoutSharing}). */
    memo = true,
  ) {
    const size = memo ? MEMO_SIZE : 0;
    this.memoAfter = new Float64Array(size).fill(NaN);
    this.memoNext = new Float64Array(size);
  }

  /** croner's first run strictly after `afterMs` (epoch ms, in croner's range), or null. */
  nextAfter(afterMs: number): number | null {
    const size = this.memoAfter.length;
    if (size === 0) {
      const next = this.cron.nextRun(new Date(afterMs));
      return next === null ? null : next.getTime();
    }
    for (let i = 0; i < size; i++) {
      if (this.memoAfter[i] === afterMs) {
        const v = this.memoNext[i]!;
        return Number.isNaN(v) ? null : v;
      }
    }
    const next = this.cron.nextRun(new Date(afterMs));
    const v = next === null ? NaN : next.getTime();
    this.memoAfter[this.memoAt] = afterMs;
    this.memoNext[this.memoAt] = v;
    this.memoAt = (this.memoAt + 1) % size;
    return next === null ? null : v;
  }
}

/**
 * A map whose values are held weakly: a value stays shared while something else holds it, and its
 * entry goes when it is collected. Keys are strings.
 */
export class WeakValueCache<V extends object> {
  private readonly map = new Map<string, WeakRef<V>>();
  private readonly registry = new FinalizationRegistry<string>((key) => {
    const ref = this.map.get(key);
    if (ref !== undefined && ref.deref() === undefined) this.map.delete(key);
  });

  /** The live value of `key`, or undefined. */
  get(key: string): V | undefined {
    return this.map.get(key)?.deref();
  }

  /** Stores `value` under `key` (weakly). */
  set(key: string, value: V): void {
    this.map.set(key, new WeakRef(value));
    this.registry.register(value, key);
  }

  /** Entries, live or not yet swept (for tests and measurements). */
  get size(): number {
    return this.map.size;
  }
}

/** The fields of a croner `CronPattern` that are arrays, read-only once it is constructed. */
const PATTERN_ARRAYS = ['second', 'minute', 'hour', 'day', 'month', 'dayOfWeek', 'nearestWeekdays', 'year'] as const;
/** Distinct field arrays kept for sharing; past this many a new content is left unshared (still correct). */
const SHARED_ARRAYS_LIMIT = 4096;
const sharedArrays = new Map<string, readonly number[]>();

/**
 * Makes a croner instance small: each array of its pattern is replaced by one frozen array of the
 * same content, shared by every instance (the `*` year array of 10,000 ones is one array for all).
 * Relies on croner's internal shape (`_states.pattern`); when that is not found it does nothing (the
 * instance is then just large). Frozen: a croner that wrote to a pattern array after construction
 * would throw (in strict-mode code) rather than change another schedule's pattern.
 */
export function compactPattern(cron: Cron): void {
  const pattern = (cron as unknown as { _states?: { pattern?: Record<string, unknown> } })._states?.pattern;
  if (pattern === undefined || pattern === null) return;
  for (const field of PATTERN_ARRAYS) {
    const a = pattern[field];
    if (!Array.isArray(a)) continue;
    // the '*' year: croner fills all 10,000 slots with 1 (joining them would cost more than the rest)
    const key = field === 'year' && pattern.starYear === true ? `year:*:${a.length}` : `${field}:${a.join(',')}`;
    let shared = sharedArrays.get(key);
    if (shared === undefined) {
      if (sharedArrays.size >= SHARED_ARRAYS_LIMIT) continue;
      shared = Object.freeze(a.slice() as number[]);
      sharedArrays.set(key, shared);
    }
    pattern[field] = shared;
  }
}

const compiled = new WeakValueCache<CompiledCron>();
let sharing = true;

/** Whether specs and compiled patterns are shared (false only inside {@link withoutSharing}). */
export function sharingEnabled(): boolean {
  return sharing;
}

/**
 * Runs `fn` with sharing off: every cron spec parsed meanwhile is compiled afresh, with its own
 * croner instance as croner builds it (not compacted, not cached, no memo). For tests and
 * measurements that compare shared specs with fresh ones. @returns what `fn` returns
 */
export function withoutSharing<T>(fn: () => T): T {
  const before = sharing;
  sharing = false;
  try {
    return fn();
  } finally {
    sharing = before;
  }
}

/**
 * The shared compiled form of a croner pattern with its options, built by `build` (which validates
 * and may throw) when no live one exists. `key` must determine the pattern, the options and the
 * derived facts (the zone, the day rule).
 */
export function compiledCron(key: string, build: () => { cron: Cron; minPeriodMs: number }): CompiledCron {
  if (!sharing) {
    const { cron, minPeriodMs } = build();
    return new CompiledCron(cron, minPeriodMs, false);
  }
  let c = compiled.get(key);
  if (c === undefined) {
    const { cron, minPeriodMs } = build();
    compactPattern(cron);
    c = new CompiledCron(cron, minPeriodMs);
    compiled.set(key, c);
  }
  return c;
}
