/**
 * An hourly spec whose instants fall half an hour from now: a test that runs a leader and means
 * "this schedule does not fire during the test" uses it. A plain '@every 1h' (or '0 * * * *') fires
 * at the top of the hour, so a run across it sees a fire the test did not expect (scheduler-edges
 * fault 3, CI of ccef127 at 02:00 UTC).
 */
export function quietHourly(nowMs = Date.now()): { every: string; offset: number } {
  return { every: '1h', offset: Math.floor(((nowMs + 1_800_000) % 3_600_000) / 1000) * 1000 };
}
