import { performance } from 'node:perf_hooks';

/** Wall-clock epoch ms with sub-ms resolution (comparable across processes on one machine). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Sleeps until the epoch instant `at` (ms), to within the timer's ~1 ms. */
export async function sleepUntil(at: number): Promise<void> {
  for (;;) {
    const left = at - nowMs();
    if (left <= 0) return;
    await sleep(left > 2 ? left - 1 : left);
  }
}

/** Node CPU used since `start` (a process.cpuUsage() value), µs (user + system). */
export function cpuSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return d.user + d.system;
}
