// The seeded plan of a chaos run: which fault comes when, on whom, and when Redis restarts. The
// whole plan is drawn from the seed before the run starts, so a seed always gives the same fault
// times, kinds, durations and slots; only "the leader" is resolved at run time.
import type { FaultKind } from './fleet.js';
import type { RedisStop } from './redis.js';

/** mulberry32: a small, fast, seeded PRNG; returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One planned replica fault; `at` is ms after the start of the chaos window. */
export interface PlannedFault {
  at: number;
  kind: FaultKind;
  /** Hit the current leader (when it is up); otherwise slot `slot` or the next one up. */
  preferLeader: boolean;
  /** 0-based slot. */
  slot: number;
  /** SIGSTOP: how long until SIGCONT; clock step: how long until the step back; partition: how long until the heal, ms. */
  stopMs: number;
  /** Clock step only: how far the replica's wall clock is stepped, ms (+1 h or −1 h). */
  stepMs: number;
}

/** One planned Redis restart; `at` is ms after the start of the chaos window. */
export interface PlannedRedisRestart {
  at: number;
  how: RedisStop;
  /** How long Redis stays down before it is started again, ms. */
  downMs: number;
}

export interface Plan {
  faults: PlannedFault[];
  redis: PlannedRedisRestart[];
}

const KINDS: FaultKind[] = ['sigkill', 'sigstop', 'sigterm', 'clockstep', 'partition'];

/** How long a timed fault lasts, [min, max] ms: a partition stays over `leaderTtl` (2 s) and under the visibility timeout (5 s). */
const HOLD_MS: Partial<Record<FaultKind, [number, number]>> = { sigstop: [3000, 8000], clockstep: [3000, 8000], partition: [2500, 4500] };

/** One hour, ms: the size of a wall-clock step. */
export const CLOCK_STEP_MS = 3_600_000;

/**
 * Faults every 3–8 s (uniform), each SIGKILL + restart, SIGSTOP for 3–8 s, SIGTERM + restart, a
 * step of the replica's wall clock by ±1 h for 3–8 s (then stepped back), or a silent partition of
 * the replica's Redis connection for 2.5–4.5 s (then healed), equally likely; half of them aimed at
 * the leader; none runs past the window's end (a timed fault is over, a restart has 2 s). Two Redis restarts, at 25–40 % and 60–75 % of the window,
 * each down for `downMs` (a [min, max] range, ms: from the stop to the start again), stopped the
 * ways `stops` names in turn.
 */
export function makePlan(seed: number, windowMs: number, replicas: number, stops: RedisStop[], downMs: [number, number]): Plan {
  const rand = prng(seed);
  const between = (lo: number, hi: number) => Math.round(lo + rand() * (hi - lo));
  const faults: PlannedFault[] = [];
  for (let at = between(3000, 8000); ; at += between(3000, 8000)) {
    const kind = KINDS[Math.floor(rand() * KINDS.length)];
    const preferLeader = rand() < 0.5;
    const slot = Math.floor(rand() * replicas);
    const [lo, hi] = HOLD_MS[kind] ?? [0, 0];
    const stopMs = between(lo, hi);
    const stepMs = rand() < 0.5 ? -CLOCK_STEP_MS : CLOCK_STEP_MS;
    const f: PlannedFault = { at, kind, preferLeader, slot, stopMs, stepMs };
    if (at + (HOLD_MS[kind] ? stopMs : 2000) > windowMs) break;
    faults.push(f);
  }
  const redis = [
    [0.25, 0.4],
    [0.6, 0.75],
  ].map(([lo, hi], k) => ({ at: between(lo * windowMs, hi * windowMs), how: stops[k % stops.length], downMs: between(...downMs) }));
  return { faults, redis };
}
