/**
 * The testing kit's overlap policy of schedules, as the engine's overlap.lua keeps it, split from
 * chronos-testing.service.ts: which trigger's task holds a schedule's overlap marker, the trigger
 * buffered behind it (`buffer-one`), and the tasks a `cancel-previous` trigger supersedes.
 */
import { TaskSupersededError } from '../../core/runtime/errors.js';
import type { StoredSchedule } from '../../core/scheduler/definition.js';
import type { EnqueuedTask, NewTask, TestingStore } from './testing-store.js';

/** What {@link KitOverlap.admit} decides for a trigger's task. */
export type Admission = 'enqueue' | 'skip' | 'buffered';

/** The overlap markers and buffered triggers of the kit's schedules. */
export class KitOverlap {
  /** Per schedule with overlap `buffer-one`: the trigger waiting behind its task (not in the queues yet). */
  private readonly buffered = new Map<string, NewTask>();
  /**
   * Per schedule with overlap `skip`, `buffer-one` or `cancel-previous`: the id of the trigger's task
   * that holds its overlap marker (overlap.lua), from its enqueue until it succeeds, is dead or is
   * superseded. An operator's `triggerNow` task or a task run by `perform(type, …)` holds none.
   */
  private readonly markers = new Map<string, string>();

  constructor(
    private readonly store: TestingStore,
    /** The abort controller of each attempt running now (the kit's). */
    private readonly attempts: ReadonlyMap<EnqueuedTask, AbortController>,
  ) {}

  /**
   * A trigger of `st` whose dedup key was taken, its task `task` (id `id`): while the schedule's
   * marker is held, `skip` skips it, `buffer-one` buffers the first (`buffered`: it counts as a run)
   * and skips further ones, `cancel-previous` supersedes the holder's tasks. A trigger to `enqueue`
   * takes the marker now, before its task can run (inline mode runs it within the enqueue).
   */
  admit(st: StoredSchedule, id: string, task: NewTask): Admission {
    if (st.overlap === 'allow') return 'enqueue';
    if (this.markers.has(st.name)) {
      if (st.overlap === 'skip') return 'skip';
      if (st.overlap === 'buffer-one') {
        if (this.buffered.has(st.name)) return 'skip';
        this.buffered.set(st.name, task);
        return 'buffered';
      }
      this.supersede(st.name, id); // cancel-previous
    }
    this.markers.set(st.name, id);
    return 'enqueue';
  }

  /**
   * `task` left the queues (succeeded, dead or superseded; not a retry). When it held its schedule's
   * marker, the marker is freed; under `buffer-one` the trigger buffered behind it takes the marker
   * and is returned, to be enqueued now (with its own id and instant).
   */
  released(task: EnqueuedTask): NewTask | undefined {
    const schedule = task.schedule;
    if (schedule === undefined || this.markers.get(schedule) !== task.id) return undefined;
    this.markers.delete(schedule);
    const waiting = this.buffered.get(schedule);
    if (!waiting) return undefined;
    this.buffered.delete(schedule);
    this.markers.set(schedule, waiting.id);
    return waiting;
  }

  /** Forgets every marker and buffered trigger (`ChronosTesting.clear()`). */
  clear(): void {
    this.buffered.clear();
    this.markers.clear();
  }

  /**
   * Overlap `cancel-previous`: the trigger `by` supersedes the tasks of `schedule` — the queued ones
   * are taken out (the engine skips them at start), the running ones have their signal aborted with
   * a {@link TaskSupersededError} (their attempt's outcome is `superseded` unless it succeeds).
   */
  private supersede(schedule: string, by: string): void {
    // a trigger's tasks only: an operator's trigger-now (`<schedule>:manual:<uuid>`) holds no overlap marker in the engine
    const mine = (t: EnqueuedTask) => t.schedule === schedule && !t.id.startsWith(`${schedule}:manual:`);
    for (const t of this.store.tasks().filter(mine)) this.store.take(t);
    for (const t of this.store.running) if (mine(t)) this.attempts.get(t)?.abort(new TaskSupersededError(schedule, t.id, by));
  }
}
