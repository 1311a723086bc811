/**
 * Lifecycle events of tasks, schedules and leadership. Instants are epoch ms, durations ms.
 * @publicApi
 */
export type ChronosEvent =
  | { type: 'task.enqueued'; queue: string; taskId: string; taskType: string; state: 'pending' | 'scheduled'; deduplicated: boolean }
  | { type: 'task.started'; queue: string; taskId: string; taskType: string; retried: number }
  | { type: 'task.succeeded'; queue: string; taskId: string; taskType: string; retried: number; durationMs: number }
  | { type: 'task.failed'; queue: string; taskId: string; taskType: string; retried: number; error: string }
  | { type: 'task.retried'; queue: string; taskId: string; taskType: string; retried: number; retryAt: number }
  | { type: 'task.dead'; queue: string; taskId: string; taskType: string; retried: number; reason: string; error: string }
  | { type: 'task.requeued'; queue: string; taskId: string; taskType: string; reason: 'shutdown' | 'recovered' }
  /**
   * A pending entry whose stream entry was gone (XDEL, a trim, eviction) when a recoverer reached it:
   * nobody runs the task again. Only the entry id is known then (its task id and type were in it).
   */
  | { type: 'task.lost'; queue: string; entryId: string; reason: 'entry-deleted' }
  | { type: 'schedule.fired'; schedule: string; queue: string; taskId: string; triggerAt: number }
  | { type: 'schedule.skipped'; schedule: string; triggerAt: number; reason: 'overlap' | 'catch-up'; count: number }
  | { type: 'leader.acquired'; instanceId: string; term: number }
  | { type: 'leader.lost'; instanceId: string; term: number; reason: string };

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
