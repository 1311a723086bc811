// The definitions of the "schedules as data" workload (w13, issue 25): per-tenant digests (a monthly cron in one of
// 5 zones, a small payload, 10 queues, two labels where the library has them) and a burst set (every-specs all due
// at one instant, optionally with a jitter). Shared by the parent and its children.
import type { ScheduleDefinition } from '../../lib/core/index.js';

const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Sydney'];
/** The burst's every-spec period, ms: one trigger per hour, so only the measured instant comes due in a run. */
export const BURST_PERIOD_MS = 3_600_000;
/** The task type of the burst schedules. */
export const BURST_TYPE = 'burst';

/** The two labels of tenant `i` (plan and region), as the per-tenant schedules carry them. */
export function labelsOf(i: number): Record<string, string> {
  return { plan: ['free', 'pro', 'team'][i % 3], region: ['eu', 'us', 'ap'][i % 3 === 0 ? 0 : i % 2 ? 1 : 2] };
}

/**
 * Tenant `i`'s digest: at minute i % 60 of 03:00 on the 1st of the month in its zone (so none comes due in a run),
 * `{ tenant, version }` payload, one of 10 queues; `labels` only when `withLabels` (the library accepts them).
 */
export function digest(i: number, withLabels: boolean, version = 1): ScheduleDefinition {
  const def: ScheduleDefinition = {
    name: `tenant.${i}.digest`,
    spec: `${i % 60} 3 1 * *`,
    timeZone: ZONES[i % 5],
    queue: `digests-${i % 10}`,
    type: 'digest.send',
    payload: { tenant: `t-${i}`, version },
  };
  return withLabels ? ({ ...def, labels: labelsOf(i) } as ScheduleDefinition) : def;
}

/** Burst schedule `i`: due at `instant` (and every hour after), `jitter` ms of spread when > 0. */
export function burst(i: number, instant: number, jitter = 0): ScheduleDefinition {
  const def: ScheduleDefinition = {
    name: `burst.${i}`,
    spec: { every: BURST_PERIOD_MS, offset: instant % BURST_PERIOD_MS },
    type: BURST_TYPE,
    payload: { n: i },
  };
  return jitter > 0 ? { ...def, jitter } : def;
}

/** The leader's "table loaded" probe: due at the next whole second, once (maxRuns 1), so its fire follows the load. */
export const SENTINEL: ScheduleDefinition = { name: 'sentinel', spec: '@every 1s', type: 'sentinel', maxRuns: 1 };

/** Whether this build's schedule definitions take `labels` (the Inspector's label pages came after the bulk API). */
export async function labelsSupported(): Promise<boolean> {
  const { validateDefinitions } = await import('../../lib/core/admin/schedule-bulk.js');
  try {
    validateDefinitions([digest(0, true)], 'UTC', 'probe');
    return true;
  } catch {
    return false;
  }
}
