/**
 * One schedule as a shard's leader works with it during one batch of a tick (docs/scheduler-shards.md):
 * decoded from the due index's batch (take-due.lua), its lastFired read from its queue's slot, its
 * spec from a bounded cache shared by the schedules of one spec text and zone. Nothing outlives the
 * batch but the caches (bounded: {@link SpecCache}), so the leader's memory does not grow with the
 * number of schedules. Units: epoch milliseconds.
 */
import type { RedisClient } from '../redis/connection.js';
import { QueueKeys } from '../redis/keys.js';
import { readRunsScript } from '../redis/commands/schedule.js';
import type { DueItem } from '../redis/commands/shard-due.js';
import { fireDedupTtlMs, fireLeadMs, storedSpec, type StoredSchedule } from './definition.js';
import type { ScheduleSpec } from './spec.js';
import { decodeStored } from './stored-form.js';
import { RecentMap } from '../runtime/recent-map.js';

/** Names per `HMGET` of a queue's lastFired. */
export const HMGET_CHUNK = 1000;
/** Longest run of tick work between two turns of the event loop, ms. */
export const SLICE_MS = 8;
/** Most specs the cache keeps (schedules of one expression, zone, offset and bounds share one). */
const SPEC_CACHE_SIZE = 4096;
/** Most decoded definitions the cache keeps (one per schedule: the last text seen of its definition). */
const DEFINITION_CACHE_SIZE = 4096;
/**
 * Longest period (the spec's `minPeriodMs`) of a schedule whose decoded definition the cache keeps,
 * ms. One due again within it is likely still cached (its decoding is saved at every batch); one due
 * more rarely is decoded at each of its batches (~10 µs, at most once a minute). Kept, such a
 * definition only evicts the ones that do recur: in a burst of many rare schedules (100,000 of period
 * 1 h due at one instant) every one would be copied in, outlive a few young-generation collections
 * while 4,096 others pass, and be promoted, then collected from the old generation, never read.
 */
export const DEFINITION_CACHE_PERIOD_MS = 60_000;

/** What a stored definition's JSON text decodes to: pure, so one serves every batch while the text is unchanged. */
interface Decoded {
  /** The stored JSON text it was decoded from, as UTF-8 bytes (a copy of its own when cached; else the caller's view). */
  json: Buffer;
  /** Read-only: shared by the entries of every batch that sees this text. */
  stored: StoredSchedule;
  spec: ScheduleSpec;
  dedupTtlMs: number;
  leadMs: number;
}

/** One schedule of a batch. */
export interface Entry {
  /** The shard whose due index listed it (its batch's; -1 for an entry made outside a batch). */
  shard: number;
  stored: StoredSchedule;
  spec: ScheduleSpec;
  /** Keys of its queue (one object per queue, shared by its schedules). */
  keys: QueueKeys;
  /** Its score in the due index as take-due.lua returned it (advance-due.lua compares it). */
  score: string;
  lastFired: number;
  next: number | null;
  /** Declared by a live instance, or added at run time. */
  live: boolean;
  dedupTtlMs: number;
  /** How long before its instant a trigger is enqueued, ms (workers start it at the instant). */
  leadMs: number;
  /** The generation it is planned under (its stored definition's; 0 when it has none). */
  generation: number;
  /** Until when a live instance declares it by the last liveness read (epoch ms, Redis time; Infinity for a runtime one): no trigger after it is planned. */
  liveUntil: number;
  /** While orphaned: since when (epoch ms, Redis time; orphans.ts). */
  orphanedSince?: number;
  /** Declared again after being orphaned: the span whose triggers are skipped, (since, until] (epoch ms). */
  orphanSpan?: { since: number; until: number };
  /** fire.lua found its maxRuns reached: taken out of the due index. */
  exhausted?: boolean;
  /** When to look at it again instead of its next wake (Redis said a trigger was early, a fence, a liveness bound), epoch ms. */
  retryAt?: number;
}

/**
 * Paces a long loop: check {@link due} per item and await {@link yield} when it is true (not an
 * `await` per item: each costs a promise and a microtask turn, per schedule of every batch).
 */
export class Slicer {
  private sliceStart = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Whether the current slice is used up (cheap: call it per item, await {@link yield} when true). */
  get due(): boolean {
    return performance.now() - this.sliceStart >= this.sliceMs;
  }

  /** Gives the event loop a turn (setImmediate: timers and I/O run), then starts a new slice. */
  async yield(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
  }
}

/**
 * Parsed specs by text, zone, offset and bounds (a spec is pure: one serves every schedule that
 * shares them), at most {@link SPEC_CACHE_SIZE} (a {@link RecentMap}: the last half of them parsed at
 * least); each schedule's decoded definition with the stored JSON text it came from, at most
 * {@link DEFINITION_CACHE_SIZE} (so an unchanged definition is parsed once, not at every due batch; a
 * changed one is a new text, decoded anew); and the queues' keys.
 */
export class SpecCache {
  private readonly specs = new RecentMap<string, ScheduleSpec>(SPEC_CACHE_SIZE / 2);
  /** The definition {@link spec} last returned a spec for, and that spec (consecutive schedules of a batch often share one: no key to build). */
  private last?: { stored: StoredSchedule; spec: ScheduleSpec };
  /** By schedule name (a short key to hash; the text is then compared, not hashed). */
  private readonly definitions = new RecentMap<string, Decoded>(DEFINITION_CACHE_SIZE / 2);
  private readonly queues = new Map<string, QueueKeys>();

  constructor(private readonly namespace: string) {}

