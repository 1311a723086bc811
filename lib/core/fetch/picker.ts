import type { ConsumedQueue } from './consumer.js';

/** One non-blocking read of a fetch: these queues, `COUNT count` (XREADGROUP's COUNT is per stream). */
export interface PlannedRead<Q extends ConsumedQueue = ConsumedQueue> {
  readonly queues: Q[];
  readonly count: number;
  /** Queues read only to learn whether they have entries again (not in the share of this fetch). */
  readonly probe: boolean;
}

/**
 * Which queues one fetch of a multi-queue worker reads, and how many entries from each: the fetcher's
 * view of which queues have entries, and their shares.
 *
 * Each queue is either *active* (its last read returned all it asked for: it may have more) or
 * *empty* (its last read returned less). A fetch of `free` entries is split across the active queues:
 * - weighted: by smooth weighted round-robin (nginx's SWRR) over the active queues, one pick per turn of
 *   {@link turnSize} entries, its credits kept across fetches, so over many fetches each backlogged queue
 *   gets its weight's share (within a turn), and with equal weights every backlogged queue is served
 *   once per `queues × turn` entries; the empty
 *   queues are probed in the same fetch with `COUNT 1`, so a queue that gets entries again is found
 *   while the others are busy.
 * - strict priority: everything from the first active queue in priority order; the empty queues of
 *   higher priority are probed first (a read of their own: a lower queue is read only when they are
 *   still empty).
 *
 * When every queue is empty the fetcher blocks on all of them ({@link blockCount} per stream).
 * Keeps no Redis state; `observe` is told what each read returned.
 */
export class QueuePicker<Q extends ConsumedQueue> {
  /** SWRR credit of each queue, by its index in `queues`. */
  private readonly credit: Float64Array;
  private readonly index = new Map<Q, number>();
  private readonly empty = new Set<Q>();

  /**
   * @param queues Every queue of the server (in priority order when `strict`).
   * @param mergeProbes Weighted: probe the empty queues in the share read of `COUNT 1` when there is
   * one (one read fewer); false on a cluster, where the probes are a read of their own.
   */
  constructor(
    queues: readonly Q[],
    private readonly strict: boolean,
    private readonly mergeProbes = true,
  ) {
    this.credit = new Float64Array(queues.length);
    queues.forEach((q, i) => this.index.set(q, i));
  }

  /**
   * The reads of one fetch of `free` entries from the `open` queues (not paused; in the server's
   * order), in the order to send them: with strict priority, the probe read first, and the share read
   * only if it found nothing. Empty when every open queue is empty (then block on all).
   */
  plan(open: readonly Q[], free: number): PlannedRead<Q>[] {
    const active = open.filter((q) => !this.empty.has(q));
    if (active.length === 0) return [];
    if (this.strict) {
      const top = active[0];
      const higher = open.slice(0, open.indexOf(top)); // all empty
      const share: PlannedRead<Q> = { queues: [top], count: free, probe: false };
      return higher.length > 0 ? [{ queues: higher, count: free, probe: true }, share] : [share];
    }
    const reads = this.shares(active, free);
    const probes = open.filter((q) => this.empty.has(q));
    if (probes.length > 0) {
      const ones = this.mergeProbes ? reads.find((r) => r.count === 1) : undefined;
      if (ones) ones.queues.push(...probes);
      else reads.push({ queues: probes, count: 1, probe: true });
    }
    return reads;
  }

  /** A read asked `asked` entries of `queue` and got `got`: it stays active when it got them all, else it is empty. */
  observe(queue: Q, asked: number, got: number): void {
    if (got >= asked) {
      if (this.empty.delete(queue)) this.credit[this.index.get(queue)!] = 0; // back from empty: no saved-up turns
    } else this.empty.add(queue);
  }

  /** `free` entries split over the active queues by SWRR, grouped into one read per distinct count. */
  private shares(active: readonly Q[], free: number): PlannedRead<Q>[] {
    if (active.length === 1) return [{ queues: [active[0]], count: free, probe: false }];
    const idx = active.map((q) => this.index.get(q)!);
    const counts = new Array<number>(active.length).fill(0);
    let total = 0;
    for (const q of active) total += q.weight;
    const credit = this.credit;
    const turn = turnSize(free);
    for (let n = 0; n < free; n += turn) {
      let best = 0;
      let bestCredit = -Infinity;
      for (let i = 0; i < idx.length; i++) {
        const c = (credit[idx[i]] += active[i].weight * turn);
        if (c > bestCredit) {
          bestCredit = c;
          best = i;
        }
      }
      credit[idx[best]] -= total * turn;
      counts[best] += Math.min(turn, free - n);
    }
    const byCount = new Map<number, Q[]>();
    counts.forEach((c, i) => {
      if (c === 0) return;
      const group = byCount.get(c);
      if (group) group.push(active[i]);
      else byCount.set(c, [active[i]]);
    });
    return [...byCount].map(([count, queues]) => ({ queues, count, probe: false }));
  }
}

/**
 * Entries one SWRR pick gives its queue in a fetch of `free`: a tenth of the fetch, 1 to
 * {@link MAX_TURN}. Turns of a few entries keep the acks cheap (one ack script per queue and
 * event-loop turn: a fetch spread one entry per queue costs one per task) while the shares stay
 * within a few entries of the weights' and every backlogged queue is served within `queues × turn`.
 */
export function turnSize(free: number): number {
  return Math.min(MAX_TURN, Math.max(1, Math.floor(free / 10)));
}

/** Most entries one SWRR pick gives its queue. */
export const MAX_TURN = 5;

/**
 * COUNT of the blocking read on every open queue once all are empty: `free` with one queue, else
 * `free / queues` (at least 1), so tasks arriving on many queues at once fill about one batch rather
 * than a batch per queue (XREADGROUP's COUNT is per stream).
 */
export function blockCount(queues: number, free: number): number {
  return Math.max(1, Math.floor(free / Math.max(1, queues)));
}
