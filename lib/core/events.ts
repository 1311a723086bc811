/** What an operator did through the Inspector (the CLI, the console or `InspectorService`). @publicApi */
export type OperatorAction =
  | 'dead.retry'
  | 'task.run'
  | 'task.delete'
  | 'task.cancel'
  | 'queue.pause'
  | 'queue.resume'
  | 'schedule.pause'
  | 'schedule.resume'
  | 'schedule.trigger'
  | 'schedule.remove'
  | 'schedule.backfill';

/**
 * Lifecycle events of tasks, schedules and leadership. Instants are epoch ms, durations ms.
 * @publicApi
 */
export type ChronosEvent =
  | { type: 'task.enqueued'; queue: string; taskId: string; taskType: string; state: 'pending' | 'scheduled'; deduplicated: boolean }
  | {
      type: 'task.started';
      queue: string;
      taskId: string;
      taskType: string;
      retried: number;
      /** When the task was first enqueued (the producer's clock). */
      enqueuedAt: number;
      /** When this attempt became ready: its stream entry's time (enqueued, or moved in when due, retried or put back; Redis clock). */
      readyAt: number;
      /** For trigger tasks: the schedule and the trigger instant. */
      schedule?: string;
      triggerAt?: number;
      /** Times the task was reclaimed from a crashed consumer (absent when never). */
      reclaimed?: number;
    }
  | { type: 'task.succeeded'; queue: string; taskId: string; taskType: string; retried: number; durationMs: number }
  | { type: 'task.failed'; queue: string; taskId: string; taskType: string; retried: number; error: string; durationMs: number }
  | { type: 'task.retried'; queue: string; taskId: string; taskType: string; retried: number; retryAt: number }
  | { type: 'task.dead'; queue: string; taskId: string; taskType: string; retried: number; reason: string; error: string }
  | { type: 'task.requeued'; queue: string; taskId: string; taskType: string; reason: 'shutdown' | 'recovered' }
  | { type: 'schedule.fired'; schedule: string; queue: string; taskId: string; triggerAt: number }
  | { type: 'schedule.skipped'; schedule: string; triggerAt: number; reason: 'overlap' | 'catch-up'; count: number }
  | { type: 'leader.acquired'; instanceId: string; term: number }
  | { type: 'leader.lost'; instanceId: string; term: number; reason: string }
  | {
      type: 'operator.acted';
      action: OperatorAction;
      /** Who did it, as the caller named itself (e.g. `cli:ada@host`). */
      actor: string;
      queue?: string;
      schedule?: string;
      /** The task of a one-task act. */
      taskId?: string;
      /** Tasks (or triggers) the act touched; 0 when it found nothing to do (acts are safe to repeat). */
      count: number;
    };

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
