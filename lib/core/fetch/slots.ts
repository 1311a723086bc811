import type { ChronosLogger } from '../runtime/logger.js';
import { DEAD_REASON, MARKER_TTL, META } from '../redis/protocol.js';
import { decodeEntry, markerKeys, type DecodedEntry, type StreamTask, type TaskMeta } from '../queue/codec.js';
import type { ConsumedQueue, Consumer, Fetched } from './consumer.js';
import { errorMessage, type Executor, type RunOwner } from '../worker/executor.js';
import { TaskRun } from '../worker/task-run.js';
import type { Mux } from '../worker/mux.js';
import type { StaleTriggers } from '../recovery/stale.js';
import { EntryTable } from './entry-table.js';
import { isCancelPrevious } from '../worker/supersede.js';
import { atInstant, type InstantTimer } from '../runtime/instant.js';

/** A decoded task waiting for a slot (fetched beyond the free slots by a multi-queue read). */
export interface Waiting {
  readonly queue: ConsumedQueue;
  readonly task: StreamTask;
  readonly payload: unknown;
}

/** A schedule trigger's task fetched before its instant, held until then with a slot reserved. */
export interface Held extends Waiting {
  /** Its instant, when its timer fires (Redis time, epoch ms); one timer per instant, kept by the group. */
  readonly dueAt: number;
  /** When it was held (Redis time, epoch ms): about when the read delivered it, so when its claim was last fresh. */
  readonly heldAt: number;
}

/** What the slot table needs from the server. */
export interface SlotsDeps {
  /** Handlers running at once, at most. */
  readonly concurrency: number;
  /** A held task whose timer fires this much later than planned is started only if still ours, ms. */
  readonly visibilityTimeoutMs: number;
  readonly consumer: Consumer;
  readonly executor: Executor;
  readonly mux: Mux;
  readonly logger: ChronosLogger;
  /** True while the server runs: nothing is admitted otherwise. */
  readonly isRunning: () => boolean;
  /** Redis time now (the process's time source, epoch ms): when a trigger's instant comes by this server's estimate. */
  readonly redisNow: () => number;
  /** Redis time now with its fraction of a ms (epoch ms; `redisNow` when absent): what a held task's instant is timed by. */
  readonly exactNow?: () => number;
  /** Skips a trigger task that waited past its schedule's catch-up policy, at its start. */
  readonly stale: StaleTriggers;
  /** Rung when a slot came free: the fetch loop (waiting on it) may read again. */
  readonly slotFreed: { wake(): void };
  /** A task of `queue` this server held ended or was let go (a slot of the queue's fleet-wide limit, if it has one, is free). */
  readonly released?: (queue: string) => void;
  /**
   * How many early trigger tasks may be held now beyond `concurrency` (none when absent): while the
   * server is its queues' only consumer, a burst of one instant is read ahead whole (up to a bound)
   * instead of a slot's worth per round trip after the instant; with other consumers, 0 (a task held
   * here beyond its slots would wait while another server idles).
   */
  readonly holdBeyond?: () => number;
}

/**
 * The slot table of a worker server — where the worker's slots are counted: `concurrency` slots,
 * each running a handler ({@link TaskRun}s in flight) or reserved by a held trigger task waiting
 * for its instant; decoded tasks beyond the free slots wait in a buffer. A schedule trigger's task
 * fetched early (the leader enqueues up to a second ahead) is held by a Node timer on the
 * server's estimate of Redis time, so its handler starts on time; one that waited too long
 * (recovery/stale.ts) is skipped at its start instead of run.
 */
export class Slots implements RunOwner {
  private active = 0;
  /**
   * Runs in flight, each knowing its place (`TaskRun.slotAt`): leaving is a swap with the last one.
   * Not a Map by (queue, entry id): every task passes through it, and a Map's set and delete reallocate
   * its table as it fills and empties (about 260 bytes per task at c=50). Found by (queue, entry id)
   * with a scan ({@link runOf}): only a cancel or a claims round asks.
   */
  private readonly inflight: TaskRun[] = [];
  private readonly buffer: Waiting[] = [];
  /** Held tasks by (queue, entry id). */
  private readonly held = new EntryTable<Held>();
  /**
   * Held tasks by trigger instant (epoch ms): one timer per instant starts them all, so a burst of
   * 1,000 triggers of one second is one timer, not 1,000 (fire lag p99 at c=1,000: 14.5 -> 9.1 ms).
   * A cancelled or taken task stays in its group; its release then finds it no longer held and does nothing.
   */
  private readonly groups = new Map<number, { timer: InstantTimer; tasks: Held[] }>();
  private readonly idleWaiters = new Set<() => void>();

