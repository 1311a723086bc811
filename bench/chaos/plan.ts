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
  /** SIGSTOP only: how long until SIGCONT, ms. */
  stopMs: number;
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

const KINDS: FaultKind[] = ['sigkill', 'sigstop', 'sigterm'];

/**
 * Faults every 3–8 s (uniform), each SIGKILL + restart, SIGSTOP for 3–8 s, or SIGTERM + restart
 * (equally likely), half of them aimed at the leader; none runs past the window's end (a SIGSTOP
 * is continued, a restart has 2 s). Two Redis restarts, at 25–40 % and 60–75 % of the window,
 * each down for `downMs` (a [min, max] range, ms: from the stop to the start again), stopped the
 * ways `stops` names in turn.
 */
export function makePlan(seed: number, windowMs: number, replicas: number, stops: RedisStop[], downMs: [number, number]): Plan {
  const rand = prng(seed);
  const between = (lo: number, hi: number) => Math.round(lo + rand() * (hi - lo));
  const faults: PlannedFault[] = [];
  for (let at = between(3000, 8000); ; at += between(3000, 8000)) {
    const kind = KINDS[Math.floor(rand() * KINDS.length)];
    const f: PlannedFault = { at, kind, preferLeader: rand() < 0.5, slot: Math.floor(rand() * replicas), stopMs: between(3000, 8000) };
    if (at + (kind === 'sigstop' ? f.stopMs : 2000) > windowMs) break;
    faults.push(f);
  }
  const redis = [
    [0.25, 0.4],
    [0.6, 0.75],
  ].map(([lo, hi], k) => ({ at: between(lo * windowMs, hi * windowMs), how: stops[k % stops.length], downMs: between(...downMs) }));
  return { faults, redis };
}
