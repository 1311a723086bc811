/**
 * A pass: the batches of several shards' ticks made together (docs/scheduler-shards.md). Every-second
 * schedules spread over the 16 shards bring all of a leader's loops due at the same instant; each
 * ticking alone made 4 round trips (take-due.lua, the lastFired read, fire.lua per queue,
 * advance-due.lua) and their JavaScript, 16 times a second. A pass makes each step once for all of
 * them: the take-due calls leave in one write (corked: one per node on a cluster, where the shards'
 * keys are on several masters), the lastFired of all their schedules is one HMGET per queue, fire.lua
 * is called per queue for the triggers of every shard (each call carries the earliest lease end of its
 * shards), and the advance-due calls leave in one write. Every rule of a batch holds per shard: its
 * compare-and-set, its lease (a shard this instance no longer leads is not fired), its leadership
 * instant for the catch-up rules.
 *
 * The loops whose ticks start in the same turn of the event loop join one pass; the loops' timers are
 * kept here by wake instant (ms), so the loops due at one instant tick in one turn. A pass of several
 * shards takes every slot of the leader's gate (batch-gate.ts) and at most {@link SHARD_DUE}.batch ×
 * slots schedules in all (an equal share per shard), so its blocking of the event loop is bounded as
 * that of the batches it stands for. A shard whose share was full goes on in a second pass with the
 * others whose share was full; after that (a burst), alone, a batch at a time, as before. A failure
 * of a shared step gives each loop of the pass its batch to make alone, so a fault is its shard's,
 * as before (a shard on a master that is down does not stop the others).
 * Units: epoch ms.
 */
import { takeDueScript, advanceDueScript, type DueBatch, type DueItem, type DueMove } from '../redis/commands/shard-due.js';
import type { ShardKeys } from '../redis/keys.js';
import { SHARD_DUE } from '../redis/protocol.js';
import { corked } from '../redis/cluster.js';
import { entryOf, exhaustedLine, readLastFired, Slicer, type Entry } from './due-entry.js';
import type { FireItem } from './fire-triggers.js';
import { applyLiveness, forgetOrphaned, orphanedOf, storeOrphaned } from './orphans.js';
import { isPlanned, plan, wakeAt } from './plan.js';
import type { FiringShared } from './firing-settle.js';

/** How soon a schedule that could not be decided now is looked at again, ms (a liveness bound, a fence, an orphaned refusal). */
const RECHECK_MS = 1_000;
/** No stored orphaned-since instants (a batch of runtime schedules only). */
const NONE_ORPHANED: ReadonlyMap<string, number> = new Map();
/** Batches of a tick made in a pass with other shards; the later ones of a long tick (a burst) are made alone. */
export const PASS_ROUNDS = 2;

/** What a pass needs of a shard's loop (shard-loop.ts). */
export interface PassLoop {
  readonly keys: ShardKeys;
  /** When this leadership of the shard began (Redis time, epoch ms). */
  readonly leaderSince: number;
  /** Whether the loop still runs and this instance leads its shard. */
  leading(): boolean;
  /** Its timer came: it ticks. */
  wake(): void;
}

/** One loop's batch of a pass: the next wake the index holds, the earliest wake the batch wrote, whether the batch was full. */
export interface PassOutcome {
  /** The first wake instant after the batch's `now` in the due index (undefined: none). */
  next: number | undefined;
  /** The earliest wake instant the batch wrote (a new score or a retry; Infinity: none). */
  written: number;
  /** The batch took as many as it could: more may be due. */
  full: boolean;
}

/** A pass failed in a step shared by its loops: each makes its batch alone. */
export const ALONE = Symbol('alone');

interface Joined {
  loop: PassLoop;
  resolve: (o: PassOutcome | typeof ALONE | undefined) => void;
  reject: (err: unknown) => void;
}

/** The leader's passes and the loops' timers; see the module doc. */
export class ShardPasses {
  private joining: Joined[] = [];
  private flush?: NodeJS.Immediate;
  /** The loops' timers, one per wake instant (ms, by the time source); each loop is in one at most. */
  private readonly timers = new Map<number, { timer: NodeJS.Timeout; loops: Set<PassLoop> }>();
  private readonly armedAt = new Map<PassLoop, number>();

  constructor(private readonly shared: FiringShared) {}

  /**
   * The loop's batch, made in a pass with the other loops that ask in this turn of the event loop.
   * @returns its outcome; undefined when the loop no longer leads; {@link ALONE} when a shared step failed
   * @throws what its own take-due call threw
   */
  together(loop: PassLoop): Promise<PassOutcome | typeof ALONE | undefined> {
    return new Promise((resolve, reject) => {
      this.joining.push({ loop, resolve, reject });
      this.flush ??= setImmediate(() => this.run());
    });
  }

