import type { EventBus } from '../runtime/events.js';
import type { ChronosLogger } from '../runtime/logger.js';
import { DEAD_REASON, MARKER_TTL, META, SCAN_START } from '../redis/protocol.js';
import { DEFAULTS } from '../runtime/defaults.js';
import {
  reclaimConsumerScript,
  renewMarkersScript,
  type HeldEntry,
  type PoisonTask,
  type RequeuedTask,
} from '../redis/commands/recovery.js';
import type { RedisClient } from '../redis/types.js';
import { decodeStored, markerKeys, type StreamTask, type TaskMeta } from '../queue/codec.js';
import { CLAIM_CHUNK, isNoGroup, type ConsumedQueue, type Consumer } from '../fetch/consumer.js';
import type { Executor } from '../worker/executor.js';
import type { ResolvedServerOptions } from '../worker/server-options.js';
import type { Slots } from '../fetch/slots.js';
import { SweepPlan } from './sweep-plan.js';
import { isCancelPrevious, supersede } from '../worker/supersede.js';
import { abortCancelled, cancelActorOf } from '../worker/cancel-listener.js';
import { engineTime } from '../runtime/time.js';
import { RedisStall } from './redis-stall.js';

/**
 * The period of a worker server's claims round ({@link Recoverer.extendClaims}), ms: a third of the
 * visibility timeout (at least 100 ms), so a live holder's entries are never near it.
 */
export function claimsEveryMs(visibilityTimeoutMs: number): number {
  return Math.max(100, Math.floor(visibilityTimeoutMs / 3));
}

/** An entry of a queue's stream, as this consumer holds it in the pending entries list (PEL). */
interface Pending {
  readonly queue: ConsumedQueue;
  readonly entryId: string;
  /** The task, when this server decoded it (its markers are renewed with it). */
  readonly task?: { readonly id: string; readonly meta: TaskMeta };
}

/** What the recoverer needs from the server. */
export interface RecovererDeps {
  readonly client: RedisClient;
  readonly queues: readonly ConsumedQueue[];
  readonly consumer: Consumer;
  readonly slots: Slots;
  /** The dead path (kill.lua), for poison tasks. */
  readonly executor: Executor;
  readonly opts: ResolvedServerOptions;
  readonly logger: ChronosLogger;
  readonly events: EventBus;
}

/**
 * The pending entries lists of a worker server's queues — where a task is reclaimed: entries of
 * crashed consumers idle past the visibility timeout go back to their queue (or dead as poison,
 * through the one dead path), entries whose stream entry is gone are reported lost, this server's
 * own entries have their claims and markers kept fresh, and at shutdown what it still holds goes
 * straight back to the queue. Keeps no state: the slot table says what this server holds.
 */
export class Recoverer {
  private readonly plan: SweepPlan<ConsumedQueue>;
  /** Queues found without their consumer group (NOGROUP), warned about once until a sweep finds it again. */
  private readonly groupMissing = new Set<string>();
  /** Queues this server put entries back into ({@link giveBack}): the shutdown announces their freed limit slots. */
  readonly givenBack = new Set<string>();
  /**
   * Queue → where its next sweep starts in its pending entries list, when the last sweep stopped
   * before the list's end (one sweep looks at a bounded part of it: fetch/consumer.ts RECOVER_SCAN).
   * Before review46 every sweep began again at the start, so entries behind the first ~10,000 (a
   * stalled consumer's, behind the entries live workers kept fresh) were never reclaimed.
   */
  private readonly sweepFrom = new Map<string, string>();
  /**
   * A stalled Redis seen by the lateness of calls: the sweep waits for the live holders' claim
   * renewals after it. Fed by the sweep's own calls and by the server's presence tick.
   */
  readonly stall: RedisStall;

