/** What an operator did through the Inspector (the CLI, the console or `InspectorService`). @publicApi */
export type OperatorAction =
  | 'dead.retry'
  | 'task.run'
  | 'task.delete'
  | 'task.cancel'
  | 'queue.pause'
  | 'queue.resume'
  | 'queue.limits'
  | 'schedule.pause'
  | 'schedule.resume'
  | 'schedule.trigger'
  | 'schedule.remove'
  | 'schedule.backfill';

/** Every {@link OperatorAction}, for checking a filter at run time (the audit trail's `action`). */
export const OPERATOR_ACTIONS = [
  'dead.retry',
  'task.run',
  'task.delete',
  'task.cancel',
  'queue.pause',
  'queue.resume',
  'queue.limits',
  'schedule.pause',
  'schedule.resume',
  'schedule.trigger',
  'schedule.remove',
  'schedule.backfill',
] as const satisfies readonly OperatorAction[];
// the list names every action: a new OperatorAction left out of it does not compile
const everyAction: [Exclude<OperatorAction, (typeof OPERATOR_ACTIONS)[number]>] extends [never] ? true : never = true;
void everyAction;

/**
 * Lifecycle events of tasks, schedules and leadership. Instants are epoch ms, durations ms.
 * @publicApi
 */
export type ChronosEvent =
  | {
      /** A task was written to its queue by `enqueue` / `enqueueBulk` (or found already there by its dedup key). */
      type: 'task.enqueued';
      /** Queue the task was enqueued to. */
      queue: string;
      /** The task's id: the `taskId` option, else a generated one (22 random base64url characters; the existing task's id when deduplicated). */
      taskId: string;
      /** The task's type, which selects its handler. */
      taskType: string;
      /** `pending` when it is ready now, `scheduled` when it waits for its `delay` / `processAt`; when deduplicated, the existing task's (`EnqueueResult.state`). */
      state: 'pending' | 'scheduled' | 'retry' | 'dead';
      /** True when a task with the same dedup key already existed and nothing was written. */
      deduplicated: boolean;
    }
  | {
      /** A server handed the task to its handler (one event per attempt). */
      type: 'task.started';
      /** Queue the task was fetched from. */
      queue: string;
      /** The task's id. */
      taskId: string;
      /** The task's type, which selects its handler. */
      taskType: string;
      /** Retries already spent before this attempt (0 on the first attempt). */
      retried: number;
      /** When the task was first enqueued (the producer's clock). */
      enqueuedAt: number;
      /** When this attempt became ready: its stream entry's time (enqueued, or moved in when due, retried or put back; Redis clock). */
      readyAt: number;
      /** For trigger tasks: the schedule and the trigger instant. */
      schedule?: string;
      /** For trigger tasks: the trigger instant the task fires for, epoch ms. */
      triggerAt?: number;
      /** Times the task was reclaimed from a crashed consumer (absent when never). */
      reclaimed?: number;
    }
  | {
      /** The handler resolved: the task was acknowledged and is done. */
      type: 'task.succeeded';
      /** Queue the task ran from. */
      queue: string;
      /** The task's id. */
      taskId: string;
      /** The task's type. */
      taskType: string;
      /** Retries spent before the successful attempt (0 when it succeeded first time). */
      retried: number;
      /** How long the attempt ran, from its start to its handler's settling, ms. */
      durationMs: number;
    }
  | {
      /** The handler threw, rejected or timed out, or the server has no handler for the type (`durationMs` 0); followed by `task.retried` or `task.dead`. */
      type: 'task.failed';
      /** Queue the task ran from. */
      queue: string;
      /** The task's id. */
      taskId: string;
      /** The task's type. */
      taskType: string;
      /** Retries spent before this failed attempt (0 on the first attempt). */
      retried: number;
      /** The error's message; a thrown non-Error as text: an object as `util.inspect` shows it (`{ code: 42 }`), anything else as `String(value)` (`boom`, `undefined`). At most 4,000 UTF-16 code units and `…`. */
      error: string;
      /** How long the attempt ran before it failed, ms. */
      durationMs: number;
    }
  | {
      /** A failed task was put back as `scheduled` to run again after its backoff. */
      type: 'task.retried';
      /** The task's queue. */
      queue: string;
      /** The task's id. */
      taskId: string;
      /** The task's type. */
      taskType: string;
      /** Retries spent, this one included (1 after the first failure). */
      retried: number;
      /** When the next attempt becomes due, epoch ms (Redis clock). */
      retryAt: number;
    }
  | {
      /** A task was moved to the dead-letter set (state `dead`); it will not run again unless an operator retries it. */
      type: 'task.dead';
      /** The task's queue. */
      queue: string;
      /** The task's id. */
      taskId: string;
      /** The task's type. */
      taskType: string;
      /** Retries spent before it died. */
      retried: number;
      /**
       * Why it died: `retries`, `non-retryable`, `timeout`, `poison`, `decode` or `no-handler`. (An operator's cancel
       * dead-letters with reason `cancelled` in the Inspector, which emits `operator.acted`, not this event; the worker
       * running the task emits `task.cancelled`.)
       */
      reason: string;
      /** Message of the last error, as `task.failed` gives it (at most 4,000 UTF-16 code units and `…`). */
      error: string;
    }
  | {
      /** An operator cancelled a task this server was running: its signal was aborted (the Inspector dead-lettered it already). */
      type: 'task.cancelled';
      /** The task's queue. */
      queue: string;
      /** The task's id. */
      taskId: string;
      /** The task's type. */
      taskType: string;
      /** Who cancelled it: the `actor` the operator's tool passed. */
      actor: string;
    }
  | {
      /**
       * A newer trigger of the task's schedule (overlap `cancel-previous`) superseded the task this
       * server was running: its signal was aborted with a `TaskSupersededError`. Its end is not a
       * failure: it leaves the queue like a success (acked), never retried.
       */
      type: 'task.superseded';
      /** The task's queue. */
      queue: string;
      /** The task's id. */
      taskId: string;
      /** The task's type. */
      taskType: string;
      /** The task's schedule. */
      schedule: string;
      /** Task id of the trigger that superseded it, `<schedule>:<trigger-unix>`. */
      supersededBy: string;
    }
  | {
      /** A task was put back in its queue without spending a retry. */
      type: 'task.requeued';
      /** The task's queue. */
      queue: string;
      /** The task's id. */
      taskId: string;
      /** The task's type (for `recovered` too: the recovering script returns it with the task id). */
      taskType: string;
      /**
       * `shutdown`: the server stopped before the handler finished; `recovered`: reclaimed from a
       * consumer whose process is gone (liveness), from one idle past the visibility timeout, or at
       * start from this server's previous process (same `serverId`).
       */
      reason: 'shutdown' | 'recovered';
    }
  | {
      /**
       * A pending entry whose stream entry was gone (XDEL, a trim, eviction) when a recoverer reached
       * it: nobody runs the task again. Only the entry id is known then (its task id and type were in it).
       */
      type: 'task.lost';
      /** The queue whose stream lost the entry. */
      queue: string;
      /** The stream entry id that was pending but gone. */
      entryId: string;
      /** Why it is lost: its stream entry was deleted. */
      reason: 'entry-deleted';
    }
  | {
      /**
       * A worker with free slots waited because a fleet-wide limit of the queue held its fetch back
       * (`setQueueLimits`), for `ms`: emitted when the wait ends (a slot freed, the rate allowed a
       * start, a new task came, or the fetch's block timeout passed). Summed over workers, it is the
       * worker time a limit held back.
       */
      type: 'queue.limited';
      /** The queue held back. */
      queue: string;
      /** Which limit: the queue's `concurrency` or `rate`, or its groups' (`group`: tasks waited only in groups at their limits). */
      limit: 'concurrency' | 'rate' | 'group';
      /** How long the fetch waited, ms. */
      ms: number;
    }
  | {
      /**
       * The leader enqueued the task of one trigger of a schedule (or, with `buffered`, kept it
       * waiting behind the schedule's live task: overlap `buffer-one`).
       */
      type: 'schedule.fired';
      /** Name of the schedule. */
      schedule: string;
      /** Queue the trigger's task went to. */
      queue: string;
      /** Id of the trigger's task, its dedup key: `<schedule>:<trigger-unix>` (unix seconds). */
      taskId: string;
      /** The trigger instant, epoch ms. */
      triggerAt: number;
      /** True when the trigger was enqueued late, as a catch-up (more than 1 s after its instant). */
      caughtUp?: boolean;
      /**
       * True when the trigger waits behind the schedule's live task (overlap `buffer-one`): its
       * task is enqueued when that one ends, whichever way (`task.started` tells when it runs).
       */
      buffered?: true;
    }
  | {
      /** The leader did not enqueue one or more triggers of a schedule. */
      type: 'schedule.skipped';
      /** Name of the schedule. */
      schedule: string;
      /** The (first) skipped trigger instant, epoch ms. */
      triggerAt: number;
      /** Why: see {@link ScheduleSkipReason}. */
      reason: ScheduleSkipReason;
      /** How many triggers were skipped (1 for `overlap`). */
      count: number;
    }
  | {
      /** This instance took shard leases (docs/scheduler-shards.md) and now fires the schedules of those shards. */
      type: 'leader.acquired';
      /** Id of this instance. */
      instanceId: string;
      /** The fencing term of the lease, incremented at every acquisition (of several shards taken at once: the newest). */
      term: number;
      /** The shards taken (0 to 15: docs/scheduler-shards.md); a fleet of one takes all 16 at its start. */
      shards: number[];
    }
  | {
      /** This instance lost (or released) shard leases and stopped firing the schedules of those shards. */
      type: 'leader.lost';
      /** Id of this instance. */
      instanceId: string;
      /** The term that ended (of several shards: the newest). */
      term: number;
      /** Why, in words: `resigned`, released for a fair share, a token mismatch, or the lease expired by the local clock. */
      reason: string;
      /** The shards lost. */
      shards: number[];
    }
  | {
      /** An operator acted on a queue, task or schedule through the Inspector (or a `Scheduler`'s runtime API: actor `app:<instanceId>`). */
      type: 'operator.acted';
      /** What was done. */
      action: OperatorAction;
      /** Who did it, as the caller named itself (e.g. `cli:ada@host`). */
      actor: string;
      /** The queue acted on, when the act concerns one. */
      queue?: string;
      /** The schedule acted on, when the act concerns one. */
      schedule?: string;
      /** The task of a one-task act. */
      taskId?: string;
      /** Tasks (or triggers) the act touched; 0 when it found nothing to do (acts are safe to repeat). */
      count: number;
    }
  | {
      /**
       * An operator act was recorded in the audit trail (every act through the Inspector, done or
       * failed): the entry as `Inspector.audit()` returns it.
       */
      type: 'audit.recorded';
      /** The entry. */
      entry: AuditEntry;
    };