  constructor(private readonly deps: SlotsDeps) {}

  /** Handlers running now. */
  get activeCount(): number {
    return this.active;
  }

  /**
   * Slots neither running a handler nor reserved by a held task. Held tasks within
   * {@link SlotsDeps.holdBeyond} reserve none: they start in the slots free at their instant, the
   * rest wait in the buffer for a slot (so no more than `concurrency` handlers ever run).
   */
  get freeSlots(): number {
    const held = this.held.size;
    // nothing held (most of the time): no need to ask holdBeyond (it reads the clock), read 2-3 times per task
    if (held === 0) return this.deps.concurrency - this.active;
    const beyond = this.deps.holdBeyond?.() ?? 0;
    return this.deps.concurrency - this.active - Math.max(0, held - beyond);
  }

  /** The runs in flight (handlers running now, or abandoned by a shutdown and not yet ended). */
  get running(): TaskRun[] {
    return [...this.inflight];
  }

  /**
   * Every entry this server holds, with its task: running (unless abandoned), waiting for a slot, held
   * for its instant — in that order. With `heldSince` (Redis time, epoch ms), a held task with no
   * markers that was held at or after it is left out: its claim (the read that delivered it) is that
   * recent, so a claims round may skip it (a burst held ahead would cost 3 calls per task otherwise).
   */
  *entries(heldSince = Infinity): Iterable<{ queue: ConsumedQueue; entryId: string; task: StreamTask }> {
    for (const run of this.inflight) {
      if (!run.abandoned) yield { queue: run.ref as ConsumedQueue, entryId: run.entry.entryId, task: run.entry };
    }
    for (const w of this.buffer) yield { queue: w.queue, entryId: w.task.entryId, task: w.task };
    for (const h of this.held.values()) {
      if (h.heldAt >= heldSince && markerKeys(h.queue.keys, h.task).length === 0) continue;
      yield { queue: h.queue, entryId: h.task.entryId, task: h.task };
    }
  }

  /** Decodes a fetched entry: garbage goes to dead at once; a task starts, is held, or waits for a slot. */
  accept(f: Fetched): void {
    const decoded = decodeEntry(f.entryId, f.fields);
    if (!decoded.ok) return this.undecodable(f, decoded);
    if (this.freeSlots > 0 && this.deps.isRunning()) this.admit(f.queue, decoded.task, decoded.payload);
    else this.buffer.push({ queue: f.queue, task: decoded.task, payload: decoded.payload });
  }

  /** An entry that is not a task: moved to dead at once (apart from {@link accept}, which runs for every task). */
  private undecodable(f: Fetched, decoded: Extract<DecodedEntry, { ok: false }>): void {
    const { task, error } = decoded;
    this.deps.logger.error(`Undecodable task entry moved to dead (queue=${f.queue.name} entry=${f.entryId} error=${error.message})`);
    const reason = DEAD_REASON.decode;
    const meta: TaskMeta = {
      ...task.meta,
      [META.lastError]: error.message,
      [META.failedAt]: this.deps.redisNow(),
      [META.deadReason]: reason,
      [META.raw]: decoded.fields,
    };
    void this.deps.executor.kill(f.queue, { ...task, meta }, reason, error.message);
  }

  /**
   * A cancel notice for entry `entryId` of queue `queue` (the Inspector has dead-lettered its task
   * already): the running task, whose signal the caller aborts; a task fetched but not started — a
   * trigger task held for its instant, or one waiting in the buffer for a slot — is dropped here (a
   * held one's slot freed), so it never starts, and logged (no `task.cancelled`: no attempt ran).
   */
  cancelled(queue: string, entryId: string): TaskRun | undefined {
    const dropped = (how: string) => {
      this.finishReserved(queue);
      this.deps.logger.log(
        `Task cancelled by an operator before it started: dropped ${how}; it never runs (queue=${queue} entry=${entryId})`,
      );
      return undefined;
    };
    if (this.held.delete(queue, entryId)) return dropped('while held for its trigger instant');
    const waiting = this.buffer.findIndex((w) => w.queue.name === queue && w.task.entryId === entryId);
    if (waiting >= 0) {
      this.buffer.splice(waiting, 1);
      return dropped('while waiting for a slot');
    }
    return this.runOf(queue, entryId);
  }

