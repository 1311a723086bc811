import type { ChronosLogger } from '../runtime/logger.js';
import { engineTime } from '../runtime/time.js';

/**
 * What a worker server's visibility-timeout sweep knows of a stalled Redis (SIGSTOP, a long fork, a
 * VM pause): a Redis that stops answering keeps its clients' commands queued in their sockets, and its
 * clock goes on. When it resumes, every running task's entry looks idle for the length of the stall,
 * and the claim renewals of the live workers that hold them (sent during the stall) run in the same
 * instant as the others' sweeps: a sweep that runs first reclaims a running task, which then runs twice
 * (trial "trialflow": a `concurrency: 1` queue ran 2 at once). A stall is seen by lateness: a call
 * that Redis ran more than {@link maxLateMs} after it was sent, by Redis time against this process's
 * estimate of it when it sent the call (runtime/time.ts: never ahead of Redis, so a call's lateness is
 * how long it waited in the link and in Redis's queue, never the local event loop's delay in reading
 * the reply). Two calls measure it: the presence tick (liveness.ts, in flight during any stall longer
 * than a tick) and the sweep itself (recover.lua takes nothing when late). After one, the sweep waits
 * {@link holdMs}: the holders' next claims round (every third of the visibility timeout) comes within it.
 *
 * The numbers, with R = the claims round's period (a third of the visibility timeout VT):
 * - `maxLateMs` = R / 2 (VT / 6; 5 s with the default 30 s). An entry's idle time is at most R plus
 *   the stall before its holder's renewal lands, and a sweep takes it only past VT: a stall shorter than
 *   2 R cannot cost a running task. A stall that long delays the presence tick in flight by more than
 *   R / 2 (a tick comes every 2.5 s, or a quarter of a short VT) and the sweep in flight by more than
 *   that (a sweep comes every `recoverInterval`, 2 s), so it is seen whenever it matters.
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