  constructor(private readonly deps: RecovererDeps) {
    this.stall = new RedisStall(claimsEveryMs(deps.opts.visibilityTimeout), deps.logger);
    // while nobody is overdue the sweep is a safety net (unknown consumers, lost entries): each queue about every
    // max(queues × recoverInterval, visibilityTimeout / 2), so few queues cost few calls (half a tick of slack for timer jitter)
    const { visibilityTimeout, recoverInterval } = deps.opts;
    const gap = visibilityTimeout / 2 / Math.max(1, deps.queues.length) - recoverInterval / 2;
    this.plan = new SweepPlan(deps.queues, Math.max(0, gap));
  }

  /**
   * One tick of the visibility-timeout sweep (every `recoverInterval` ms): reclaims entries idle past
   * the visibility timeout (recover.lua via {@link Consumer.recover}) in the queues {@link SweepPlan}
   * picks — every queue on the first tick and while `sweepAll` (another server is overdue), else one
   * queue in turn (each about every `max(queues × recoverInterval, visibilityTimeout / 2)`) plus queues
   * asked for — so its idle cost does not grow with the number of queues. A queue's sweep looks at a
   * bounded part of its pending entries list and the next one goes on from where it stopped ({@link sweepFrom}).
   * It never takes what this server holds ({@link holding}): after a stall of this process (a blocked
   * event loop, a GC pause) the sweep and the claims round are due together, and a sweep that went
   * first put this server's own running task back in the queue, and it ran again here (dist-cases B20).
   * Nor does it take entries when Redis stalled ({@link stall}): a queue's sweep first reads the size
   * of its pending entries list (`XPENDING` summary: an empty one is not swept), and each sweep call
   * is sent soon after the reply before it, so it runs after the claim renewals of live holders that
   * waited in Redis with that call; a sweep call that Redis ran late takes nothing (recover.lua), and no
   * sweep runs for a while after one or after a late presence tick (trial "trialflow": another server's
   * sweep took a live server's running task after a 5 s SIGSTOP of Redis).
   * @returns the names of the queues where entries left the pending entries list (requeued, dead as
   * poison, lost): their fleet-wide slots are free, for the caller to announce.
   */
  async recover(sweepAll = true): Promise<string[]> {
    const o = this.deps.opts;
    const freed: string[] = [];
    if (this.stall.holding) return freed;
    const picked = this.plan.pick(sweepAll);
    for (const [i, q] of picked.entries()) {
      let found;
      try {
        // a reply of the queue's Redis first: the sweep's calls follow it (redis-stall.ts)
        const after = engineTime.localNow();
        if ((await this.deps.consumer.pendingCount(q.keys.stream)) === 0) {
          this.groupMissing.delete(q.name);
          this.sweepFrom.delete(q.name);
          continue;
        }
        if (this.stall.holding) {
          this.putOff(picked.slice(i), this.stall.holdMs); // a late reply came meanwhile (a presence tick's)
          break;
        }
        const keep = this.holding(q);
        const { maxLateMs } = this.stall;
        const opts = { visibilityTimeoutMs: o.visibilityTimeout, maxDeliveries: o.maxDeliveries, keep, maxLateMs, after };
        found = await this.deps.consumer.recover(q.keys, opts, this.sweepFrom.get(q.name));
      } catch (err) {
        this.sweepFrom.delete(q.name); // from the start next time (a group recreated has a new list)
        if (this.noGroup(q, err)) continue;
        throw err;
      }
      this.groupMissing.delete(q.name);
      if (found.cursor === SCAN_START) this.sweepFrom.delete(q.name);
      else this.sweepFrom.set(q.name, found.cursor);
      await this.handle(q, found.requeued, found.poison, found.lost, 'idle past the visibility timeout');
      if (found.requeued.length + found.poison.length + found.lost.length > 0) freed.push(q.name);
      if (found.lateMs > 0) {
        this.stall.saw(found.lateMs, 'visibility-timeout sweep');
        this.putOff(picked.slice(i), this.stall.holdMs); // swept once the wait is over
        break;
      }
      if (found.slow) {
        this.putOff(picked.slice(i), 0); // a reply came slowly (this process or Redis is slow): at the next tick
        break;
      }
    }
    return freed;
  }

