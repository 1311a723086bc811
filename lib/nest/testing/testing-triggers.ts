// The testing kit's triggers (ChronosTesting.fireDue, triggerNow): those due in a range, and the task each enqueues.
import { randomUUID } from 'node:crypto';
import type { StoredSchedule } from '../../core/scheduler/definition.js';
import { jitterShiftMs } from '../../core/scheduler/schedule-bounds.js';
import { TRIGGERS_BETWEEN_COUNT_LIMIT, triggersBetween } from '../../core/scheduler/spec.js';
import { ChronosTestingError } from './testing-error.js';
import type { KitSchedule } from './testing-roles.js';
import type { NewTask } from './testing-store.js';

/** The triggers of the schedules (not paused) in [from, to], in trigger order. @throws ChronosTestingError for more than 10 000 triggers of one schedule. */
export function dueTriggers(schedules: Iterable<KitSchedule>, f: number, t: number): { s: KitSchedule; at: number }[] {
  const due: { s: KitSchedule; at: number }[] = [];
  for (const s of schedules) {
    if (s.stored.paused) continue;
    const { triggers, skipped } = triggersBetween(s.spec, f - 1, t, TRIGGERS_BETWEEN_COUNT_LIMIT);
    if (skipped > 0)
      throw new ChronosTestingError(
        `fireDue: schedule "${s.stored.name}" has more than ${TRIGGERS_BETWEEN_COUNT_LIMIT} triggers in the range: split it`,
      );
    for (const at of triggers) due.push({ s, at });
  }
  due.sort((x, y) => x.at - y.at || x.s.stored.name.localeCompare(y.s.stored.name));
  return due;
}

/** The task a trigger of a schedule enqueues: the engine's id, dedup key and `triggerAt`, starting at its jitter-shifted instant. */
export function triggerTask(st: StoredSchedule, id: string, at: number, dedupTtl: number): NewTask {
  return {
    id,
    type: st.type,
    payload: JSON.parse(st.payload) as unknown,
    queue: st.queue,
    options: { maxRetry: st.maxRetry, timeout: st.timeoutMs, dedupKey: id, dedupTtl },
    enqueuedAt: at,
    runAt: at + jitterShiftMs(st.name, at, st.jitterMs), // starts at its shifted instant, as in the engine
    schedule: st.name,
    triggerAt: at,
    ...(st.group !== undefined ? { group: st.group } : {}),
  };
}

/** The task an operator's trigger-now of a schedule enqueues (`<schedule>:manual:<uuid>`, due now; no dedup key). */
export function manualTask(st: StoredSchedule, now: number): NewTask {
  const id = `${st.name}:manual:${randomUUID()}`;
  const payload = JSON.parse(st.payload) as unknown;
  const options = { maxRetry: st.maxRetry, timeout: st.timeoutMs };
  return {
    id,
    type: st.type,
    payload,
    queue: st.queue,
    options,
    enqueuedAt: now,
    runAt: now,
    schedule: st.name,
    triggerAt: now,
    ...(st.group !== undefined ? { group: st.group } : {}),
  };
}
