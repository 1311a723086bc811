/**
 * The scheduler and worker roles of the testing module (manual and inline modes), provided as
 * `SchedulerService` and `WorkerService`: the explorer declares schedules and registers handlers
 * into them exactly as into the real ones (same validation, same errors), and user code that
 * injects them keeps working. Nothing connects, leads or fetches.
 */
import { ChronosStateError, DuplicateScheduleError, ScheduleNotFoundError } from '../../core/runtime/errors.js';
import { Mux } from '../../core/worker/mux.js';
import { SHARD_COUNT } from '../../core/redis/protocol.js';
import { type ScheduleDefinition, type StoredSchedule } from '../../core/scheduler/definition.js';
import { checkStoredScheduleName, finishStored, toStored } from '../../core/scheduler/definition-check.js';
import { writeOptions } from '../../core/admin/schedule-acts.js';
import type { ScheduleSpec } from '../../core/scheduler/spec.js';
import {
  validateDefinitions,
  validateNames,
  type AddSchedulesResult,
  type RemoveSchedulesResult,
  type UpsertSchedulesResult,
} from '../../core/admin/schedule-bulk.js';
import { withScheduleDefaults, type ResolvedChronosOptions } from '../options/resolve-options.js';
import { closedError } from './testing-error.js';

/** A schedule the kit knows: its registry form (with `paused`) and its parsed spec. @internal */
export interface KitSchedule {
  stored: StoredSchedule;
  spec: ScheduleSpec;
  /** Triggers enqueued (or buffered) under `runsUnder`, the maxRuns they were counted under (fire.lua's runs counter). */
  runs?: number;
  runsUnder?: number;
}

/** Id of the worker and scheduler of the testing module. */
export const TESTING_INSTANCE_ID = 'chronos-testing';

/** @internal Provided as `SchedulerService` by the testing module. */
export class TestingSchedulerService {
  /** Schedules by name: the declared ones and those added at run time. */
  readonly schedules = new Map<string, KitSchedule>();
  /** Set by the kit: enqueues one task of a schedule now (`triggerNow`). */
  triggerHook?: (s: KitSchedule) => Promise<string>;
  /** Set at the module's shutdown: the runtime API throws from then on (the engine's is closed too). */
  private closed = false;

  constructor(private readonly options: ResolvedChronosOptions) {}

  /** @internal Nest lifecycle: the module closed; schedule changes and `triggerNow` throw from now on. */
  onApplicationShutdown(): void {
    this.closed = true;
  }

  /** @throws ChronosTestingError naming `method` when the module was closed. */
  private open(method: string): void {
    if (this.closed) throw closedError(`SchedulerService.${method}`);
  }

  /** Always true in the kit. */
  get enabled(): boolean {
    return true;
  }
  /** Always true in the kit. */
  get eligible(): boolean {
    return true;
  }
  /** Always true in the kit. */
  get isRunning(): boolean {
    return true;
  }
  /** The kit's scheduler always leads. */
  get isLeader(): boolean {
    return true;
  }
  /** Every shard (0 to 15): the kit's scheduler leads them all, as a fleet of one does. */
  get shards(): number[] {
    return Array.from({ length: SHARD_COUNT }, (_, i) => i);
  }
  /** Always 1 in the kit. */
  get term(): number {
    return 1;
  }
  /** Always healthy in the kit. */
  health(): { running: boolean; leader: boolean; term: number; heartbeat: { ok: true }; firing: { ok: true } } {
    return { running: true, leader: true, term: 1, heartbeat: { ok: true }, firing: { ok: true } };
  }
  /** `chronos-testing`. */
  get instanceId(): string {
    return TESTING_INSTANCE_ID;
  }
  /** The schedules declared by decorators, in registry form. */
  get declaredSchedules(): StoredSchedule[] {
    return [...this.schedules.values()].filter((s) => !s.stored.runtime).map((s) => s.stored);
  }

