/** Percentile p (0–100) of an ascending array, linear interpolation; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  if (sorted.length === 1) return sorted[0];
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

export function sortedCopy(values: readonly number[]): number[] {
  return values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

/** Median with min–max of the finite values (NaN fields when there are none). */
export function spread(values: readonly number[]): Spread {
  const s = sortedCopy(values);
  return { median: percentile(s, 50), min: s.length ? s[0] : NaN, max: s.length ? s[s.length - 1] : NaN, n: s.length };
}

export interface Latency {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
  n: number;
}

export function latencySummary(values: readonly number[]): Latency {
  const s = sortedCopy(values);
  const mean = s.length ? s.reduce((a, b) => a + b, 0) / s.length : NaN;
  return {
    p50: percentile(s, 50),
    p95: percentile(s, 95),
    p99: percentile(s, 99),
    max: s.length ? s[s.length - 1] : NaN,
    mean,
    n: s.length,
  };
}
