/**
 * Test signals (as River's): a part announces a moment of its work — a fetch delivered or held back by a limit, a forward
 * round moved tasks, entries were reclaimed, a firing tick began or ended, triggers were fired —
 * and a test awaits it instead of polling. A typed hub; it costs one property read per moment when
 * nobody listens (parts check {@link Signals.active} before building a detail).
 */

/** The moments parts announce, and what each carries. */
export interface SignalMap {
  /** The fetch loop delivered a read's entries into the slot table (`count` > 0). */
  fetched: { count: number };
  /** A fetch found nothing to hand out because `limit` of `queue` held its tasks back; the worker waits now (a notice, a new task, the rate's instant or its blockTimeout ends the wait). */
  held: { queue: string; limit: 'concurrency' | 'rate' | 'group' };
  /** A forward round (or sweep) moved due delayed/retry tasks into their streams (`moved` > 0). */
  forwarded: { moved: number };
  /** The entries of a server whose process is gone were reclaimed (`count` of them, maybe 0). */
  reclaimed: { from: string; count: number };
  /** A firing tick is about to run (synchronous: a listener runs before the tick starts). */
  'tick.start': Record<string, never>;
  /** A firing tick ended: it fired what was due (a failed tick announces nothing). */
  'tick.done': Record<string, never>;
}

/** The name of a signal. */
export type SignalName = keyof SignalMap;

type Listener<K extends SignalName> = (detail: SignalMap[K]) => void;

/** The hub of a process's parts (one per {@link Runtime}). */
export class Signals {
  private readonly listeners = new Map<SignalName, Set<Listener<never>>>();
  /** True while any listener is subscribed: parts announce only then. */
  active = false;

  /** Subscribes `fn` to `name`; returns the unsubscribe function. A listener that throws is ignored. */
  on<K extends SignalName>(name: K, fn: Listener<K>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(fn as Listener<never>);
    this.active = true;
    return () => {
      set.delete(fn as Listener<never>);
      if (set.size === 0) this.listeners.delete(name);
      this.active = this.listeners.size > 0;
    };
  }

  /** Announces `name` to its listeners (synchronously, in subscription order). */
  emit<K extends SignalName>(name: K, detail: SignalMap[K]): void {
    const set = this.listeners.get(name);
    if (!set) return;
    for (const fn of [...set]) {
      try {
        (fn as Listener<K>)(detail);
      } catch {
        /* a test's listener must not break the engine */
      }
    }
  }

  /**
   * The next `name` whose detail satisfies `accept` (any when omitted).
   * @throws Error naming the signal when none comes within `timeoutMs` (default 10 000 ms).
   */
  next<K extends SignalName>(name: K, accept: (detail: SignalMap[K]) => boolean = () => true, timeoutMs = 10_000): Promise<SignalMap[K]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`No "${name}" signal within ${timeoutMs} ms`));
      }, timeoutMs);
      const off = this.on(name, (d) => {
        if (!accept(d)) return;
        clearTimeout(timer);
        off();
        resolve(d);
      });
    });
  }
}