  /** The loop's batch, made alone (one slot of the gate, a full batch). @returns its outcome; undefined when the loop no longer leads */
  async alone(loop: PassLoop): Promise<PassOutcome | undefined> {
    const [r] = await pass(this.shared, [loop]);
    if (r instanceof Error) throw r;
    return r;
  }

  /** Arms the loop's timer for `atMs` (the time source's epoch ms), `inMs` from now; the loops armed for one ms share a timer. */
  arm(loop: PassLoop, atMs: number, inMs: number): void {
    this.disarm(loop);
    const key = Math.ceil(atMs);
    let t = this.timers.get(key);
    if (t === undefined) {
      const loops = new Set<PassLoop>();
      const timer = setTimeout(() => {
        this.timers.delete(key);
        const { signals } = this.shared.ctx;
        for (const l of loops) {
          this.armedAt.delete(l);
          if (signals.active) signals.emit('tick.start', {});
          l.wake();
        }
      }, inMs);
      this.timers.set(key, (t = { timer, loops }));
    }
    t.loops.add(loop);
    this.armedAt.set(loop, key);
  }

  /** Clears the loop's timer (when no other loop shares it). */
  disarm(loop: PassLoop): void {
    const key = this.armedAt.get(loop);
    if (key === undefined) return;
    this.armedAt.delete(loop);
    const t = this.timers.get(key);
    if (t === undefined) return;
    t.loops.delete(loop);
    if (t.loops.size === 0) {
      clearTimeout(t.timer);
      this.timers.delete(key);
    }
  }

  private run(): void {
    this.flush = undefined;
    const group = this.joining;
    this.joining = [];
    pass(
      this.shared,
      group.map((j) => j.loop),
    ).then(
      (outcomes) =>
        group.forEach((j, i) => {
          const o = outcomes[i];
          if (o instanceof Error) j.reject(o);
          else j.resolve(o);
        }),
      (err: unknown) => {
        if (group.length === 1) group[0].reject(err);
        else for (const j of group) j.resolve(ALONE);
      },
    );
  }
}

/**
 * One batch of each loop, made together (see the module doc). @returns per loop (in order) its
 * outcome, undefined when it no longer leads, or the error of its own take-due call
 * @throws what a shared step threw
 */
async function pass(shared: FiringShared, loops: readonly PassLoop[]): Promise<(PassOutcome | Error | undefined)[]> {
  const { ctx, gate, bound } = shared;
  const many = loops.length > 1;
  const limit = many ? Math.min(SHARD_DUE.batch, Math.ceil((SHARD_DUE.batch * gate.slots) / loops.length)) : SHARD_DUE.batch;
  const release = await gate.acquire(many ? gate.slots : 1);
  try {
    const out: (PassOutcome | Error | undefined)[] = new Array(loops.length).fill(undefined);
    const now = ctx.now(); // after the wait for the slots
    const live = loops.flatMap((l, i) => (l.leading() ? [i] : []));
    if (live.length === 0) return out;
    // the read of the due index is in the slots too: 16 full replies decoded together block the loop as well
    const batches = await corked(ctx.client, () =>
      Promise.all(
        live.map((i) =>
          bound.call(takeDueScript(ctx.client, loops[i].keys, now, limit), 'the due index read').catch((err: unknown) => err as Error),
        ),
      ),
    );
    const taken: { i: number; batch: DueBatch }[] = [];
    live.forEach((i, k) => {
      const b = batches[k];
      if (b instanceof Error) out[i] = b;
      else taken.push({ i, batch: b });
    });
    const written = await batchOf(shared, loops, taken, now);
    for (const { i, batch } of taken) out[i] = { next: batch.next, written: written.get(i) ?? Infinity, full: batch.items.length >= limit };
    return out;
  } finally {
    release();
  }
}

/**
 * The batches taken: decode, lastFired, liveness, plan, fire, settle, advance. @returns by loop index
 * the earliest wake instant its batch wrote (a new score or a retry; absent: none): take-due.lua's
 * next wake was read before these were written.
 */
