/**
 * The leader's load of its table of schedules, in pieces: the registry is read with `HSCAN`
 * (COUNT {@link SCAN_COUNT}: no single command holds Redis for long at 50,000 schedules), each
 * queue's lastFired with `HMGET` of at most {@link HMGET_CHUNK} names, and the parsing and the first
 * trigger of each schedule are computed in slices of {@link SLICE_MS} of work with a turn of the
 * event loop between them (the lease renews, ticks and other work run meanwhile).
 *
 * The version is read before the scan: a change during the scan moves the version past it, and
 * its notice (or the lease renewal that sees the version) reloads again.
 * Units: epoch milliseconds.
 */
import type { ChronosLogger } from '../runtime/logger.js';
import type { RedisClient } from '../redis/connection.js';
import { QueueKeys, type SchedulerKeys } from '../redis/keys.js';
import { fireDedupTtlMs, fireLeadMs, storedSpec, type StoredSchedule } from './definition.js';
import type { HeapItem } from './due-heap.js';
import { forgetOrphaned, orphanedSinceOf, readOrphaned, storeOrphaned } from './orphans.js';
import type { Declarations } from './registry.js';
import type { ScheduleSpec } from './spec.js';

/** Registry fields asked for per `HSCAN` call. */
export const SCAN_COUNT = 1000;
/** Names per `HMGET` of a queue's lastFired. */
export const HMGET_CHUNK = 1000;
/** Longest run of load (or tick) work between two turns of the event loop, ms. */
export const SLICE_MS = 8;

/** One schedule as the leader tracks it. */
export interface Entry extends HeapItem {
  stored: StoredSchedule;
  spec: ScheduleSpec;
  /** Keys of its queue (one object per queue, shared by its schedules). */
  keys: QueueKeys;
  lastFired: number;
  next: number | null;
  live: boolean;
  dedupTtlMs: number;
  /** How long before its instant a trigger is enqueued, ms (workers start it at the instant). */
  leadMs: number;
  /** The generation it is planned under (its stored definition's; the registry version when it has none). */
  generation: number;
  /** Until when a live instance declares it by the last liveness read (epoch ms, Redis time; Infinity for a runtime one): no trigger after it is planned. */
  liveUntil: number;
  /** While orphaned: since when (epoch ms, Redis time; orphans.ts). */
  orphanedSince?: number;
  /** Declared again after being orphaned: the span whose triggers are skipped, (since, until] (epoch ms), until applied. */
  orphanSpan?: { since: number; until: number };
  /** fire.lua found its maxRuns reached: not planned again until the table is reloaded. */
  exhausted?: boolean;
}

/** Paces a long loop: {@link pace} yields a turn of the event loop once a slice of work has run. */
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

  /** Yields when the slice is used up. */
  async pace(): Promise<void> {
    if (this.due) await this.yield();
  }
}

/** What {@link loadTable} works with. */
export interface LoadContext {
  client: RedisClient;
  keys: SchedulerKeys;
  namespace: string;
  logger: ChronosLogger;
  declarations: Declarations;
  /** Redis time now (estimated), epoch ms. */
  now(): number;
}

/**
 * Reads the registry, liveness and lastFired into a new table (name → entry), each entry's next
 * trigger computed. `reuse` gives the spec of a schedule whose spec text, zone and offset are the
 * same as in the table being replaced (no parsing). Errors of Redis reject; a definition that does
 * not parse is logged and left out. Orphaned schedules get their stored orphaned-since instant
 * (stored now when none is: orphans.ts); one declared again while stored as orphaned gets the span
 * to skip (the one it had in `old`, else from the stored instant to now).
 * @returns the table and the registry version read before it.
 */
