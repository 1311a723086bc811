// The wire protocol's fire modes and the codes the Lua scripts reply with (re-exported by protocol.ts).

/** What fire.lua does with one trigger (its 8th value per trigger). */
export const FIRE_MODE = {
  /** Enqueue (overlap policy `allow`). */
  allowOverlap: 'a',
  /** Enqueue unless the schedule's previous task is still live (overlap policy `skip`). */
  skipOverlap: 's',
  /**
   * Overlap policy `buffer-one`: enqueue when the schedule has no live task; else keep the trigger
   * in the schedule's buffer key (it starts when that task ends: overlap.lua), unless one waits there already.
   */
  bufferOne: 'b',
  /** Overlap policy `cancel-previous`: enqueue, taking the overlap marker from the schedule's live task (superseded). */
  cancelPrevious: 'c',
  /** Only advance lastFired: a trigger skipped by the catch-up policy. */
  advanceOnly: 'x',
} as const;

export type FireMode = (typeof FIRE_MODE)[keyof typeof FIRE_MODE];

/**
 * How far ahead of its instant a trigger of a schedule with overlap `allow` is enqueued, ms
 * (definition.ts fireLeadMs; never more than half its period). Within `holdMs` of its instant the
 * task goes to the stream and the worker that fetches it holds it until the instant; further
 * ahead (up to `maxMs`, so a leader with many triggers due at one instant has them all enqueued
 * by then) it waits in the queue's scheduled set, due at the instant, where a change of the
 * schedule retracts it (fence-schedules.lua).
 */
export const FIRE_LEAD = { holdMs: 1000, maxMs: 5000 } as const;

/** fire.lua's code per trigger. */
export const FIRE_RESULT = {
  /** Fired before (its dedup key exists): nothing enqueued. */
  duplicate: 0,
  /** Enqueued now. */
  enqueued: 1,
  /** Not enqueued: the schedule's previous task is still live (overlap `skip`); lastFired advanced. */
  skipped: 2,
  /** Refused: more than `leadMs` before its instant by Redis time; nothing changed. */
  early: 3,
  /** At or before the schedule's lastFired: nothing changed. */
  stale: 4,
  /** Mode `advanceOnly`: lastFired advanced, nothing enqueued. */
  advanced: 5,
  /**
   * Refused: planned under an older generation of the schedule than the queue's slot holds (it was
   * paused, removed or changed since the leader loaded it); nothing changed. The leader reloads.
   */
  fenced: 6,
  /**
   * Refused: dated after the schedule's liveUntil (orphaned since then: no live instance declared
   * it; live-names.ts liveUntil); nothing changed. The leader reads liveness again.
   */
  orphaned: 7,
  /**
   * Mode `bufferOne`: the schedule's previous task is still live; the trigger waits in its buffer key
   * and its task starts when that one ends (lastFired advanced, dedup key set).
   */
  buffered: 8,
  /**
   * Mode `cancelPrevious`: enqueued, and the schedule's previous task was still live: it is
   * superseded (it no longer holds the overlap marker; the leader announces it on the cancel channel).
   */
  superseding: 9,
  /**
   * Not enqueued: the schedule has enqueued its `maxRuns` triggers (its runs counter, keys.ts
   * `runs`); lastFired advanced, no dedup key written.
   */
  exhausted: 10,
  /**
   * Refused: the call ran at or after `leaseUntil`, the instant the caller's shard lease expires in
   * Redis (the instant another instance may take the shard); nothing changed. Every trigger of the
   * call gets it: the caller was paused (or its call delayed) past its lease between its local lease
   * check and the call; the shard's new leader fires them.
   */
  unleased: 11,
} as const;

/** enqueue.lua's code. */
export const ENQUEUE_RESULT = {
  /** A live task has the dedup key or the explicit id: nothing written, the reply carries that task's id. */
  deduplicated: 0,
  /** In the stream, ready. */
  enqueued: 1,
  /** In the scheduled set, waiting for its time. */
  scheduled: 2,
  /** A dedup key of mode debounce or replace named a task still waiting for its time: that task was replaced (its id is in the reply). */
  replaced: 3,
} as const;

/** declare-schedules.lua's first element. */
export const DECLARE_RESULT = {
  /** Neither the shared names set nor the instance's building set exists: fill it again and retry. */
  namesMissing: 0,
  declared: 1,
} as const;

/** heartbeat.lua's first element. */
export const HEARTBEAT_RESULT = {
  /** The instance's declaration or its names set is gone (Redis lost data): declare the schedules again. */
  declaredLost: 0,
  ok: 1,
} as const;

/** schedule-admin.lua's first element (then Redis time, the schedule's new generation, its previous queue). */
export const ADMIN_RESULT = {
  /** No schedule of that name (delete, pause, resume): nothing done. */
  notFound: 0,
  done: 1,
  /** A put over a schedule declared in code (not a runtime one) without `force`: nothing done. */
  declared: 2,
  /** A pause of a paused schedule or a resume of one not paused: nothing done (no version, no notice). */
  unchanged: 3,
} as const;
