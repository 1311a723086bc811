/**
 * Superseded runs (overlap policy `cancel-previous`): when the next trigger of a schedule is
 * enqueued while its previous task runs, the new task takes the schedule's overlap marker (fire.lua
 * mode `c`) and the run of the previous one is told to stop: its signal is aborted with a
 * {@link TaskSupersededError}, and its end, whatever the handler does, is acked (never retried:
 * executor.ts). A worker learns it two ways: the leader's notice on the cancel channel (at once, for
 * every worker: cancel-listener.ts), and its own claim renewals, which find the marker taken
 * (claim.lua; every visibility timeout / 3), in case the notice was lost (a leader that died right
 * after the fire, a subscriber reconnecting).
 */
import { TaskSupersededError } from '../runtime/errors.js';
import type { EventBus } from '../runtime/events.js';
import type { ChronosLogger } from '../runtime/logger.js';
import { META, OVERLAP_MODE, type TaskMeta } from '../redis/protocol.js';
import type { TaskRun } from './task-run.js';

/** True when a task holds its schedule's overlap marker under `cancel-previous` (a newer trigger supersedes it). */
export function isCancelPrevious(meta: TaskMeta): boolean {
  return meta[META.overlapSkip] === 1 && meta[META.overlapMode] === OVERLAP_MODE.cancelPrevious;
}

/**
 * Aborts a run that `supersededBy` (the new trigger's task id) superseded, once: logs it and emits
 * `task.superseded`. A run already aborted (cancelled, timed out, superseded) is left alone.
 * @returns whether it was aborted now.
 */
export function supersede(run: TaskRun, supersededBy: string, logger: ChronosLogger, events: EventBus): boolean {
  if (run.superseded || run.abandoned || supersededBy === run.id) return false;
  const schedule = run.schedule ?? '';
  run.abort(new TaskSupersededError(schedule, run.id, supersededBy));
  if (!run.superseded) return false; // aborted before for another reason (cancelled, timed out)
  logger.log(
    `Task superseded by the next trigger of its schedule: its signal is aborted; it will be acked, not retried ` +
      `(id=${run.id} queue=${run.queue} schedule=${schedule} by=${supersededBy} overlap=cancel-previous)`,
  );
  if (events.active) {
    events.emit({ type: 'task.superseded', queue: run.queue, taskId: run.id, taskType: run.type, schedule, supersededBy });
  }
  return true;
}