async function batchOf(
  shared: FiringShared,
  loops: readonly PassLoop[],
  taken: readonly { i: number; batch: DueBatch }[],
  now: number,
): Promise<Map<number, number>> {
  const { ctx, cache, bound } = shared;
  const entries: Entry[] = [];
  const moves = new Map<number, DueMove[]>();
  const loopOf = new Map<number, number>(); // shard -> loop index
  const decoding = new Slicer(); // a cold cache decodes and compiles every definition of the batch
  for (const { i, batch } of taken) {
    const shard = loops[i].keys.shard;
    loopOf.set(shard, i);
    const mine: DueMove[] = [];
    moves.set(i, mine);
    for (const item of batch.items) {
      if (decoding.due) await decoding.yield();
      try {
        if (item.json === undefined) throw new Error('no definition in the registry');
        entries.push(entryOf(item as DueItem & { json: Buffer }, cache, now, shard));
      } catch (err) {
        ctx.logger.error(
          `Schedule definition in Redis is invalid; it does not fire (schedule=${item.name} error=${(err as Error).message})`,
        );
        mine.push({ name: item.name, read: item.score, next: undefined });
      }
    }
  }
  const earliest = new Map<number, number>();
  if (entries.length > 0) {
    // the code-declared ones' stored orphaned-since instants are read with the lastFired: one write, both in flight
    // (only a shard's leader writes them, in its batches, which never overlap)
    const code = entries.filter((e) => !e.stored.runtime);
    const [, orphaned] = await corked(ctx.client, () =>
      Promise.all([
        bound.call(readLastFired(ctx.client, entries), 'the lastFired read'),
        code.length === 0
          ? NONE_ORPHANED
          : bound.call(
              orphanedOf(
                ctx.client,
                ctx.keys,
                code.map((e) => e.stored.name),
              ),
              'the orphaned read',
            ),
      ]),
    );
    for (const e of entries) if (e.exhausted) ctx.logger.log(exhaustedLine(e.stored));
    await liveness(shared, code, orphaned, now);
    const fire: FireItem[] = [];
    const slicer = new Slicer();
    for (const e of entries) {
      if (isPlanned(e, now)) {
        const { stored, spec, lastFired, leadMs, liveUntil, orphanSpan: orphaned } = e;
        const leaderSince = loops[loopOf.get(e.shard)!].leaderSince;
        shared.apply(e, plan({ stored, spec, lastFired, now, leadMs, leaderSince, liveUntil, orphaned }), fire);
      }
      if (slicer.due) await slicer.yield();
    }
    if (fire.length > 0) await shared.fire(fire, (shard) => loops[loopOf.get(shard)!].leading());
    // the orphaned spans are skipped in Redis (lastFired moved past them): their stored instants go
    const spans = entries.filter((e) => e.orphanSpan !== undefined && e.lastFired >= e.orphanSpan.until);
    if (spans.length > 0)
      await bound.call(
        forgetOrphaned(
          ctx.client,
          ctx.keys,
          spans.map((e) => e.stored.name),
        ),
        'the orphaned forget',
      );
    for (const e of entries) {
      const i = loopOf.get(e.shard)!;
      const n = nextScore(e, now);
      if (n !== undefined) earliest.set(i, Math.min(earliest.get(i) ?? Infinity, n));
      moves.get(i)!.push({ name: e.stored.name, read: e.score, next: n });
    }
  }
  await corked(ctx.client, () =>
    Promise.all([...moves].map(([i, m]) => bound.call(advanceDueScript(ctx.client, loops[i].keys, m), 'the due index advance'))),
  );
  return earliest;
}

/**
 * Liveness of the batch's code-declared schedules (runtime ones are always live): liveUntil,
 * orphaned-since (stored once), the orphaned span of one declared again (orphans.ts).
 * @param code the batch's code-declared entries; `stored` their stored orphaned-since instants ({@link orphanedOf})
 */
async function liveness(shared: FiringShared, code: Entry[], stored: ReadonlyMap<string, number>, now: number): Promise<void> {
  if (code.length === 0) return;
  const { ctx, bound } = shared;
  let read = await shared.liveRead();
  // only a fresh read may find a schedule undeclared: the last one may predate its declaration (a new instance)
  if (code.some((e) => !read.names.has(e.stored.name))) read = await bound.call(shared.liveRead(true), 'the liveness read');
  const toStore = applyLiveness(code, read, stored, now, (name) => ctx.declarations.liveUntilOf(name, read));
  await bound.call(storeOrphaned(ctx.client, ctx.keys, toStore), 'the orphaned-since write');
  for (const e of code) ctx.declarations.setLive(e, e.live);
}

/**
 * The entry's next score in the due index: its next wake; out of the index (undefined) when it
 * has nothing to plan (no next trigger, maxRuns reached, orphaned, paused); or a look again soon
 * when it could not be decided now (its next trigger is past its liveUntil, a retry instant).
 */
function nextScore(e: Entry, now: number): number | undefined {
  if (e.exhausted || !e.live || e.stored.paused || e.next === null) return undefined;
  if (e.retryAt !== undefined) return Math.max(e.retryAt, now + 1);
  if (e.next > e.liveUntil) {
    e.retryAt = now + RECHECK_MS; // the next liveness read decides
    return e.retryAt;
  }
  return wakeAt(e);
}
