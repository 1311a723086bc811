// The chaos run's judgement of the limited queue (issue 21): never more tasks of it running at once
// than its fleet-wide `concurrency`, never more of one group than its `groupConcurrency`.
//
// The witness is the records list, in the order the records Redis received them: a handler records
// its start after it was handed the task and its end before it returns (so before its ack), so each
// recorded run lies inside the time its slot was held, and more recorded runs at once than the limit
// means more slots at once than the limit. A run stops counting at its `done`; when its process was
// SIGKILLed or crashed (its handler died with it; the slot is freed later, by liveness); when its
// process had been SIGSTOPped long enough for its entries to be idle for the visibility timeout (two
// thirds of it: their claims were renewed every third; from then on they, and with them their slots,
// may be reclaimed; the stopped handler resumes at SIGCONT beside the task's new run: the
// documented at-least-once case); or when another process starts the same task (it was reclaimed).
import { FLEET, type ChaosRecord } from './common.js';
import type { RunLog } from './analyze.js';

export interface LimitOutcome {
  /** Handler starts of the limited queue's tasks. */
  starts: number;
  /** The most runs of the queue at once, and of one group. */
  peak: number;
  groupPeak: number;
  /** Runs over a limit: the first few, described. */
  over: string[];
}

export function judgeLimits(log: RunLog): LimitOutcome {
  const { concurrency, groupConcurrency } = FLEET.limits;
  // when a process's handlers died: its SIGKILLs and crashes, in time order
  const deaths = [
    ...log.faults.filter((f) => f.kind === 'sigkill').map((f) => ({ name: f.name, at: f.at })),
    ...log.crashes.map((c) => ({ name: c.name, at: c.at })),
    ...log.faults
      .filter((f) => f.kind === 'sigstop' && (f.contAt ?? Infinity) - f.at > FLEET.visibilityTimeoutMs)
      // the earliest its entries can be idle for the visibility timeout: their claims were renewed every third of it
      .map((f) => ({ name: f.name, at: f.at + (FLEET.visibilityTimeoutMs * 2) / 3 })),
  ].sort((a, b) => a.at - b.at);
  let nextDeath = 0;
  /** Open runs: `<instance>|<task id>` → group. */
  const open = new Map<string, string>();
  const byTask = new Map<string, string>(); // task id → its open run's key
  const out: LimitOutcome = { starts: 0, peak: 0, groupPeak: 0, over: [] };
  const close = (key: string) => {
    open.delete(key);
    const id = key.slice(key.indexOf('|') + 1);
    if (byTask.get(id) === key) byTask.delete(id);
  };
  const running = (g?: string) => (g === undefined ? open.size : [...open.values()].filter((x) => x === g).length);
  for (const r of log.records as ChaosRecord[]) {
    if ((r.k !== 'start' && r.k !== 'done') || r.q !== 'l') continue;
    while (nextDeath < deaths.length && deaths[nextDeath].at <= r.t) {
      const d = deaths[nextDeath++];
      for (const key of [...open.keys()]) if (key.startsWith(`${d.name}|`)) close(key);
    }
    const key = `${r.i}|${r.id}`;
    if (r.k === 'done') {
      close(key);
      continue;
    }
    out.starts++;
    const previous = byTask.get(r.id);
    if (previous !== undefined) close(previous); // reclaimed: the new run is the task's
    const g = r.g ?? '';
    open.set(key, g);
    byTask.set(r.id, key);
    const total = open.size;
    const inGroup = running(g);
    out.peak = Math.max(out.peak, total);
    out.groupPeak = Math.max(out.groupPeak, inGroup);
    if ((total > concurrency || inGroup > groupConcurrency) && out.over.length < 5) {
      out.over.push(
        `${r.id} (group ${g}) on ${r.i} at +${((r.t - log.window.start) / 1000).toFixed(1)} s: ${total} running, ${inGroup} of its group`,
      );
    }
  }
  return out;
}
