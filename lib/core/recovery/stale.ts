/**
 * Stale trigger tasks: the catch-up policy of a schedule also governs its trigger tasks that are
 * still waiting in a queue (handed back at a shutdown, reclaimed from a dead worker, stuck behind
 * a backlog). A trigger task is skipped at start, not run, when its first attempt would start
 * - more than the schedule's `catchUpWindow` after its instant, or
 * - with catch-up `latest` or `none`, or with overlap `cancel-previous` (then a retry too), once
 *   the schedule's next trigger has come (a newer trigger supersedes it: the leader enqueues that
 *   one, or has already). Never with overlap `buffer-one`: the newer trigger waits behind it; nor
 *   the last run under maxRuns (fire.lua writes it without `supersededAt`: nothing comes after it).
 * Instants are by the worker's estimate of Redis time. A skipped task leaves the queue like a
 * success (acked, so it counts in the day's processed count), is logged and is emitted as
 * `schedule.skipped` with reason `stale`. Retries (after a handler failure) are never skipped:
 * the retry policy governs them. What the worker needs is in the task's meta (protocol.ts META
 * `catchUpWindowMs`, `supersededAt`, written by the leader).
 */
import type { EventBus } from '../runtime/events.js';
import type { ChronosLogger } from '../runtime/logger.js';
import { META, OVERLAP_MODE, type TaskMeta } from '../redis/protocol.js';
import type { AckBatcher } from '../worker/ack-batcher.js';
import { markerKeys, type StreamTask } from '../queue/codec.js';
import type { QueueRef } from '../worker/task-run.js';

/** Why a trigger task is stale: it would start beyond its schedule's window, or a newer trigger supersedes it. */
export type StaleReason = 'window' | 'superseded';

/** Why a task is stale at `redisNowMs` (epoch ms), or undefined when it runs (not a trigger task, a retry, or in time). */
export function staleReason(meta: TaskMeta, redisNowMs: number): StaleReason | undefined {
  const triggerAt = meta[META.triggerAt];
  if (triggerAt === undefined) return undefined;
  const first = meta[META.retried] === 0;
  // a retry is governed by the retry policy, except that under cancel-previous a newer trigger supersedes it
  if (!first && meta[META.overlapMode] !== OVERLAP_MODE.cancelPrevious) return undefined;
  const windowMs = meta[META.catchUpWindowMs];
  if (first && windowMs !== undefined && redisNowMs - triggerAt > windowMs) return 'window';
  const supersededAt = meta[META.supersededAt];
  if (supersededAt !== undefined && redisNowMs >= supersededAt) return 'superseded';
  return undefined;
}

/** Skips stale trigger tasks at start (see the module's header). */
export class StaleTriggers {
  constructor(
    private readonly acker: AckBatcher,
    private readonly events: EventBus,
    private readonly logger: ChronosLogger,
  ) {}

  /**
   * Skips `task` when it is stale at `redisNowMs` (epoch ms): acks it, releasing its overlap key,
   * logs and emits `schedule.skipped` (reason `stale`). @returns whether it was skipped.
   */
  skipIfStale(queue: QueueRef, task: StreamTask, redisNowMs: number): boolean {
    const reason = staleReason(task.meta, redisNowMs);
    if (reason === undefined) return false;
    const schedule = task.meta[META.schedule] ?? '';
    const triggerAt = task.meta[META.triggerAt]!;
    this.acker.add(queue.keys, task.entryId, task.id, markerKeys(queue.keys, task));
    const why =
      reason === 'window'
        ? `it would start more than the schedule's catch-up window after its instant (catchUpWindowMs=${task.meta[META.catchUpWindowMs]})`
        : `a newer trigger of the schedule has come (next=${task.meta[META.supersededAt]})`;
    this.logger.warn(
      `Trigger task skipped at start: ${why} (id=${task.id} queue=${queue.name} lateMs=${Math.round(redisNowMs - triggerAt)})`,
    );
    this.events.emit({ type: 'schedule.skipped', schedule, triggerAt, reason: 'stale', count: 1 });
    return true;
  }
}
