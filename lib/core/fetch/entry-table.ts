/**
 * Values keyed by (queue name, stream entry id) — an entry id (`<ms>-<seq>`) is unique only
 * within its stream, so two queues' tasks may share one. One inner map per queue (a server
 * consumes a fixed set of queues): a lookup is two `Map.get`s, no key string built per task.
 */
export class EntryTable<V> {
  private readonly queues = new Map<string, Map<string, V>>();
  private count = 0;
  /** The last queue looked up and its map: most servers consume one queue, or a few in turn. */
  private lastQueue = '';
  private lastMap?: Map<string, V>;

  /** Values held, over every queue. */
  get size(): number {
    return this.count;
  }

  /** The value of `entryId` in `queue`, if any. */
  get(queue: string, entryId: string): V | undefined {
    return this.of(queue)?.get(entryId);
  }

  /** Sets the value of `entryId` in `queue` (replacing one of the same queue and entry). */
  set(queue: string, entryId: string, value: V): void {
    let m = this.of(queue);
    if (!m) {
      m = new Map();
      this.queues.set(queue, m);
      this.lastQueue = queue;
      this.lastMap = m;
    }
    const before = m.size;
    m.set(entryId, value);
    this.count += m.size - before;
  }

  /** Removes the value of `entryId` in `queue`. @returns whether there was one. */
  delete(queue: string, entryId: string): boolean {
    if (!this.of(queue)?.delete(entryId)) return false;
    this.count--;
    return true;
  }

  /** Every value, queue by queue. */
  *values(): IterableIterator<V> {
    for (const m of this.queues.values()) yield* m.values();
  }

  private of(queue: string): Map<string, V> | undefined {
    if (queue === this.lastQueue) return this.lastMap;
    const m = this.queues.get(queue);
    if (m) {
      this.lastQueue = queue;
      this.lastMap = m;
    }
    return m;
  }

  /** Removes every value. */
  clear(): void {
    for (const m of this.queues.values()) m.clear();
    this.count = 0;
  }
}