  /** Asks for a sweep of `queues` in `ms` or soon after. */
  private putOff(queues: readonly ConsumedQueue[], ms: number): void {
    const at = engineTime.now() + ms;
    for (const q of queues) this.plan.later(q, at);
  }

  /**
   * The entries of `q` this server holds (its slot table: running, waiting for a slot, held for their
   * instant), for the sweep to leave to it. Their claims are this server's to renew; an entry idle
   * past the timeout while held here means this process stalled, and it is alive again. Its pending
   * entries the slot table does not hold (a read whose reply never arrived) are still reclaimed.
   */
  private holding(q: ConsumedQueue): string[] {
    const out: string[] = [];
    for (const e of this.deps.slots.entries()) if (e.queue.name === q.name) out.push(e.entryId);
    return out;
  }

  /**
   * NOGROUP (Redis lost its data: restarted empty, FLUSHDB) is a known condition, not a failure: a
   * queue without its consumer group has nothing pending, so nothing to recover or hold until the
   * fetch loop recreates the group. One warning line per queue until the group is back.
   * @returns false for any other error.
   */
  private noGroup(q: ConsumedQueue, err: unknown): boolean {
    if (!isNoGroup(err)) return false;
    if (!this.groupMissing.has(q.name)) {
      this.groupMissing.add(q.name);
      this.deps.logger.warn(
        `Consumer group missing (Redis lost its data?): nothing to recover until the fetch loop recreates it (queue=${q.name})`,
      );
    }
    return true;
  }

  /**
   * Reclaims at once every entry consumer `from` holds in this server's queues (reclaim-consumer.lua,
   * 100 at a time): a server found dead by its liveness, or this server's own previous process.
   * @returns how many of its entries were taken: back in their queue, dead as poison or reported lost
   * (each frees a slot of its queue's fleet-wide limits; before trial 28 poison and lost ones were not
   * counted, so their freed slots were not announced).
   * @throws the first Redis error (the caller tries again on its next tick).
   */
  async reclaimFrom(from: string, why: string): Promise<number> {
    let total = 0;
    for (const q of this.deps.queues) {
      for (let more = true; more;) {
        const r = await reclaimConsumerScript(this.deps.client, q.keys, {
          consumer: this.deps.consumer.name,
          from,
          count: 100,
          maxDeliveries: this.deps.opts.maxDeliveries,
          counterTtlMs: DEFAULTS.counterTtlMs,
        });
        await this.handle(q, r.requeued, r.poison, r.lost, why);
        total += r.requeued.length + r.poison.length + r.lost.length;
        more = r.more;
      }
    }
    return total;
  }

  private async handle(q: ConsumedQueue, requeued: RequeuedTask[], poison: PoisonTask[], lost: string[], why: string): Promise<void> {
    if (requeued.length > 0) await this.requeued(q, requeued, why);
    for (const p of poison) await this.poison(q, p);
    for (const entryId of lost) this.lost(q, entryId);
  }

  private async requeued(q: ConsumedQueue, tasks: RequeuedTask[], why: string): Promise<void> {
    const { logger, events } = this.deps;
    logger.warn(
      `Reclaimed ${tasks.length} task(s) ${why} and put them back in the queue ` +
        `(queue=${q.name} ids=${tasks.map((t) => t.taskId).join(',')})`,
    );
    if (events.active) {
      for (const t of tasks) events.emit({ type: 'task.requeued', queue: q.name, taskId: t.taskId, taskType: t.type, reason: 'recovered' });
    }
    // they wait for a worker again: their markers get the lifetime of a waiting task
    const marked = tasks.map((t) => ({ taskId: t.taskId, markers: markerKeys(q.keys, { id: t.taskId, meta: parseMeta(t.meta) }) }));
    await this.renewMarkers(marked);
  }

