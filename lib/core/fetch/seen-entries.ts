import type { ConsumedQueue, Consumer, Fetched } from './consumer.js';
import type { Slots } from './slots.js';
import { engineTime } from '../runtime/time.js';

/** How long an entry taken back is remembered, ms. */
const TAKEN_KEPT_MS = 60_000;

/** Whether stream entry id `a` (`<ms>-<seq>`, decimal, no leading zeros) comes after `b`. */
export function idAfter(a: string, b: string): boolean {
  const da = a.indexOf('-');
  const db = b.indexOf('-');
  if (da !== db) return da > db; // the longer time part is the greater
  // time parts and sequences both of the same length (nearly always): the string order is the numeric one.
  // One native comparison, not a loop of ~13 characters: this runs per fetched entry, mostly before the JIT has optimised it
  if (a.length === b.length) return a > b;
  for (let i = 0; i < da; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return a.charCodeAt(i) > b.charCodeAt(i);
  return a.length > b.length; // the same time, the longer sequence is the greater
}

/**
 * The greatest stream entry id a fetcher was handed, per queue. A blocking read abandoned by the
 * fetcher (its reply did not come within the read deadline, so its connection was rebuilt) may
 * have been answered all the same — a process stopped (SIGSTOP) while Redis delivered to its read
 * finds the reply in its socket only after the deadline fired — and its entries are then pending
 * for this consumer, where only the visibility timeout would bring them back (their delivery count
 * raised). They are told apart from every entry this fetcher knows: their ids come after the
 * greatest it was handed (a `>` read hands out new entries in id order), and they were delivered once.
 */
export class SeenEntries {
  private readonly greatest = new Map<string, string>();
  /**
   * Entries taken back by {@link takeUnseen} (key `<queue>\n<id>` → when, engine ms), for a minute:
   * on a cluster a queue's blocking reader and a non-blocking read of the same queue may be in flight
   * together, so an entry taken back may still come in a read's reply; {@link note} drops it then.
   */
  private readonly taken = new Map<string, number>();
  /** The entries {@link takeUnseen} returned (not dropped by {@link note} when delivered). */
  private readonly fresh = new WeakSet<Fetched>();

  /**
   * Notes the entries of one read (a sync loop: apart from the fetcher's async `deliver`).
   * @returns them, less any taken back already (the same array when none was).
   */
  note(fetched: Fetched[]): Fetched[] {
    // a read's entries come queue by queue: the map is read and written once per run of one queue's entries
    let queue: string | undefined;
    let last: string | undefined;
    let changed = false;
    for (let i = 0; i < fetched.length; i++) {
      const f = fetched[i];
      const name = f.queue.name;
      if (name !== queue) {
        if (changed) this.greatest.set(queue!, last!);
        queue = name;
        last = this.greatest.get(name);
        changed = false;
      }
      if (last === undefined || idAfter(f.entryId, last)) {
        last = f.entryId;
        changed = true;
      }
    }
    if (changed) this.greatest.set(queue!, last!);
    if (this.taken.size === 0) return fetched;
    return fetched.filter((f) => this.fresh.has(f) || !this.taken.delete(`${f.queue.name}\n${f.entryId}`));
  }

  /**
   * After a read of `queues` was abandoned: the entries of this consumer's pending entries list not
   * seen here ({@link Consumer.unseen}: claimed again, delivery count kept), less any the slot table
   * holds (running, waiting or held). The caller delivers them as a read's entries.
   */
  async takeUnseen(consumer: Consumer, slots: Slots, queues: readonly ConsumedQueue[]): Promise<Fetched[]> {
    const got: Fetched[] = [];
    for (const q of queues) got.push(...(await consumer.unseen(q, this.greatest.get(q.name))));
    const now = engineTime.now();
    for (const [k, at] of this.taken) if (now - at > TAKEN_KEPT_MS) this.taken.delete(k);
    if (got.length === 0) return got;
    const held = new Set<string>();
    for (const e of slots.entries()) held.add(`${e.queue.name}\n${e.entryId}`);
    const unseen = got.filter((f) => !held.has(`${f.queue.name}\n${f.entryId}`));
    for (const f of unseen) {
      this.taken.set(`${f.queue.name}\n${f.entryId}`, now);
      this.fresh.add(f);
    }
    return unseen;
  }
}