  /** The spec of a stored definition. @throws InvalidScheduleError when it does not parse */
  spec(s: StoredSchedule): ScheduleSpec {
    const last = this.last?.stored;
    if (
      last !== undefined &&
      last.expression === s.expression &&
      last.timeZone === s.timeZone &&
      (last.offsetMs ?? 0) === (s.offsetMs ?? 0) &&
      last.startAt === s.startAt &&
      last.endAt === s.endAt
    )
      return this.last!.spec;
    const key = `${s.expression}\u0000${s.timeZone}\u0000${s.offsetMs ?? 0}\u0000${s.startAt ?? ''}\u0000${s.endAt ?? ''}`;
    let spec = this.specs.get(key);
    if (spec === undefined) {
      spec = storedSpec(s);
      this.specs.set(key, spec);
    }
    this.last = { stored: s, spec };
    return spec;
  }

  /**
   * The decoded definition of a schedule's stored JSON text, given as its UTF-8 bytes (the cached one
   * while its bytes are unchanged: compared, not decoded). Only a schedule of a period up to
   * {@link DEFINITION_CACHE_PERIOD_MS} is cached (with a copy of its bytes); a rarer one is decoded at
   * each call.
   * @throws an Error (JSON) or InvalidScheduleError (spec) when it is not one this version can fire
   */
  decoded(name: string, json: Buffer): Decoded {
    let d = this.definitions.get(name);
    if (d === undefined || !d.json.equals(json)) {
      const stored = decodeStored(name, json.toString());
      const spec = this.spec(stored);
      const dedupTtlMs = fireDedupTtlMs(stored, spec);
      const leadMs = fireLeadMs(stored, spec);
      if (spec.minPeriodMs > DEFINITION_CACHE_PERIOD_MS) return { json, stored, spec, dedupTtlMs, leadMs };
      d = { json: Buffer.from(json), stored, spec, dedupTtlMs, leadMs };
      this.definitions.set(name, d);
    }
    return d;
  }

  /** The keys of a queue (one object per queue name; queues are few). */
  queue(name: string): QueueKeys {
    let k = this.queues.get(name);
    if (k === undefined) this.queues.set(name, (k = new QueueKeys(this.namespace, name)));
    return k;
  }
}

/**
 * The entry of one due item: its definition decoded, its spec, lead and dedup TTL; lastFired is its
 * registration (else `now`, epoch ms) until {@link readLastFired}. `shard`: the shard whose due index
 * listed it (-1: none). @throws an Error (JSON) or InvalidScheduleError (spec)
 * when the stored definition is not one this version can fire.
 */
export function entryOf(item: DueItem & { json: Buffer }, cache: SpecCache, now: number, shard = -1): Entry {
  const { stored, spec, dedupTtlMs, leadMs } = cache.decoded(item.name, item.json);
  return {
    shard,
    stored,
    spec,
    keys: cache.queue(stored.queue),
    score: item.score,
    lastFired: stored.registeredAt ?? now,
    next: null,
    live: stored.runtime,
    dedupTtlMs,
    leadMs,
    generation: stored.generation ?? 0,
    liveUntil: Infinity,
  };
}

/**
 * Reads the entries' lastFired from their queues' slots (HMGET per queue, {@link HMGET_CHUNK} names
 * each, all in flight) and sets their next trigger; and, for the entries with a maxRuns, their runs
 * counters (readRunsScript): one that reached its maxRuns under this maxRuns is `exhausted`, so it is neither planned nor reported. A pause, a resume or a change that
 * keeps maxRuns puts an ended schedule back in the due index; planned, the triggers it no longer has
 * were reported as skipped (a resume: 'Skipped 116 trigger(s) while paused', trial 44).
 */
export async function readLastFired(client: RedisClient, entries: readonly Entry[]): Promise<void> {
  const byQueue = new Map<QueueKeys, Entry[]>();
  for (const e of entries) pushTo(byQueue, e.keys, e);
  const calls: Promise<void>[] = [];
  for (const [keys, list] of byQueue) {
    for (let c = 0; c < list.length; c += HMGET_CHUNK) {
      const chunk = list.slice(c, c + HMGET_CHUNK);
      calls.push(
        client.hmget(keys.lastFired, ...chunk.map((e) => e.stored.name)).then((values) => {
          chunk.forEach((e, i) => {
            const v = values[i];
            if (v !== null && v !== undefined) e.lastFired = Number(v);
          });
        }),
      );
    }
  }
  const limited = new Map<QueueKeys, Entry[]>();
  for (const e of entries) if (e.stored.maxRuns !== undefined) pushTo(limited, e.keys, e);
  for (const [keys, list] of limited) {
    const schedules = list.map((e) => ({ name: e.stored.name, maxRuns: e.stored.maxRuns! }));
    calls.push(
      readRunsScript(client, keys, schedules).then((counted) =>
        list.forEach((e, i) => {
          if (counted[i] >= schedules[i].maxRuns) e.exhausted = true;
        }),
      ),
    );
  }
  await Promise.all(calls);
  const slicer = new Slicer(); // a cron's next instant costs ~0.1 ms: 500 of them block the loop
  for (const e of entries) {
    if (slicer.due) await slicer.yield();
    e.next = e.spec.nextAfter(e.lastFired);
  }
}

/** The leader's line for a schedule found at its maxRuns (by the runs read of a batch or by fire.lua's refusal). */
export function exhaustedLine(s: Pick<StoredSchedule, 'name' | 'maxRuns'>): string {
  return `Schedule has enqueued its maxRuns triggers; no more fire (schedule=${s.name} maxRuns=${s.maxRuns})`;
}

/** Appends `value` to the list of `key` (first use creates the list, in insertion order). */
export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
