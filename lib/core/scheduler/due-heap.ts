/**
 * The leader's due order: a binary min-heap of schedules keyed by when the firing loop must wake
 * for them (epoch ms), with each item's position kept on the item, so a tick takes only what is
 * due (O(k log n) for k due of n) and the timer is set from the top, instead of a scan of every
 * schedule per tick. An item whose key is Infinity (not live, paused, no trigger ever) is not held.
 */

/** What the heap keeps on an item. */
export interface HeapItem {
  /** Its key: when to wake for it, epoch ms; Infinity when never. Written by the heap. */
  wake: number;
  /** Its position in the heap, -1 when not in it. Written by the heap. */
  heapIndex: number;
}

/** A min-heap of {@link HeapItem}s by `wake`. */
export class DueHeap<T extends HeapItem> {
  private items: T[] = [];

  /** Items held. */
  get size(): number {
    return this.items.length;
  }

  /** The earliest `wake` held, Infinity when empty. */
  get nextWake(): number {
    return this.items.length > 0 ? this.items[0]!.wake : Infinity;
  }

  /** Replaces the content with `all` (those with a finite `wake(item)`), in O(n). */
  rebuild(all: Iterable<T>, wake: (item: T) => number): void {
    for (const item of this.items) item.heapIndex = -1;
    const items: T[] = [];
    for (const item of all) {
      item.wake = wake(item);
      item.heapIndex = -1;
      if (item.wake !== Infinity) {
        item.heapIndex = items.length;
        items.push(item);
      }
    }
    this.items = items;
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  /** Sets an item's key and places it: adds, moves or (for Infinity) removes it. O(log n). */
  update(item: T, wake: number): void {
    if (item.heapIndex < 0) {
      item.wake = wake;
      if (wake === Infinity) return;
      item.heapIndex = this.items.length;
      this.items.push(item);
      this.up(item.heapIndex);
      return;
    }
    if (wake === item.wake) return;
    if (wake === Infinity) {
      this.removeAt(item.heapIndex);
      item.wake = wake;
      return;
    }
    const up = wake < item.wake;
    item.wake = wake;
    if (up) this.up(item.heapIndex);
    else this.down(item.heapIndex);
  }

  /** Removes and returns the earliest item if its `wake` is at or before `at`, else undefined. */
  popDue(at: number): T | undefined {
    const top = this.items[0];
    if (top === undefined || top.wake > at) return undefined;
    this.removeAt(0);
    return top;
  }

  private removeAt(i: number): void {
    const items = this.items;
    const gone = items[i]!;
    const last = items.pop()!;
    gone.heapIndex = -1;
    if (i === items.length) return;
    items[i] = last;
    last.heapIndex = i;
    this.down(i);
    this.up(last.heapIndex);
  }

  private up(i: number): void {
    const items = this.items;
    const item = items[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = items[p]!;
      if (parent.wake <= item.wake) break;
      items[i] = parent;
      parent.heapIndex = i;
      i = p;
    }
    items[i] = item;
    item.heapIndex = i;
  }

  private down(i: number): void {
    const items = this.items;
    const n = items.length;
    const item = items[i]!;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && items[c + 1]!.wake < items[c]!.wake) c++;
      const child = items[c]!;
      if (child.wake >= item.wake) break;
      items[i] = child;
      child.heapIndex = i;
      i = c;
    }
    items[i] = item;
    item.heapIndex = i;
  }
}