  /** The run in flight of entry `entryId` of queue `queue`, if any (the latest, should it run twice). O(runs in flight). */
  runOf(queue: string, entryId: string): TaskRun | undefined {
    const runs = this.inflight;
    for (let i = runs.length - 1; i >= 0; i--) if (runs[i].entry.entryId === entryId && runs[i].queue === queue) return runs[i];
    return undefined;
  }

  /**
   * The runs in flight a newer trigger of `schedule` (at `triggerAt`, epoch ms) supersedes: of that
   * schedule and queue, of an older trigger, holding the overlap marker under `cancel-previous`.
   * O(runs in flight).
   */
  supersededBy(queue: string, schedule: string, triggerAt: number): TaskRun[] {
    const out: TaskRun[] = [];
    for (const run of this.inflight) {
      if (run.queue === queue && run.schedule === schedule && (run.triggerAt ?? Infinity) < triggerAt && isCancelPrevious(run.entry.meta)) {
        out.push(run);
      }
    }
    return out;
  }

  /**
   * Shutdown: takes the tasks fetched but not started (waiting for a slot, or held for their
   * instant, their timers cleared) out of the table, for the caller to put back in the queue.
   */
  takeUnstarted(): Waiting[] {
    for (const g of this.groups.values()) g.timer.cancel();
    this.groups.clear();
    const unstarted = [...this.buffer.splice(0), ...this.held.values()];
    this.held.clear();
    return unstarted;
  }

  /**
   * A pause of `queues`: takes their tasks fetched but not started (waiting for a slot, or held for
   * their instant: their reserved slots are freed) out of the table, for the caller to put back in
   * the queue, so none starts while its queue is paused.
   */
  takeUnstartedOf(queues: ReadonlySet<string>): Waiting[] {
    const out: Waiting[] = [];
    const keep: Waiting[] = [];
    for (const w of this.buffer.splice(0)) (queues.has(w.queue.name) ? out : keep).push(w);
    this.buffer.push(...keep);
    const held = [...this.held.values()].filter((h) => queues.has(h.queue.name));
    for (const h of held) this.held.delete(h.queue.name, h.task.entryId); // its group's timer then finds it gone
    out.push(...held);
    if (held.length > 0) this.finishReserved();
    return out;
  }

