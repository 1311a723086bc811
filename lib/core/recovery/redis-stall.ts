import type { ChronosLogger } from '../runtime/logger.js';
import { engineTime } from '../runtime/time.js';

/**
 * What a worker server's visibility-timeout sweep knows of a stalled Redis (SIGSTOP, a long fork, a
 * VM pause): a Redis that stops answering keeps its clients' commands queued in their sockets, and its
 * clock goes on. When it resumes, every running task's entry looks idle for the length of the stall,
 * and the claim renewals of the live workers that hold them (sent during the stall) run in the same
 * instant as the others' sweeps: a sweep that runs first reclaims a running task, which then runs twice
 * (trial "trialflow": a `concurrency: 1` queue ran 2 at once). Which runs first is not chance alone:
 * Redis serves the sockets that waited in the order their first bytes came (measured), so a server
 * whose presence tick went out early in the stall has its whole socket read first. Two rules keep a
 * sweep behind the renewals that waited with it:
 * - **A late call takes nothing.** Each sweep call carries this process's estimate of Redis time when
 *   it was sent (runtime/time.ts: never ahead of Redis, so a call's lateness is how long it waited in
 *   the link and in Redis's queue, never the local event loop's delay in reading the reply), and
 *   recover.lua takes nothing from a call Redis runs more than {@link maxLateMs} after that.
 * - **A sweep call follows a reply.** A queue's sweep first reads its pending entries list's size
 *   (`XPENDING` summary, on the queue's Redis), and each sweep call is sent at most {@link maxLateMs}
 *   (local clock) after the send of the call whose reply it follows (recoverer.ts `recover`,
 *   fetch/consumer.ts `recover`). Redis reads every socket that waited through a stall before it writes
 *   any reply, so a call sent after a reply that Redis ran after the stall runs after every renewal
 *   that waited; and when that reply's call ran before the stall, the sweep call was sent at most
 *   maxLateMs into the stall, and is late by the rest of it.
 * Before the second rule, a sweep sent in the last maxLateMs of a stall (its server's own timers late:
 * a stall of that process too) ran in time, and first when its server's socket was read first: it
 * took a live holder's running task (queue-recover-stall-order.spec.ts; once in a loaded CI run,
 * queue-limit-redis-stall.spec.ts). The lateness of a call (the sweep's, or the presence tick's:
 * liveness.ts, in flight during any stall longer than a tick) also holds the sweep for {@link holdMs},
 * for renewals that did not wait in Redis (a holder slow to send its next claims round).
 *
 * The numbers, with R = the claims round's period (a third of the visibility timeout VT):
 * - `maxLateMs` = R / 2 (VT / 6; 5 s with the default 30 s). An entry's idle time is at most R (plus
 *   its holder's own delay d) plus the stall before its holder's renewal lands, and a sweep takes it
 *   only past VT: only a stall longer than 2 R − d can cost a running task. A sweep call that runs
 *   before the renewals that waited in Redis was sent at most maxLateMs after the stall began (the
 *   second rule), so it runs more than the stall − maxLateMs late: more than maxLateMs for any stall
 *   longer than R, so every such call takes nothing while holders renew less than R late (d < R).
 * - `holdMs` = 3 R / 2 (VT / 2): a holder's claims round comes at most R after the stall's end, here
 *   with half a round of slack. A stopped worker's tasks come back that much later after a Redis
 *   stall; a dead one's do not wait (liveness reclaims them at once, recoverer.ts `reclaimFrom`).
 */
export class RedisStall {
  /** A call run later than this after it was sent means Redis (or the link) stalled, ms. */
  readonly maxLateMs: number;
  /** How long the sweep waits after a stall was seen, ms. */
  readonly holdMs: number;
  /** Until when the sweep waits (local base, epoch ms: runtime/time.ts `localNow`); -Infinity: it does not. */
  private holdUntil = -Infinity;

  /** @param claimsEveryMs the period of the server's claims round, ms (worker/services.ts: a third of the visibility timeout). */
  constructor(
    claimsEveryMs: number,
    private readonly logger: ChronosLogger,
  ) {
    this.maxLateMs = Math.floor(claimsEveryMs / 2);
    this.holdMs = Math.floor((3 * claimsEveryMs) / 2);
  }

  /**
   * Takes the lateness of a call, ms (Redis time when it ran − the estimate of Redis time when it was
   * sent): past {@link maxLateMs}, the sweep waits {@link holdMs} from now (logged once per stall).
   */
  saw(lateMs: number, what: string): void {
    if (!(lateMs > this.maxLateMs)) return;
    const now = engineTime.localNow();
    if (now >= this.holdUntil) {
      this.logger.warn(
        `Redis ran a ${what} ${Math.round(lateMs)} ms after it was sent (a stalled Redis or link: running tasks look idle): ` +
          `the visibility-timeout sweep waits for the claim renewals of live workers (holdMs=${this.holdMs} maxLateMs=${this.maxLateMs})`,
      );
    }
    this.holdUntil = Math.max(this.holdUntil, now + this.holdMs);
  }

  /** True while the sweep waits after a stall ({@link saw}). */
  get holding(): boolean {
    return engineTime.localNow() < this.holdUntil;
  }
}
