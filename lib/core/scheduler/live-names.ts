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

/** A reader of the names live instances declare, keeping each digest's set once read. */
export class LiveNames {
  /** Names sets read, by digest (complete reads only). */
  private readonly sets = new Map<string, ReadonlySet<string>>();
  private ownDigest?: string;
  private unionKey = '';
  private union: ReadonlySet<string> = new Set();
  private partialReads = 0;

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
   * The names declared by the instances seen since `sinceMs` (epoch ms, Redis time) whose
   * declaration has not expired, plus our own; and a key that changes whenever that set may have
   * changed (the sorted live digests; unique after an incomplete read).
   */
  async read(sinceMs: number): Promise<{ names: ReadonlySet<string>; key: string }> {
    const ids = await this.client.zrangebyscore(this.keys.instances, sinceMs, '+inf');
    const digests = new Set<string>();
    if (this.ownDigest !== undefined) digests.add(this.ownDigest);
    for (const d of await declarationDigests(this.client, this.keys, ids)) if (d) digests.add(d);
    const partial = new Map<string, ReadonlySet<string>>();
    for (const d of digests) {
      if (this.sets.has(d)) continue;
      const names = await scanSet(this.client, this.keys.names(d));
      // a set that expired or was rebuilt while we read it is incomplete: use it now, read it again next time
      if (names.size === digestCount(d)) this.sets.set(d, names);
      else partial.set(d, names);
    }
    for (const d of this.sets.keys()) if (!digests.has(d)) this.sets.delete(d);
    const key = [...digests].sort().join(' ') + (partial.size > 0 ? ` partial:${++this.partialReads}` : '');
    if (key !== this.unionKey) {
      const all = [...digests].map((d) => this.sets.get(d) ?? partial.get(d)!);
      this.union = all.length === 1 ? all[0] : new Set(all.flatMap((s) => [...s]));
      this.unionKey = key;
    }
    return { names: this.union, key };
  }
}
