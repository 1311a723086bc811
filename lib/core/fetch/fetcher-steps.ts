// The fetcher's dependencies (FetcherDeps) and its steps that keep no state: hand entries to the slot table, keep those still owned, group queues by slot, tell the picker what a read returned.
import type { Runtime } from '../runtime/runtime.js';
import { keySlot } from '../redis/cluster.js';
import type { RedisClient } from '../redis/connection.js';
import type { GlobalKeys } from '../redis/keys.js';
import type { ConsumedQueue, Consumer, Fetched } from './consumer.js';
import type { Loops } from '../worker/loops.js';
import type { QueuePicker } from './picker.js';
import type { QueueReaders } from './readers.js';
import type { Recoverer } from '../recovery/recoverer.js';
import type { ResolvedServerOptions } from '../worker/server-options.js';
import type { Slots } from './slots.js';
import type { Wake } from './wake.js';

/** Hands entries to the slot table: a sync loop apart from the async `deliver` (a loop makes a whole async function hot: a large compile). */
export function acceptAll(slots: Slots, fetched: readonly Fetched[]): void {
  for (let i = 0; i < fetched.length; i++) slots.accept(fetched[i]);
}

/** What the fetcher needs from the server. */
export interface FetcherDeps {
  /** The server's client (commands other than the blocking read). */
  readonly client: RedisClient;
  readonly globalKeys: GlobalKeys;
  readonly queues: readonly ConsumedQueue[];
  readonly opts: ResolvedServerOptions;
  readonly consumer: Consumer;
  readonly slots: Slots;
  readonly recoverer: Recoverer;
  readonly loops: Loops;
  /** Logger, and the signals it announces `fetched` on. */
  readonly runtime: Runtime;
  /** Rung when a slot is freed or a queue resumed: the loop waits on it while every slot is taken. */
  readonly wake: Wake;
  /** True while the server runs: the loop ends otherwise. */
  readonly isRunning: () => boolean;
  /** Writes the batched acks and waits for them (before a freed slot of a limited queue is announced). */
  readonly flushAcks: () => Promise<void>;
  /** Writes the acks batched so far on `via` without waiting (a limited fetch sent next on `via` runs after them). */
  readonly writeAcksOn: (via: RedisClient) => void;
}

/** The entries this consumer still owns (`XCLAIM … JUSTID` per queue); the others were reclaimed. */
export async function stillOwned(deps: FetcherDeps, fetched: Fetched[]): Promise<Fetched[]> {
  // by queue: an entry id is unique only within its stream
  const owned = new Map<ConsumedQueue, Set<string>>();
  for (const q of new Set(fetched.map((f) => f.queue))) {
    const ids = fetched.filter((f) => f.queue === q).map((f) => f.entryId);
    owned.set(q, new Set(await deps.consumer.claim(q.keys.stream, ids)));
  }
  const kept = fetched.filter((f) => owned.get(f.queue)!.has(f.entryId));
  const lost = fetched.length - kept.length;
  // a late reply: this process was paused, or Redis did not answer (a stalled or failed-over master) — either way
  // the recoverer of another server may have taken the entries meanwhile (trial 17 saw "paused" for a Redis stall)
  if (lost > 0)
    deps.runtime.logger.warn(
      `${lost} fetched task(s) were reclaimed by another consumer while their read's reply was late (this process paused, ` +
        `or Redis not answering); not running them here`,
    );
  return kept;
}

/** `queues` as one group, or (on a cluster, where XREADGROUP cannot span slots) one group per slot. */
export function bySlot(readers: QueueReaders | undefined, queues: ConsumedQueue[]): ConsumedQueue[][] {
  if (!readers) return [queues];
  const groups = new Map<number, ConsumedQueue[]>();
  for (const q of queues) {
    const slot = keySlot(q.keys.stream);
    const g = groups.get(slot);
    if (g) g.push(q);
    else groups.set(slot, [q]);
  }
  return [...groups.values()];
}

export function observe(
  picker: QueuePicker<ConsumedQueue>,
  queues: readonly ConsumedQueue[],
  asked: number,
  got: readonly Fetched[],
): void {
  if (queues.length === 1) return picker.observe(queues[0], asked, got.length);
  const n = new Map<ConsumedQueue, number>();
  for (const f of got) n.set(f.queue, (n.get(f.queue) ?? 0) + 1);
  for (const q of queues) picker.observe(q, asked, n.get(q) ?? 0);
}