  /** Declares a discovered schedule, validated as the engine's `Scheduler.register`. */
  register(def: ScheduleDefinition, source?: string): void {
    const { stored, spec } = toStored(def, this.options.timeZone, false, this.options.maxPayloadBytes);
    if (this.schedules.has(stored.name)) throw new DuplicateScheduleError(stored.name, source);
    this.schedules.set(stored.name, { stored, spec });
  }

  /**
   * As `SchedulerService.addSchedule`: validated, the module's defaults for unset fields; a schedule
   * declared by a decorator is replaced only with `opts.force`. @throws InvalidScheduleError; ChronosStateError;
   * InvalidOptionsError for bad `opts` (as the engine's `writeOptions`)
   */
  async addSchedule(def: ScheduleDefinition, opts?: { force?: boolean }): Promise<void> {
    this.open('addSchedule');
    const { force } = writeOptions(opts, 'addSchedule');
    const o = this.options;
    const { stored, spec } = toStored(withScheduleDefaults(def, o), o.timeZone, true, o.maxPayloadBytes);
    const old = this.schedules.get(stored.name);
    if (old && !old.stored.runtime && !force) {
      throw new ChronosStateError(
        `Schedule "${stored.name}" is declared in code, not at run time: addSchedule left it untouched. Pass { force: true } to replace it.`,
      );
    }
    this.replace(old, { stored, spec });
  }

  /**
   * Stores `next` in place of `old` (undefined: none) as the engine's put does: the pause is kept,
   * and the maxRuns count too unless the queue changed or `next` has no maxRuns (then it starts
   * afresh: registry.ts dropStaleRuns; a changed maxRuns restarts it at the next fire, fireDue's rule).
   */
  private replace(old: KitSchedule | undefined, next: KitSchedule): void {
    if (old?.stored.paused) next.stored.paused = true;
    if (old && old.stored.queue === next.stored.queue && next.stored.maxRuns !== undefined)
      [next.runs, next.runsUnder] = [old.runs, old.runsUnder];
    this.schedules.set(next.stored.name, next);
  }

  /**
   * As `SchedulerService.upsertSchedules`: all validated first, the module's defaults; an unchanged
   * definition (the same fingerprint) is kept as it is, a changed one keeps its pause; one declared
   * by a decorator is replaced only with `opts.force` (else left untouched, the others written, and it throws).
   * @throws InvalidScheduleError (with the `index`); DuplicateScheduleError; ChronosStateError; InvalidOptionsError for bad `opts`
   */
  async upsertSchedules(defs: readonly ScheduleDefinition[], opts?: { force?: boolean }): Promise<UpsertSchedulesResult> {
    this.open('upsertSchedules');
    const { force } = writeOptions(opts, 'upsertSchedules');
    const r = { added: 0, changed: 0, unchanged: 0 };
    const declared: string[] = [];
    for (const { stored, spec } of this.validate(defs, 'upsertSchedules')) {
      const old = this.schedules.get(stored.name);
      if (old?.stored.fp === stored.fp) r.unchanged++;
      else if (old && !old.stored.runtime && !force) declared.push(stored.name);
      else {
        if (old) r.changed++;
        else r.added++;
        this.replace(old, { stored, spec });
      }
    }
    if (declared.length > 0) {
      throw new ChronosStateError(
        `${declared.length} schedule(s) are declared in code, not at run time: ${declared.map((n) => `"${n}"`).join(', ')}. ` +
          'upsertSchedules left them untouched (the other definitions were written); pass { force: true } to replace them.',
      );
    }
    return r;
  }

  /** As `SchedulerService.addSchedules`: existing names are left untouched and listed. @throws InvalidScheduleError; DuplicateScheduleError */
  async addSchedules(defs: readonly ScheduleDefinition[]): Promise<AddSchedulesResult> {
    this.open('addSchedules');
    const r: AddSchedulesResult = { added: 0, existing: [] };
    for (const { stored, spec } of this.validate(defs, 'addSchedules')) {
      if (this.schedules.has(stored.name)) r.existing.push(stored.name);
      else {
        r.added++;
        this.schedules.set(stored.name, { stored, spec });
      }
    }
    return r;
  }