  /**
   * Renews the markers of tasks put back in the stream (renew-markers.lua), {@link CLAIM_CHUNK} tasks per
   * call: one call's length grows with its tasks (169 ms of Redis time for 5,000 in one call, before review46).
   */
  private async renewMarkers(marked: { taskId: string; markers: string[] }[]): Promise<void> {
    for (let i = 0; i < marked.length; i += CLAIM_CHUNK) await renewMarkersScript(this.deps.client, marked.slice(i, i + CLAIM_CHUNK));
  }

  /** A poison task this server now holds: the dead path, like every other dead task (its markers are released there). */
  private async poison(q: ConsumedQueue, p: PoisonTask): Promise<void> {
    const msg = decodeStored(p.stored, p.entryId);
    const task: StreamTask = { ...msg, entryId: p.entryId };
    const error = task.meta[META.lastError] ?? 'poison';
    if (await this.deps.executor.kill(q, task, DEAD_REASON.poison, error, true)) {
      this.deps.logger.error(
        `Task dead as poison: reclaimed more than ${this.deps.opts.maxDeliveries} times without finishing ` +
          `(type=${task.type} id=${task.id} queue=${q.name})`,
      );
    }
  }

  /** A pending entry whose stream entry was gone: logged once (XAUTOCLAIM dropped it), counted by recover.lua, emitted. */
  private lost(q: ConsumedQueue, entryId: string): void {
    this.deps.logger.error(
      `Task lost: its stream entry was deleted while it was pending (XDEL, a trim, eviction); nobody runs it again. ` +
        `Its id and type were in the entry; its uid/overlap markers expire by their TTL (queue=${q.name} entry=${entryId})`,
    );
    if (this.deps.events.active) this.deps.events.emit({ type: 'task.lost', queue: q.name, entryId, reason: 'entry-deleted' });
  }

  /**
   * Resets the idle time of every entry this server holds, so a long handler is not reclaimed, and
   * renews its task's markers to MARKER_TTL.activeVisibilityTimeouts × the visibility timeout (claim.lua).
   * A run whose overlap marker a newer trigger took (overlap `cancel-previous`) is superseded here
   * when the leader's notice did not reach this server (worker/supersede.ts); a task an operator
   * cancelled whose notice did not reach it is cancelled here ({@link missedCancels}).
   */
  async extendClaims(): Promise<void> {
    const o = this.deps.opts;
    const ttl = MARKER_TTL.activeVisibilityTimeouts * o.visibilityTimeout;
    // a task held for its instant since less than a third of the timeout: its claim is fresh until the next round
    for (const [q, entries] of byQueue(this.deps.slots.entries(engineTime.now() - o.visibilityTimeout / 3))) {
      let outcome;
      try {
        outcome = await this.deps.consumer.hold(q.keys, held(q, entries), ttl);
      } catch (err) {
        if (this.noGroup(q, err)) continue; // their entries went with the group: their acks will find them gone
        throw err;
      }
      const { gone, taken, ended } = outcome;
      if (ended.length > 0) await this.missedCancels(q, entries, ended);
      // entries whose stream entry is gone stay pending, unclaimed: the sweep reports them lost once idle past the timeout
      if (gone.length > 0) this.plan.later(q, engineTime.now() + o.visibilityTimeout + o.recoverInterval);
      for (const { entryId, holder } of taken) {
        const run = this.deps.slots.runOf(q.name, entryId);
        if (run && isCancelPrevious(run.entry.meta)) supersede(run, holder, this.deps.logger, this.deps.events);
      }
    }
  }