export async function loadTable(
  ctx: LoadContext,
  reuse: (s: StoredSchedule) => ScheduleSpec | undefined,
  old: ReadonlyMap<string, Entry> = new Map(),
): Promise<{
  table: Map<string, Entry>;
  version: number;
}> {
  const { client, keys, namespace, logger, declarations } = ctx;
  const slicer = new Slicer();
  const version = Number((await client.get(keys.version)) ?? 0);
  const read = await declarations.readLive();
  const live = read.names;
  const table = new Map<string, Entry>();
  const queueKeys = new Map<string, QueueKeys>();
  let cursor = '0';
  do {
    const [nextCursor, flat] = await client.hscan(keys.schedules, cursor, 'COUNT', SCAN_COUNT);
    cursor = nextCursor;
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const name = flat[i]!;
      let stored: StoredSchedule;
      let spec: ScheduleSpec;
      try {
        stored = JSON.parse(flat[i + 1]!) as StoredSchedule;
        spec = reuse(stored) ?? storedSpec(stored);
      } catch (err) {
        logger.error(`Schedule definition in Redis is invalid; it does not fire (schedule=${name} error=${(err as Error).message})`);
        continue;
      }
      let qk = queueKeys.get(stored.queue);
      if (qk === undefined) queueKeys.set(stored.queue, (qk = new QueueKeys(namespace, stored.queue)));
      const entry: Entry = {
        stored,
        spec,
        keys: qk,
        lastFired: stored.registeredAt ?? ctx.now(),
        next: null,
        live: false,
        dedupTtlMs: fireDedupTtlMs(stored, spec),
        leadMs: fireLeadMs(stored, spec),
        // a definition stored by an older Chronos has none: the registry version just read is at least every fence set before it
        generation: stored.generation ?? version,
        liveUntil: stored.runtime ? Infinity : declarations.liveUntilOf(name, read),
        wake: Infinity,
        heapIndex: -1,
      };
      entry.live = stored.runtime || live.has(name); // logged once the orphaned-since instants are known
      table.set(name, entry);
      await slicer.pace();
    }
  } while (cursor !== '0');

  const byQueue = new Map<string, Entry[]>();
  for (const e of table.values()) pushTo(byQueue, e.stored.queue, e);
  for (const entries of byQueue.values()) {
    for (let c = 0; c < entries.length; c += HMGET_CHUNK) {
      const chunk = entries.slice(c, c + HMGET_CHUNK);
      const last = await client.hmget(chunk[0]!.keys.lastFired, ...chunk.map((e) => e.stored.name));
      for (let i = 0; i < chunk.length; i++) {
        const e = chunk[i]!;
        const v = last[i];
        if (v !== null && v !== undefined) e.lastFired = Number(v);
        e.next = e.spec.nextAfter(e.lastFired);
        await slicer.pace();
      }
    }
  }
  await adoptOrphaned(ctx, table, old, (name, fallback) => orphanedSinceOf(name, read, fallback));
  return { table, version };
}

/** Gives the loaded entries their orphaned-since instants and spans (see {@link loadTable}), and logs their liveness. */
async function adoptOrphaned(
  ctx: LoadContext,
  table: Map<string, Entry>,
  old: ReadonlyMap<string, Entry>,
  sinceOf: (name: string, fallback: number) => number,
): Promise<void> {
  const stored = await readOrphaned(ctx.client, ctx.keys);
  const now = ctx.now();
  const toStore: Entry[] = [];
  for (const e of table.values()) {
    const name = e.stored.name;
    const before = old.get(name);
    const at = stored.get(name);
    if (!e.live) {
      // unknown (it died while nobody led, or before this version): its lastFired, the last trigger enqueued
      e.orphanedSince = at ?? before?.orphanedSince ?? sinceOf(name, before?.liveUntil ?? e.lastFired);
      if (at === undefined) toStore.push(e);
    } else if (before?.orphanSpan !== undefined) {
      e.orphanSpan = before.orphanSpan;
    } else if (at !== undefined) {
      e.orphanSpan = { since: at, until: Math.max(now, at) };
    }
  }
  await storeOrphaned(ctx.client, ctx.keys, toStore);
  for (const e of table.values()) ctx.declarations.setLive(e, e.live);
  const gone = [...stored.keys()].filter((name) => !table.has(name));
  if (gone.length > 0) await forgetOrphaned(ctx.client, ctx.keys, gone);
}

/** The spec of the table entry being replaced when its text, zone and offset are those of `s` (no parsing needed). */
export function sameSpec(old: Entry | undefined, s: StoredSchedule): ScheduleSpec | undefined {
  if (old === undefined) return undefined;
  const o = old.stored;
  const same = o.expression === s.expression && o.timeZone === s.timeZone && o.offsetMs === s.offsetMs;
  return same && o.startAt === s.startAt && o.endAt === s.endAt ? old.spec : undefined;
}

/** Appends `value` to the list of `key` (first use creates the list, in insertion order). */
export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