  /** As `SchedulerService.removeSchedules`: missing names are listed. @throws InvalidScheduleError; DuplicateScheduleError */
  async removeSchedules(names: readonly string[]): Promise<RemoveSchedulesResult> {
    this.open('removeSchedules');
    const r: RemoveSchedulesResult = { removed: 0, missing: [] };
    for (const name of validateNames(names)) {
      if (this.schedules.delete(name)) r.removed++;
      else r.missing.push(name);
    }
    return r;
  }

  /** Every definition validated, with the module's defaults, before any is stored (as the engine). */
  private validate(defs: readonly ScheduleDefinition[], what: string): { stored: StoredSchedule; spec: ScheduleSpec }[] {
    const o = this.options;
    const withDefaults = Array.isArray(defs) ? defs.map((def) => withScheduleDefaults(def, o)) : defs;
    return validateDefinitions(withDefaults, o.timeZone, what, o.maxPayloadBytes).map((c) => finishStored(c));
  }

  /** As `SchedulerService.removeSchedule`. @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  async removeSchedule(name: string): Promise<void> {
    this.open('removeSchedule');
    this.get(name);
    this.schedules.delete(name);
  }

  /** Pauses a schedule: `fireDue` skips its triggers until resumed. @returns false when it was paused already (as the engine). @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  async pauseSchedule(name: string): Promise<boolean> {
    this.open('pauseSchedule');
    const s = this.get(name).stored;
    if (s.paused === true) return false;
    s.paused = true;
    return true;
  }

  /** Resumes a paused schedule. @returns false when it was not paused (as the engine). @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  async resumeSchedule(name: string): Promise<boolean> {
    this.open('resumeSchedule');
    const s = this.get(name).stored;
    if (s.paused !== true) return false;
    delete s.paused;
    return true;
  }

  /** Enqueues one task of the schedule now (id `<schedule>:manual:<uuid>`, as the engine). @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  async triggerNow(name: string): Promise<string> {
    this.open('triggerNow');
    return this.triggerHook!(this.get(name));
  }

  /** A schedule by name. @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  get(name: string): KitSchedule {
    const s = this.schedules.get(checkStoredScheduleName(name));
    if (!s) throw new ScheduleNotFoundError(name);
    return s;
  }
}

/** @internal Provided as `WorkerService` by the testing module: the handler registry, no server. */
export class TestingWorkerService {
  /** The handler registry the explorer fills (the engine's). */
  readonly mux = new Mux();
  private readonly declaredQueues = new Map<string, string[]>();
  /** Attempts running now (kept by the kit). */
  activeCount = 0;

  constructor(private readonly options: ResolvedChronosOptions) {}

  /** Always true in the kit. */
  get enabled(): boolean {
    return true;
  }
  /** Always true in the kit. */
  get isRunning(): boolean {
    return true;
  }
  /** `chronos-testing`. */
  get serverId(): string {
    return TESTING_INSTANCE_ID;
  }
  /** No loops in the kit. */
  health(): undefined {
    return undefined;
  }
  /** Queues served: the `queues` option, else the default queue and those the decorators name. */
  get queues(): Record<string, number> {
    if (this.options.queues) return { ...this.options.queues };
    const out: Record<string, number> = { [this.options.queue]: 1 };
    for (const q of this.declaredQueues.keys()) out[q] = 1;
    return out;
  }
  /** Task types with a handler (fan-out listeners as `<type>#<listener>`). */
  get handledTypes(): string[] {
    return this.mux.types();
  }
  /** @internal The explorer reports a queue a decorator names. */
  addQueue(queue: string, source: string): void {
    this.declaredQueues.set(queue, [...(this.declaredQueues.get(queue) ?? []), source]);
  }
}