  /** Resolves when no handler runs any more, or after `timeoutMs`. */
  waitIdle(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(deadline);
        this.idleWaiters.delete(done);
        resolve();
      };
      const deadline = setTimeout(done, timeoutMs);
      this.idleWaiters.add(done);
    });
  }

  /** Takes a slot: holds a trigger's task that is early (first attempt only), else starts it. */
  private admit(queue: ConsumedQueue, task: StreamTask, payload: unknown): void {
    const m = task.meta;
    const tr = m[META.triggerAt];
    const early = tr !== undefined && m[META.retried] === 0 && !m[META.crashes] ? tr - (this.deps.exactNow ?? this.deps.redisNow)() : 0;
    if (early > 0) {
      const at = tr!;
      let group = this.groups.get(at);
      if (!group) {
        const tasks: Held[] = [];
        // the instant by the time source with its fraction of a ms (runtime/instant.ts), re-read until it has come
        const timer = atInstant(at, this.deps.exactNow ?? this.deps.redisNow, () => {
          this.groups.delete(at);
          for (const h of tasks) void this.release(h);
        });
        group = { timer, tasks };
        this.groups.set(at, group);
      }
      const heldAt = this.deps.redisNow();
      const h: Held = { queue, task, payload, dueAt: at, heldAt };
      group.tasks.push(h);
      this.held.set(queue.name, task.entryId, h);
      return;
    }
    this.start(queue, task, payload);
  }

  /** Runs a task in a free slot, unless it is a stale trigger task (then skipped). @returns whether it runs. */
  private start(queue: ConsumedQueue, task: StreamTask, payload: unknown): boolean {
    // only a trigger's task can be stale: the others skip the clock reading
    if (task.meta[META.triggerAt] !== undefined && this.deps.stale.skipIfStale(queue, task, this.deps.redisNow())) {
      return false;
    }
    this.run(queue, task, payload);
    return true;
  }

  /**
   * A held task's instant has come: it starts in its reserved slot. When the timer fires much
   * later than planned (the process was paused or its event loop blocked, so claims were not
   * extended), the entry may have been reclaimed and run elsewhere: it starts only if this
   * consumer still owns it (`XCLAIM … JUSTID` returns it).
   */
  private async release(h: Held): Promise<void> {
    const q = h.queue.name;
    const entryId = h.task.entryId;
    if (this.held.get(q, entryId) !== h || !this.deps.isRunning()) return;
    if (this.deps.redisNow() - h.dueAt > this.deps.visibilityTimeoutMs / 3) {
      let owned = false;
      let gone = false;
      try {
        const held = [{ entryId, taskId: h.task.id, markers: markerKeys(h.queue.keys, h.task) }];
        const ttl = MARKER_TTL.activeVisibilityTimeouts * this.deps.visibilityTimeoutMs;
        const r = await this.deps.consumer.hold(h.queue.keys, held, ttl);
        owned = r.claimed.length === 1;
        gone = r.gone.length === 1;
      } catch (err) {
        this.deps.logger.warn(
          `Could not confirm a held task is still ours; leaving it to the recoverer (id=${h.task.id} error=${errorMessage(err)})`,
        );
      }
      if (this.held.get(q, entryId) !== h || !this.deps.isRunning()) return;
      if (!owned) {
        this.held.delete(q, entryId);
        const why = gone
          ? 'its stream entry was deleted meanwhile (the recoverer reports it lost)'
          : 'it was reclaimed by another consumer while this process was paused';
        this.deps.logger.warn(`A held task is not run here: ${why} (id=${h.task.id} queue=${h.queue.name} entry=${entryId})`);
        this.finishReserved(q);
        return;
      }
    }
    this.held.delete(q, entryId);
    if (this.active >= this.deps.concurrency) {
      this.buffer.push(h); // held beyond the slots (holdBeyond): it starts when a handler ends
      return;
    }
    if (!this.start(h.queue, h.task, h.payload)) this.finishReserved(q);
  }

  /** A reserved slot was given up without running: let waiting tasks or the fetcher use it. */
  private finishReserved(queue?: string): void {
    if (queue !== undefined) this.deps.released?.(queue);
    while (this.buffer.length > 0 && this.deps.isRunning() && this.freeSlots > 0) {
      const w = this.buffer.shift()!;
      this.admit(w.queue, w.task, w.payload);
    }
    this.deps.slotFreed.wake();
  }

  private run(queue: ConsumedQueue, task: StreamTask, payload: unknown): void {
    const run = new TaskRun(queue, task, payload);
    this.active++;
    run.slotAt = this.inflight.length;
    this.inflight.push(run);
    const reg = this.deps.mux.get(task.type);
    if (!reg) {
      void this.deps.executor.noHandler(run, this.deps.mux.types()).finally(() => this.finish(run));
      return;
    }
    this.deps.executor.execute(run, reg, this);
  }

  /** A run ended (its outcome recorded, or abandoned): its slot is free. @internal the executor's call ({@link RunOwner}). */
  finish(run: TaskRun): void {
    this.leave(run);
    this.active--;
    // (the size first: an empty Set's iterator is an object per task, and most servers idle between tasks)
    if (this.inflight.length === 0 && this.idleWaiters.size > 0) for (const done of this.idleWaiters) done();
    this.finishReserved(run.slotAnnounced ? undefined : run.queue); // announced already by recorded()
  }

  /** Takes `run` out of the runs in flight: the last one takes its place. */
  private leave(run: TaskRun): void {
    const at = run.slotAt;
    if (at < 0) return;
    const runs = this.inflight;
    const last = runs.pop()!;
    if (last !== run) {
      runs[at] = last;
      last.slotAt = at;
    }
    run.slotAt = -1;
  }

  /**
   * A run's outcome is recorded while its handler runs on: its fleet-wide slot (its pending entry, its
   * group's slot) is free now and is announced now, not when the handler returns (trial 28: a timed-out
   * handler that ignored its signal held workers waiting for the queue's limit until their
   * blockTimeout). This server's own slot stays taken until {@link finish}. @internal the executor's call ({@link RunOwner}).
   */
  recorded(run: TaskRun): void {
    run.slotAnnounced = true;
    this.deps.released?.(run.queue);
  }
}
