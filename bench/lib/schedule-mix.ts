// Workload 10's schedule mix: the definition of schedule number i (the same in every instance).
// - i < 5: `@every 1s` (a fixed few that fire in every window, whatever N);
// - i % 10 == 0: the burst group, `@every <burstEvery>s` (N/10 due together at each multiple);
// - odd i: a cron in one of 5 zones, hourly to monthly (all at second 0 of a minute);
// - else: an interval of 1 min to 1 day (epoch-aligned, so due at whole minutes).
// Nothing but the 1 s group comes due between two multiples of `burstEvery` (a divisor of 60).

export const ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Sydney'];
const PERIODS_S = [60, 300, 900, 3600, 21_600, 86_400];

function cron(i: number): string {
  const m = i % 60;
  const h = i % 24;
  switch ((i >> 3) % 6) {
    case 0:
      return `${m} * * * *`;
    case 1:
      return `${m} ${h} * * *`;
    case 2:
      return '*/15 * * * *';
    case 3:
      return `${m} ${h} * * 1-5`;
    case 4:
      return `0 ${h} 1 * *`;
    default:
      return `*/5 ${h} * * *`;
  }
}

/** The definition (without type) of schedule number `i`. */
export function scheduleDefinition(i: number, burstEvery: number): { name: string; spec: string; timeZone?: string; payload: unknown } {
  const name = `s${i}`;
  const payload = { n: i };
  if (i < 5) return { name, spec: '@every 1s', payload };
  if (i % 10 === 0) return { name, spec: `@every ${burstEvery}s`, payload };
  if (i % 2 === 1) return { name, spec: cron(i), timeZone: ZONES[(i >> 1) % ZONES.length], payload };
  return { name, spec: `@every ${PERIODS_S[(i >> 1) % PERIODS_S.length]}s`, payload };
}
