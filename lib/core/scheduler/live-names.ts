/**
 * Which schedule names live scheduler instances declare, read incrementally. An instance's
 * declaration is one key holding the digest of its sorted names; the names themselves are one SET
 * per digest, shared by every instance that declares the same schedules (replicas of one app). A
 * digest's names never change, so a reader reads each digest's set once (SSCAN, bounded calls)
 * and keeps it while a live instance declares it: a refresh costs ZRANGEBYSCORE + MGET, whatever
 * the number of schedules, and no call ever walks a whole set at once.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis/connection.js';
import type { SchedulerKeys } from '../redis/keys.js';

/** How many liveness windows a digest that stopped being live is remembered (its names and its final liveUntil). */
const GONE_WINDOWS = 10;

/** Elements asked for per SSCAN/HSCAN call (each call stays well under a millisecond of Redis). */
export const SCAN_COUNT = 1000;

/** The digest of a set of schedule names: `<count>.<sha1 of the sorted names>`. */
export function namesDigest(names: Iterable<string>): string {
  const sorted = [...names].sort();
  return `${sorted.length}.${createHash('sha1').update(JSON.stringify(sorted)).digest('hex')}`;
}

/** How many names a digest stands for (its `<count>` part; NaN for a malformed one). */
export function digestCount(digest: string): number {
  return Number(digest.slice(0, digest.indexOf('.')));
}

/** Every member of a SET, read with SSCAN cursors of {@link SCAN_COUNT} (one round trip each). */
export async function scanSet(client: RedisClient, key: string): Promise<Set<string>> {
  const out = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await client.sscan(key, cursor, 'COUNT', SCAN_COUNT);
    for (const m of batch) out.add(m);
    cursor = next;
  } while (cursor !== '0');
  return out;
}

/** The digests the given instances declare (one MGET; an instance whose declaration expired has none). */
export async function declarationDigests(client: RedisClient, keys: SchedulerKeys, ids: readonly string[]): Promise<(string | null)[]> {
  if (ids.length === 0) return [];
  return client.mget(ids.map((id) => keys.declaration(id)));
}

/**
 * The one rule for when code-declared schedules stop being declared by a live instance: the last
 * heartbeat of the last of their declaring instances (Redis time, the `instances` ZSET score) plus
 * the liveness window. A schedule is live up to and including that instant and orphaned after it;
 * no trigger dated after it is ever enqueued. The leader (firing.ts, fire.lua) and the Inspector
 * both apply it; the leader stores the instant once per orphaning (orphans.ts).
 * @param lastSeenAts the declaring instances' last heartbeats, epoch ms (Redis time)
 * @param livenessMs the liveness window, ms (3 heartbeat intervals)
 * @returns epoch ms; -Infinity when there is no declaring instance
 */
export function liveUntil(lastSeenAts: Iterable<number>, livenessMs: number): number {
  let last = -Infinity;
  for (const t of lastSeenAts) last = Math.max(last, t);
  return last + livenessMs;
}

/** What {@link LiveNames.read} found. */
export interface LiveRead {
  /** The names declared by live instances (shared: do not change it). */
  names: ReadonlySet<string>;
  /** Changes whenever `names` may have changed. */
  key: string;
  /** Until when each live digest is declared by a live instance, epoch ms ({@link liveUntil}; Infinity for our own). */
  until: ReadonlyMap<string, number>;
  /**
   * Digests that stopped being live (at this read or a recent one: kept for 10 liveness windows),
   * with their names and the instant their last declarer stopped being live.
   */
  vanished: readonly { names: ReadonlySet<string>; until: number }[];
}

/** A reader of the names live instances declare, keeping each digest's set once read. */
export class LiveNames {
  /** Names sets read, by digest (complete reads only). */
  private readonly sets = new Map<string, ReadonlySet<string>>();
  /** The instances declaring each live digest at the last read, and the digest's liveUntil then. */
  private declarers = new Map<string, { ids: string[]; until: number }>();
  /** Digests that stopped being live, by digest (kept for {@link GONE_WINDOWS} liveness windows). */
  private readonly gone = new Map<string, { names: ReadonlySet<string>; until: number }>();
  private ownDigest?: string;
  private unionKey = '';
  private union: ReadonlySet<string> = new Set();
  private partialReads = 0;
  /** The incomplete sets of the last read, by digest. */
  private partial = new Map<string, ReadonlySet<string>>();

