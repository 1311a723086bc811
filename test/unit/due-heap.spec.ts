// The leader's due order (due-heap.ts) against a plain sorted list: random updates, removals
// (Infinity) and pops give the same items in the same order of wake instants.
import { DueHeap, type HeapItem } from '../../lib/core/scheduler/due-heap.js';

interface Item extends HeapItem {
  id: number;
}

/** A small deterministic PRNG (mulberry32), so a failure is reproducible. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('random rebuilds, updates, removals and pops agree with a brute-force model', () => {
  const random = rng(15);
  const items: Item[] = Array.from({ length: 500 }, (_, id) => ({ id, wake: Infinity, heapIndex: -1 }));
  const model = new Map<number, number>(); // id -> wake of the items held
  const heap = new DueHeap<Item>();
  const key = () => (random() < 0.1 ? Infinity : Math.floor(random() * 10_000));
  const initial = new Map(items.map((i) => [i.id, key()]));
  heap.rebuild(items, (i) => initial.get(i.id)!);
  for (const [id, w] of initial) if (w !== Infinity) model.set(id, w);
  for (let op = 0; op < 20_000; op++) {
    const r = random();
    if (r < 0.6) {
      const item = items[Math.floor(random() * items.length)]!;
      const w = key();
      heap.update(item, w);
      if (w === Infinity) model.delete(item.id);
      else model.set(item.id, w);
    } else {
      const at = Math.floor(random() * 10_000);
      const popped = heap.popDue(at);
      const min = Math.min(...model.values());
      if (min <= at) {
        expect(popped).toBeDefined();
        expect(popped!.wake).toBe(min);
        expect(model.get(popped!.id)).toBe(min);
        expect(popped!.heapIndex).toBe(-1);
        model.delete(popped!.id);
      } else {
        expect(popped).toBeUndefined();
      }
    }
    expect(heap.size).toBe(model.size);
    expect(heap.nextWake).toBe(model.size > 0 ? Math.min(...model.values()) : Infinity);
  }
  // drained in order
  let last = -Infinity;
  for (let i = heap.popDue(Infinity); i !== undefined; i = heap.popDue(Infinity)) {
    expect(i.wake).toBeGreaterThanOrEqual(last);
    last = i.wake;
  }
  expect(items.every((i) => i.heapIndex === -1)).toBe(true);
});
