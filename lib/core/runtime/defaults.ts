/**
 * Every default value of Chronos, written once. Durations are in milliseconds.
 * @publicApi
 */
export const DEFAULTS = Object.freeze({
  /** Key prefix of every Chronos key. */
  namespace: 'chronos',
  /** Queue of a task enqueued without `queue`. */
  queue: 'default',
  /** Retries before a failing task is dead (asynq's default; 1 + 25 attempts in all). */
  maxRetry: 25,
  /** Timeout of one handler attempt, ms (asynq's default of 30 min). 0 disables it. */
  timeoutMs: 30 * 60_000,
  /** Lifetime of a dedup key when `dedupKey` is given without `dedupTtl`, ms. */
  dedupTtlMs: 60 * 60_000,
  /** Largest encoded payload an enqueue accepts, UTF-8 bytes of JSON (1 MiB); 0 = no limit. */
  maxPayloadBytes: 1_048_576,
  /** Handlers running at once per server. */
  concurrency: 10,
  /** Grace given to in-flight handlers at shutdown before they are aborted and requeued, ms. */
  shutdownTimeoutMs: 8_000,
  /** A pending entry idle this long (no finish, no claim extension) is reclaimed, ms. */
  visibilityTimeoutMs: 30_000,
  /** How often each server looks for entries idle past the visibility timeout, ms. */
  recoverIntervalMs: 2_000,
  /** Reclaims (crashes) before a task is dead as poison. */
  maxDeliveries: 5,
  /**
   * Longest wait between checks for due scheduled/retry tasks, ms: a fallback poll. A server sleeps
   * until its next due time by timer, and an enqueue or retry that makes a queue due sooner wakes it
   * (a publish on the due-time index's wake channel); the poll covers a wake lost while its subscriber
   * reconnected and enqueuers of a version that does not publish.
   */
  forwardIntervalMs: 30_000,
  /**
   * Longest single blocking XREADGROUP, ms. A read is ended at once (CLIENT UNBLOCK) when one of its
   * queues is paused (a notice on the paused-wake channel; the fallback read: `pausedPollMs`), a slot
   * frees up, or the server stops.
   */
  blockTimeoutMs: 5_000,
  /**
   * How often a worker server reads the paused and limited sets again whatever it heard, ms: a
   * fallback (a pause or resume publishes on the paused-wake channel, a limit change on `<ns>:limits`,
   * and each is taken at once; a subscriber that reconnects reads the sets again, as a notice may have
   * been published while it was away). 10 s before issue 22 target 3.
   */
  pausedPollMs: 30_000,
  /** Dead-letter cap by count (asynq's maxArchiveSize). */
  deadMaxCount: 10_000,
  /** Dead-letter cap by age, ms (asynq's archivedExpirationInDays: 90 days). */
  deadMaxAgeMs: 90 * 24 * 60 * 60_000,
  /** Lifetime of a daily processed/failed counter, ms (90 days). */
  counterTtlMs: 90 * 24 * 60 * 60_000,
  /**
   * Interval of worker server heartbeats (its info for the Inspector), ms. A server 3 beats late is no
   * longer listed, unless it still holds entries in its queues' pending entries lists (then it is
   * listed as overdue: fleet.ts `servers`).
   */
  serverHeartbeatMs: 5_000,
  /**
   * How long a worker server's info key (`server:<id>`) and its row in `servers` outlive its last
   * heartbeat, ms (24 h): a stopped, hung or vanished server stays listed while it holds entries
   * (until the visibility timeout or its death hands them on). A server found dead, or stopped, is
   * removed at once.
   */
  serverInfoKeepMs: 24 * 60 * 60_000,
  /**
   * How often a worker server's heartbeat prunes the rows of `servers` whose info expired, ms (at its
   * first beat, then at most once a minute): those rows are a day old, so a pruning a minute later
   * changes nothing a reader sees (the Inspector skips a row whose info is gone), and an idle server
   * sends one command less per beat.
   */
  serverPruneMs: 60_000,
  /**
   * Longest interval of a worker server's presence tick (presence.lua), ms: it renews its own score in
   * `<ns>:live` and checks the other servers' liveness channels. A tick that finds a channel without a
   * subscriber is confirmed by another tick `livenessGraceMs` later (so a death is found within about
   * this interval plus the grace). With a short visibility timeout the tick is shorter (a quarter of
   * the timeout, at least 1 s), so a server is overdue before its entries cross the timeout.
   */
  livenessCheckMs: 2_500,
  /** A server whose presence tick is this late is overdue (stopped, hung, busy or dead): its queues get the visibility-timeout sweep, ms. */
  livenessStaleMs: 5_000,
  /**
   * A server whose liveness channel had no subscriber in presence ticks at least this far apart (Redis
   * time, no reconnect of the observer between them) is dead, ms: the confirming tick comes this long after the first.
   */
  livenessGraceMs: 750,
  /** After the observer's own connection (re)connects (a Redis restart, a failover), nobody is judged dead for this long, ms. */
  livenessReconnectGraceMs: 5_000,
  /** An overdue server is still looked at (its queues swept) for this long past its expiry; then forgotten, ms. */
  livenessKeepMs: 5 * 60_000,
  /**
   * Early trigger tasks a worker server holds at most (running and waiting for their instant) while
   * it is the only worker server of its namespace (its presence tick found no other): a burst of one
   * instant is read ahead whole, not a concurrency's worth per round trip after the instant. With
   * other servers a held task reserves a slot (at most `concurrency` held), so the burst is shared.
   */
  heldAloneMax: 2_000,
  /** Leader lease TTL, ms (renewed every TTL/2). */
  leaderTtlMs: 5_000,
  /** Default IANA time zone of cron schedules. */
  timeZone: 'UTC',
  /** Catch-up policy of missed triggers. */
  catchUp: 'all' as const,
  /** Missed triggers older than this are not caught up, ms (1 h). */
  catchUpWindowMs: 60 * 60_000,
  /** Most missed triggers one schedule catches up at once (the newest are kept). */
  catchUpCap: 100,
  /** Overlap policy of schedules. */
  overlap: 'allow' as const,
  /** Scheduler instance heartbeat (liveness), ms. An instance is gone after 3 missed beats. */
  instanceHeartbeatMs: 5_000,
  /** Shortest dedup-key lifetime of a fired trigger, ms (1 h; also at least 2 periods). */
  fireDedupMinTtlMs: 60 * 60_000,
});