  /**
   * Entries this server holds that are pending for no consumer any more (claim.lua's `ended`): a task
   * an operator cancelled (dead, reason `cancelled`) whose notice this server missed — its subscriber
   * was reconnecting, or the canceller stopped before its PUBLISH — is cancelled here as the notice
   * would have done it (worker/cancel-listener.ts): dropped if it waits, its signal aborted if it runs.
   * Others (this server's own acks crossing the round) are left alone. One HMGET of the dead tasks.
   */
  private async missedCancels(q: ConsumedQueue, entries: Pending[], ended: string[]): Promise<void> {
    const idOf = new Map(entries.map((e) => [e.entryId, e.task?.id]));
    const found = ended.filter((entryId) => idOf.get(entryId) !== undefined);
    if (found.length === 0) return;
    const raws = await this.deps.client.hmget(q.keys.deadTasks, ...found.map((entryId) => idOf.get(entryId)!));
    found.forEach((entryId, i) => {
      const taskId = idOf.get(entryId)!;
      let meta: TaskMeta;
      try {
        meta = decodeStored(raws[i] ?? '', q.keys.deadTasks, taskId).meta;
      } catch {
        return; // not dead (none stored), or not readable: nothing says it was cancelled
      }
      if (meta[META.deadReason] !== DEAD_REASON.cancelled) return;
      const run = this.deps.slots.cancelled(q.name, entryId);
      if (!run || run.id !== taskId || run.cancelled) return;
      const actor = cancelActorOf(taskId, meta[META.lastError]);
      abortCancelled(run, q.name, actor, this.deps.logger, true);
      if (this.deps.events.active) this.deps.events.emit({ type: 'task.cancelled', queue: q.name, taskId, taskType: run.type, actor });
    });
  }

  /** Deletes, in every queue's consumer group, the consumers of servers that are gone. */
  async deleteGoneConsumers(): Promise<void> {
    for (const q of this.deps.queues) await this.deps.consumer.deleteGoneConsumers(q.keys.stream);
  }

  /**
   * Puts entries this server holds back at the end of their streams, uncounted (one requeue.lua
   * per queue), and renews their markers as waiting tasks. A queue that fails is logged and left to
   * the recoverers (visibility timeout).
   */
  async giveBack(items: Iterable<Pending>): Promise<void> {
    for (const [q, entries] of byQueue(items)) {
      try {
        await this.deps.consumer.giveBack(
          q.keys,
          entries.map((e) => e.entryId),
        );
        this.givenBack.add(q.name);
      } catch (err) {
        this.deps.logger.error(
          `Could not put ${entries.length} task(s) back in the queue; they will be reclaimed after the visibility timeout ` +
            `(queue=${q.name})`,
          err,
        );
        continue;
      }
      const marked = entries.filter((e) => e.task).map((e) => ({ taskId: e.task!.id, markers: markerKeys(q.keys, e.task!) }));
      await this.renewMarkers(marked).catch((err: unknown) => {
        this.deps.logger.warn(`Could not renew the markers of tasks put back; they expire sooner (queue=${q.name} error=${String(err)})`);
      });
    }
  }

  /**
   * Puts back whatever this consumer still has pending (e.g. a read whose reply never arrived),
   * so nothing waits for the visibility timeout.
   */
  async releaseOwnPending(): Promise<void> {
    for (const q of this.deps.queues) {
      try {
        const ids = await this.deps.consumer.pending(q.keys.stream);
        if (ids.length > 0) await this.giveBack(ids.map((entryId) => ({ queue: q, entryId })));
      } catch {
        /* Redis gone: the recoverer of another server reclaims them */
      }
    }
  }
}

function parseMeta(json: string): TaskMeta {
  try {
    return JSON.parse(json) as TaskMeta;
  } catch {
    return {} as TaskMeta;
  }
}

/** The entries of one queue with their markers, for claim.lua. */
function held(q: ConsumedQueue, entries: Pending[]): HeldEntry[] {
  return entries.map((e) => ({ entryId: e.entryId, taskId: e.task?.id ?? '', markers: e.task ? markerKeys(q.keys, e.task) : [] }));
}

/** Entries grouped by queue, in order of first appearance. */
function byQueue(items: Iterable<Pending>): Map<ConsumedQueue, Pending[]> {
  const groups = new Map<ConsumedQueue, Pending[]>();
  for (const item of items) {
    const list = groups.get(item.queue);
    if (list) list.push(item);
    else groups.set(item.queue, [item]);
  }
  return groups;
}