/** One act of the audit trail: who did what, when, from where, and the result. Instants are epoch ms. @publicApi */
export interface AuditEntry {
  /** The entry's id in the audit stream (`<ms>-<seq>`). */
  id: string;
  /** When, epoch ms (Redis time). */
  at: number;
  /** Who, as the caller named itself: `cli:ada@host`, `console:<user>`, `app:<instanceId>`. */
  actor: string;
  /** What. */
  action: OperatorAction;
  /** From where: `cli <host>`, `console <client address>`, or what the caller said (`origin`). */
  origin?: string;
  /** The queue acted on, when the act concerns one. */
  queue?: string;
  /** The schedule acted on, when the act concerns one. */
  schedule?: string;
  /** The task of a one-task act. */
  taskId?: string;
  /** `done` or `failed`. */
  result: 'done' | 'failed';
  /** Tasks (or triggers) the act touched, when done. */
  count?: number;
  /** Why it failed, when it did (the error's message). */
  error?: string;
  /** More about the act (a pause note, a backfill range, the new limits), as text. */
  detail?: string;
}

/**
 * Why triggers of a schedule were skipped: `overlap` (its previous task still ran), `catch-up` (the
 * policy, window or cap decided about a gap in firing), `pause` (they came due while it was
 * paused; reported once, at the resume), `orphaned` (they came due while no live instance declared
 * it: after its orphaned-since instant; reported once, when it is declared again), `stale` (a trigger task waited in its queue past the
 * policy: beyond the window, or superseded under `latest`/`none` or overlap `cancel-previous`; reported by the worker),
 * `duplicate` (its dedup key existed: another leader, or this one before a hand-over, fired it).
 */
export type ScheduleSkipReason = 'overlap' | 'catch-up' | 'pause' | 'orphaned' | 'stale' | 'duplicate';

/** A listener of {@link ChronosEvent}s. */
export type ChronosEventListener = (event: ChronosEvent) => void;

/** A tiny synchronous event bus; a throwing listener is isolated from the engine and the others. */
export class EventBus {
  private readonly listeners = new Set<ChronosEventListener>();

  /** True when someone listens (callers skip building events otherwise). */
  get active(): boolean {
    return this.listeners.size > 0;
  }

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: ChronosEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Delivers `event` to every listener synchronously, in subscription order; a listener that throws is ignored. */
  emit(event: ChronosEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        /* a listener's bug must not break the engine */
      }
    }
  }
}
