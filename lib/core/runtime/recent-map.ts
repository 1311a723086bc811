/**
 * A bounded "remember the last N" map, in two generations: `set` writes into the current Map; when
 * the current holds `generation` entries it becomes the previous one (the one before is dropped
 * whole, for the garbage collector) and a new current starts. `get` looks in the current, then in
 * the previous. Every call is O(1): no per-entry eviction (deleting a Map's oldest key one at a
 * time leaves holes at its front that each `keys().next()` walks past until V8 rehashes, which
 * slows a busy leader down in a sawtooth at high counts).
 *
 * It remembers at least the last `generation` distinct keys set and at most 2 × `generation`. A
 * `get` does not refresh a key: set it again to keep it (a key set again lands in the current).
 */
export class RecentMap<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();

  /** @throws RangeError when `generation` is not a positive integer */
  constructor(readonly generation: number) {
    if (!Number.isInteger(generation) || generation < 1)
      throw new RangeError(`RecentMap generation must be a positive integer (got ${generation})`);
  }

  /** The value last set for `key`, or undefined when none is remembered. */
  get(key: K): V | undefined {
    // one lookup for a hit in the current generation (the common case), two for a miss; has() only when
    // the previous generation holds a value, to tell the current's stored undefined (newer) from a miss there
    const v = this.current.get(key);
    if (v !== undefined) return v;
    const p = this.previous.get(key);
    return p === undefined || this.current.has(key) ? undefined : p;
  }

  /** Whether a value for `key` is remembered. */
  has(key: K): boolean {
    return this.current.has(key) || this.previous.has(key);
  }

  /** Remembers `value` for `key` as the most recent; may start a new generation. */
  set(key: K, value: V): this {
    this.current.set(key, value);
    if (this.current.size >= this.generation) {
      this.previous = this.current;
      this.current = new Map();
    }
    return this;
  }

  /** Entries remembered (a key in both generations counts twice: at most 2 × generation). */
  get size(): number {
    return this.current.size + this.previous.size;
  }
}
