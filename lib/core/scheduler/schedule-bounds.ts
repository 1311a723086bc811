/**
 * A schedule's spread and bounds, beside its spec: `jitter` (each trigger's task starts a
 * deterministic shift after the trigger's instant), `startAt` / `endAt` (the span its triggers fall
 * in) and `maxRuns` (the most triggers it enqueues, fleet-wide). Validation (at registration, never
 * at fire time) and the shift of a trigger. Units: epoch milliseconds and ms.
 *
 * **Jitter, where it applies.** The leader fires a trigger at its *nominal* instant, as without
 * jitter: its dedup key `<schedule>:<trigger-unix>`, its task id and the task's `triggerAt` are the
 * nominal ones, and the catch-up rules, the pause skip, the overlap decision, the generation fence
 * and the maxRuns count are all decided there, by fire.lua, exactly as without jitter. Only the
 * task's start moves: fire.lua writes it as a delayed task due at `nominal + shift` (the queue's
 * scheduled set), and the forwarder hands it to a worker then, never before. Hence once per
 * trigger and the order of fires hold whatever the jitter; a stale-skip window counts from the
 * shifted instant (the task is on time relative to it).
 */
import { nearEpochProblem, type OptionProblems } from '../runtime/options.js';
import type { ScheduleSpec } from './spec-base.js';
import { INSTANT_LIMIT_MS } from './spec-bounded.js';

/** Largest `jitter`: one day, ms. */
export const MAX_JITTER_MS = 86_400_000;

/** The fields of a definition this module checks (see `ScheduleDefinition`). */
export interface BoundsInput {
  jitter?: number;
  startAt?: number | Date;
  endAt?: number | Date;
  maxRuns?: number;
}

/** Their registry form: each absent when not given (a jitter of 0 is none). */
export interface StoredBounds {
  /** Spread of each trigger's start, ms: the task starts a deterministic shift in `[0, jitterMs)` after the trigger's instant (`jitterShiftMs`). */
  jitterMs?: number;
  /** No trigger before this instant (inclusive), epoch ms. */
  startAt?: number;
  /** No trigger at or after this instant (exclusive), epoch ms. */
  endAt?: number;
  /** The most triggers the schedule enqueues in total, fleet-wide. */
  maxRuns?: number;
}

/**
 * An epoch-ms number or a valid Date, as epoch ms; undefined otherwise (a problem is recorded): one
 * too near the epoch to be meant in ms is refused too, with the ms it meant if it is epoch seconds.
 */
function instantOf(p: OptionProblems, key: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms === 'number' && Number.isInteger(ms) && Math.abs(ms) < INSTANT_LIMIT_MS) {
    const near = nearEpochProblem(ms, value);
    if (near === undefined) return ms;
    p.add(key, near, value);
    return undefined;
  }
  p.expected(key, 'an epoch time in ms (an integer) or a valid Date', value instanceof Date ? String(value) : value);
  return undefined;
}

/**
 * Checks `jitter` (an integer, 0 ≤ jitter ≤ {@link MAX_JITTER_MS}, and less than the period of an
 * every-spec), `startAt` and `endAt` (epoch ms or Date; `endAt` after `startAt`, and when both are
 * given at least one trigger of `spec` in `[startAt, endAt)`) and `maxRuns` (an integer from 1 to
 * Number.MAX_SAFE_INTEGER), recording each problem in `p`; returns their registry form.
 */
export function checkBounds(def: BoundsInput, spec: ScheduleSpec, p: OptionProblems): StoredBounds {
  const out: StoredBounds = {};
  const { jitter, maxRuns } = def;
  if (jitter !== undefined) {
    if (typeof jitter !== 'number' || !Number.isInteger(jitter) || jitter < 0 || jitter > MAX_JITTER_MS) {
      p.expected('jitter', `an integer from 0 to ${MAX_JITTER_MS} (ms)`, jitter);
    } else if (spec.everyMs !== undefined && jitter >= spec.everyMs) {
      p.expected('jitter', `less than the period (${spec.everyMs} ms)`, jitter);
    } else if (jitter > 0) out.jitterMs = jitter;
  }
  const startAt = instantOf(p, 'startAt', def.startAt);
  const endAt = instantOf(p, 'endAt', def.endAt);
  if (startAt !== undefined) out.startAt = startAt;
  if (endAt !== undefined) {
    if (startAt !== undefined && endAt <= startAt) p.expected('endAt', `an instant after startAt (${startAt})`, endAt);
    else out.endAt = endAt;
  }
  // a window with no trigger in it would be stored and never fire: refused, naming the window and the spec's triggers around it
  if (out.startAt !== undefined && out.endAt !== undefined) {
    const first = spec.nextAfter(out.startAt - 1);
    if (first === null || first >= out.endAt) p.add('endAt', emptyWindowProblem(spec, out.startAt, out.endAt, first), endAt);
  }
  if (maxRuns !== undefined) {
    // a safe integer: above 2^53 a count cannot be told from the next (1e300 is an integer to JavaScript; its runsLeft could never move)
    if (typeof maxRuns !== 'number' || !Number.isSafeInteger(maxRuns) || maxRuns < 1) {
      p.expected('maxRuns', `an integer from 1 to ${Number.MAX_SAFE_INTEGER}`, maxRuns);
    } else out.maxRuns = maxRuns;
  }
  return out;
}

/** The problem of a `[startAt, endAt)` window no trigger of `spec` falls in; `first` is its first trigger at or after startAt. */
function emptyWindowProblem(spec: ScheduleSpec, startAt: number, endAt: number, first: number | null): string {
  const iso = (ms: number) => new Date(ms).toISOString();
  const next = first === null ? 'none' : iso(first);
  return (
    `the window [startAt ${iso(startAt)}, endAt ${iso(endAt)}) holds no trigger of ${JSON.stringify(spec.expression)} ` +
    `(${spec.timeZone}; its first trigger at or after startAt: ${next}), so the schedule would never fire`
  );
}

/**
 * The shift of a trigger's start, ms, in `[0, jitterMs)`: FNV-1a (32-bit) of
 * `<schedule>:<triggerAtMs>` (UTF-8), avalanched (murmur3's finaliser), modulo `jitterMs`. Pure:
 * every replica computes the same shift for the same trigger. 0 when `jitterMs` is 0 or absent.
 */
export function jitterShiftMs(schedule: string, triggerAtMs: number, jitterMs: number | undefined): number {
  if (!jitterMs) return 0;
  let h = 0x811c9dc5;
  for (const b of Buffer.from(`${schedule}:${triggerAtMs}`, 'utf8')) h = Math.imul(h ^ b, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) % jitterMs;
}
