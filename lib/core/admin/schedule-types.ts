// The Inspector's views of schedules (types.ts re-exports them with the others): a schedule, its
// pause note, its fires and what it did lately.
import type { FireOutcome, FireRecord } from '../scheduler/history.js';
import type { TaskState } from './types.js';
import type { ScheduleBoundsInfo } from './schedule-runs.js';

/** An operator's pause note. @publicApi */
export interface PauseNote {
  /** The operator's words on why it is paused (empty when none was given). */
  note: string;
  /** Who paused it (the act's actor, e.g. `cli:ada@host`). */
  actor: string;
  /** When it was paused (epoch ms, Redis time). */
  at: number;
}

/** One schedule as the Inspector shows it. @publicApi */
export interface ScheduleInfo extends ScheduleBoundsInfo {
  /** The schedule's name (part of every trigger's dedup key). */
  name: string;
  /** When it fires, as stored: a cron expression, a descriptor (`@daily`) or `@every <n>s`. */
  expression: string;
  /** IANA time zone the expression is read in (`UTC` for `@every`). */
  timeZone: string;
  /** Queue the triggers' tasks go to. */
  queue: string;
  /** Task type each trigger enqueues. */
  type: string;
  /** Catch-up policy for triggers missed while nobody led: `all`, `latest` or `none`. */
  catchUp: string;
  /**
   * What a trigger does while the schedule's previous task is live (pending, running, waiting for a
   * retry): `allow`, `skip`, `buffer-one` or `cancel-previous` (see `OverlapPolicy`).
   */
  overlap: string;
  /**
   * Under `buffer-one`: the trigger waiting behind the live task, started when that one ends. Read
   * by {@link Inspector.schedule} only (one GET), not by the list.
   */
  buffered?: {
    /** Its task id, its dedup key `<schedule>:<trigger-unix>`. */
    taskId: string;
    /** Its trigger instant, epoch ms. */
    triggerAt: number;
    /** Id of the live task it waits behind. */
    behind: string;
  };
  /** Added through the runtime API (lives in Redis only) rather than declared in code. */
  runtime: boolean;
  /** `'runtime'` or `'code'` (the same as {@link runtime}, spelled out). */
  origin: 'runtime' | 'code';
  /** True while the schedule is paused fleet-wide (its triggers are skipped). */
  paused: boolean;
  /** Its labels (`ScheduleDefinition.labels`), sorted by key; absent for none. */
  labels?: Record<string, string>;
  /** The operator's note, while it is paused through the Inspector. */
  pause?: PauseNote;
  /** No live instance declares it (and it is not a runtime schedule): it does not fire. */
  orphaned: boolean;
  /**
   * While orphaned: the instant it became so (epoch ms, Redis time): its last declaring instance's
   * last heartbeat plus the liveness window, as the leader stored it (no trigger after it is
   * enqueued; those until it is declared again are skipped, not caught up). Absent when not known yet.
   */
  orphanedSince?: number;
  /** When the schedule was first registered (epoch ms, Redis time): triggers before it never fire. */
  registeredAt?: number;
  /** For an `@every` spec with an offset: the offset within the period, ms (absent when 0). */
  offsetMs?: number;
  /**
   * The last trigger instant fired (or advanced past), epoch ms; absent before the first. A trigger is
   * enqueued a moment ahead of its instant, so this can be just after now (the CLI and console show it
   * as "due in 2s, enqueued").
   */
  lastFiredAt?: number;
  /** Next trigger instants not fired yet (epoch ms: after now and after lastFiredAt, so not one enqueued ahead of its instant); empty once the schedule has ended (`ended`: endAt passed or maxRuns reached). */
  next: number[];
  /** The trigger due next: the first after the last fire (or the registration), in the past while the schedule is late; absent once it has ended. */
  nextDueAt?: number;
  /** Instances that declare it, with when each was last seen (epoch ms, Redis time) and whether that is within the liveness window. */
  declaredBy: {
    /** The scheduler instance id. */
    instance: string;
    /** When the instance last declared its schedules (epoch ms, Redis time). */
    lastSeenAt: number;
    /** True when `lastSeenAt` is within the liveness window. */
    alive: boolean;
  }[];
  /** Set when the stored definition cannot be parsed by this version. */
  error?: string;
}

/**
 * What became of a fired trigger's task, as far as a bounded look finds it; `retracted`: it was
 * taken back before its instant (a later `retracted` record of the same task), never run. @publicApi
 */
export type FireTaskState = TaskState | 'buffered' | 'done' | 'unknown' | 'retracted';

/** One entry of a schedule's history, with the current state of its task. @publicApi */
export interface FireInfo extends FireRecord {
  /** What became of the trigger (enqueued, duplicate, skipped-…, manual, backfill). */
  outcome: FireOutcome;
  /**
   * Where its task is now: a live state, `buffered` (waiting behind the schedule's live task:
   * overlap `buffer-one`), `done` (no longer in the queue: succeeded, superseded, or deleted by an
   * operator), or `unknown` (the bounded look did not reach it). Absent for skips.
   */
  task?: FireTaskState;
}

/** How a fire went, for a schedule's sparkline: `on-time`, `late` (enqueued over 1 s after its instant, or backfilled), `skipped`, `failed` (its task is in the retry or dead set). @publicApi */
export type FireMark = 'on-time' | 'late' | 'skipped' | 'failed';

/** Triggers a schedule's spec had in a window, and how many of them were enqueued. @publicApi */
export interface WindowFires {
  /**
   * Triggers of the spec in the window (since the schedule's registration); for a schedule ended by
   * maxRuns, only those up to its last run (capped at maxRuns, and not exact, when that run is older
   * than the history read).
   */
  expected: number;
  /** Of those, fired (enqueued, or found fired before): expected − skipped − not fired. */
  fired: number;
  /** False when the fire history read does not reach back to the window's start (skips before it are not known). */
  exact: boolean;
}

/** Why a schedule that should have fired did not. @publicApi */
export interface ScheduleSilence {
  /**
   * `no-leader` (triggers overdue and no leader), `not-firing` (overdue with a leader), `orphaned`,
   * `paused` (for an hour or more), `failing` (the last 3 fires' tasks failed), `unreadable`.
   */
  reason: 'no-leader' | 'not-firing' | 'orphaned' | 'paused' | 'failing' | 'unreadable';
  /** Since when, epoch ms, when known (the first overdue trigger, the pause, the orphaning). */
  since?: number;
  /** In words, for the overview. */
  message: string;
}

/** What a schedule did lately (the schedules page's sparkline and the overview's silent flags). @publicApi */
export interface ScheduleActivity {
  /** The schedule's name. */
  name: string;
  /** Its last fires (at most 30), oldest first, with a mark each. */
  fires: {
    /** The trigger instant, epoch ms. */
    triggerAt: number;
    /** The history outcome. */
    outcome: FireOutcome;
    /** Triggers the record stands for (runs of skips). */
    count: number;
    /** How it went. */
    mark: FireMark;
  }[];
  /** The last hour: triggers expected vs fired. */
  hour: WindowFires;
  /** The last 24 hours: triggers expected vs fired. */
  day: WindowFires;
  /** Triggers due more than 30 s ago and not fired (0 while paused or orphaned: those are skipped). */
  overdue: number;
  /** Set when the schedule should have fired and did not. */
  silent?: ScheduleSilence;
}
