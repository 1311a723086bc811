// The pipelined calls of the bulk acts (schedule-bulk.ts), and an upsert's read of the stored fingerprints.
import { byShard, type ShardKeys } from '../redis/keys.js';
import { fingerprintStored, type CheckedDefinition } from '../scheduler/definition-check.js';
import type { InspectorContext } from './context.js';

/** Calls of a bulk act in flight at most: enough to keep Redis busy, few enough that the chunks' JSON is not held behind it. */
export const IN_FLIGHT = 8;

/**
 * Runs the calls of a bulk act pipelined (each on the wire as soon as its chunk is taken, before
 * the first reply), at most {@link IN_FLIGHT} at a time: a chunk is made when an earlier call's
 * reply frees a place, so the JSON of the chunks does not pile up in the client's queue while Redis
 * works (addSchedules of 100,000 digests: a peak heap of 206–248 MB with every chunk sent at once,
 * 135 MB so, most of it the validated definitions). Resolves to the chunks and their outcomes, in
 * order; rejects with the first failure (every chunk is still tried: a failure midway leaves the
 * others written, as schedule-bulk.ts's module doc says). Exported for its unit test.
 */
export async function pipelined<C, T>(parts: Iterable<C>, call: (part: C) => Promise<T>): Promise<{ parts: C[]; outcomes: T[] }> {
  const taken: C[] = [];
  const calls: Promise<T>[] = [];
  for (const part of parts) {
    const c = call(part);
    c.catch(() => {}); // handled by the Promise.all below; not "unhandled" while the loop waits
    taken.push(part);
    calls.push(c);
    if (calls.length >= IN_FLIGHT) await calls[calls.length - IN_FLIGHT].catch(() => {});
  }
  return { parts: taken, outcomes: await Promise.all(calls) };
}

/** Names per HMGET of an upsert's probe ({@link unchangedLeftOut}). */
const PROBE_CHUNK = 500;

/**
 * Whether the stored definition JSON `stored` already has the fingerprint `fp`: it holds
 * `,"fp":"<fp>"` near its end, where the registry forms have their top-level fp (inside a string
 * value the quotes are escaped), as put-schedules.lua's own test of an unchanged one reads it.
 * A false "no" costs only the write path, where the script decides (decoding another layout).
 */
function holdsFingerprint(stored: string | null, fp: string): boolean {
  return stored !== null && stored.includes(`,"fp":"${fp}"`, Math.max(0, stored.length - 320));
}

/**
 * The definitions of an upsert whose stored definition is not already theirs: an HMGET per
 * {@link PROBE_CHUNK} names of a shard, pipelined, each chunk's fingerprints made just before it is
 * sent; those already stored with their fingerprint are counted and left out, before any JSON is
 * made or sent (an unchanged upsert of 100,000 cost ~15 µs of CPU per definition here, most of it
 * their JSON and its sending, and ~3.5 µs of Redis). A read only: nothing is written before every
 * definition was validated. A definition changed by another writer after the read is left as that
 * writer wrote it, as if this upsert had come first.
 */
export async function unchangedLeftOut(
  ctx: InspectorContext,
  checked: readonly CheckedDefinition[],
): Promise<{ rest: CheckedDefinition[]; unchanged: number }> {
  const parts: { keys: ShardKeys; items: CheckedDefinition[] }[] = [];
  for (const [keys, group] of byShard(ctx.namespace, checked, (d) => d.body.name)) {
    for (let i = 0; i < group.length; i += PROBE_CHUNK) parts.push({ keys, items: group.slice(i, i + PROBE_CHUNK) });
  }
  const rest: CheckedDefinition[] = [];
  let unchanged = 0;
  await pipelined(parts, async (p) => {
    const fps = p.items.map((c) => fingerprintStored(c).fp);
    const stored = await ctx.client.hmget(p.keys.schedules, ...p.items.map((c) => c.body.name));
    p.items.forEach((c, i) => (holdsFingerprint(stored[i], fps[i]) ? unchanged++ : rest.push(c)));
  });
  return { rest, unchanged };
}