  constructor(
    private readonly client: RedisClient,
    private readonly keys: SchedulerKeys,
  ) {}

  /** This instance's own declaration: always counted live, never read back from Redis. */
  own(digest: string | undefined, names: ReadonlySet<string>): void {
    if (this.ownDigest !== undefined) this.sets.delete(this.ownDigest);
    this.ownDigest = digest;
    if (digest !== undefined) this.sets.set(digest, names);
  }

  /**
   * The names declared by the instances seen within `livenessMs` before `nowMs` (epoch ms, Redis
   * time) whose declaration has not expired, plus our own; a key that changes whenever that set
   * may have changed (the sorted live digests; unique after an incomplete read); until when each
   * digest is live; and the digests that stopped being live since the last read (their declarers'
   * final heartbeats read with ZMSCORE: the instances ZSET keeps them for a day).
   */
  async read(nowMs: number, livenessMs: number): Promise<LiveRead> {
    const flat = await this.client.zrangebyscore(this.keys.instances, nowMs - livenessMs, '+inf', 'WITHSCORES');
    const ids: string[] = [];
    const seen: number[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      ids.push(flat[i]);
      seen.push(Number(flat[i + 1]));
    }
    const digests = new Set<string>();
    const declarers = new Map<string, { ids: string[]; until: number }>();
    if (this.ownDigest !== undefined) {
      digests.add(this.ownDigest);
      declarers.set(this.ownDigest, { ids: [], until: Infinity });
    }
    (await declarationDigests(this.client, this.keys, ids)).forEach((d, i) => {
      if (!d) return;
      digests.add(d);
      const at = declarers.get(d) ?? { ids: [], until: -Infinity };
      at.ids.push(ids[i]);
      at.until = Math.max(at.until, liveUntil([seen[i]], livenessMs));
      declarers.set(d, at);
    });
    for (const [d, g] of this.gone) if (digests.has(d) || g.until < nowMs - GONE_WINDOWS * livenessMs) this.gone.delete(d);
    for (const [d, before] of this.declarers) {
      if (digests.has(d) || before.ids.length === 0) continue;
      const names = this.sets.get(d);
      if (names === undefined) continue;
      const scores = await this.client.zmscore(this.keys.instances, ...before.ids);
      const finals = scores.filter((x): x is string => x !== null).map(Number);
      this.gone.set(d, { names, until: finals.length > 0 ? Math.max(before.until, liveUntil(finals, livenessMs)) : before.until });
    }
    this.declarers = declarers;
    const partial = new Map<string, ReadonlySet<string>>();
    for (const d of digests) {
      if (this.sets.has(d)) continue;
      const names = await scanSet(this.client, this.keys.names(d));
      // a set that expired or was rebuilt while we read it is incomplete: use it now, read it again next time
      if (names.size === digestCount(d)) this.sets.set(d, names);
      else partial.set(d, names);
    }
    for (const d of this.sets.keys()) if (!digests.has(d)) this.sets.delete(d);
    this.partial = partial;
    const key = [...digests].sort().join(' ') + (partial.size > 0 ? ` partial:${++this.partialReads}` : '');
    if (key !== this.unionKey) {
      const all = [...digests].map((d) => this.sets.get(d) ?? partial.get(d)!);
      this.union = all.length === 1 ? all[0] : new Set(all.flatMap((s) => [...s]));
      this.unionKey = key;
    }
    const until = new Map<string, number>();
    for (const [d, v] of declarers) until.set(d, v.until);
    return { names: this.union, key, until, vanished: [...this.gone.values()] };
  }

  /**
   * Until when a live instance declares `name`, epoch ms, by the last {@link read}: the latest
   * liveUntil of the live digests that hold it; -Infinity when none does.
   */
  liveUntilOf(name: string, read: LiveRead): number {
    let out = -Infinity;
    for (const [d, until] of read.until) if (until > out && (this.sets.get(d) ?? this.partial.get(d))?.has(name)) out = until;
    return out;
  }
}
