import { Inject, Injectable, Logger, Optional, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { DuplicateHandlerError, DuplicateScheduleError } from '../../core/runtime/errors.js';
import { nameProblem } from '../../core/runtime/options.js';
import type { Task } from '../../core/queue/task.js';
import { specOf, type ScheduleDefinition } from '../../core/scheduler/definition.js';
import { validateScheduleName } from '../../core/scheduler/definition-check.js';
import { CHRONOS_OPTIONS, CHRONOS_TESTING_KIT } from '../chronos.constants.js';
import { MESSAGES, sourceOf } from '../chronos.messages.js';
import type { ScheduleMetadata } from '../decorators/schedule-options.interface.js';
import type { TaskHandlerMetadata } from '../decorators/task-handler.decorator.js';
import { ChronosConfigError } from '../errors/chronos-config.error.js';
import { ChronosDiscoveryError, type DiscoveryIssue } from '../errors/chronos-discovery.error.js';
import type { ResolvedChronosOptions } from '../options/resolve-options.js';
import { queueOf, resolveType, type PayloadClass } from '../payload-class.js';
import { ChronosClient } from '../services/chronos.client.js';
import { ChronosLifecycle } from '../services/chronos-lifecycle.js';
import { SchedulerService } from '../services/scheduler.service.js';
import { WorkerService } from '../services/worker.service.js';
import { childHandler, childType, directHandler, dispatcher, type Listener } from './fan-out.js';
import { scheduleOf } from './decorator-options.js';
import { ChronosMetadataAccessor } from './metadata.accessor.js';

type InstanceWrapper = ReturnType<DiscoveryService['getProviders']>[number];

const HANDLER_OPTION_KEYS = new Set(['name', 'queue', 'backoff']);
/** What to use instead of a processor or job option of `@nestjs/bullmq` given to `@TaskHandler` (docs/nest.md, "Options Chronos does not accept"). */
const HANDLER_NOT_ACCEPTED: Readonly<Record<string, string>> = {
  concurrency:
    "handlers at once per replica are the module's `concurrency`; a queue's fleet-wide limit is `queues: { q: { concurrency } }`",
  limiter: "a queue's rate limit is `queues: { q: { rate: { max, duration } } }` (fleet-wide)",
  attempts: "retries are the enqueue option `maxRetry` (= attempts - 1) or the module's `maxRetry`",
  maxRetry: "retries are the enqueue option `maxRetry` or the module's `maxRetry`",
  timeout: "the time limit of an attempt is the enqueue option `timeout` (ms) or the module's `timeout`",
  lockDuration: "the module's `visibilityTimeout` (running handlers' claims are extended automatically)",
};

/** A decorated method found on a provider or controller. */
interface Found {
  instance: Record<string, unknown>;
  className: string;
  method: string;
  source: string;
}

/**
 * Finds `@Cron`, `@Interval` and `@TaskHandler` methods on every provider and controller at
 * `onModuleInit` (DiscoveryService + MetadataScanner), validates them all, and fills the
 * scheduler's declarations and the worker's handler registry. Nothing runs until
 * `onApplicationBootstrap`. When it throws, what Chronos opened (the client's and the scheduler's
 * connections, of every import) is closed first: Nest runs no shutdown hook after a failed `init()`,
 * so an app that catches the error without `app.close()` can still exit.
 * @throws ChronosDiscoveryError listing every problem, each naming `Class#method`.
 * @throws ChronosConfigError when ChronosModule is imported more than once in the app (naming the namespaces).
 * @internal
 */
@Injectable()
export class ChronosExplorer implements OnModuleInit {
  private readonly logger = new Logger('ChronosExplorer');
  /** Schedule name → the methods that use it (duplicates are reported with every source). */
  private readonly scheduleSources = new Map<string, string[]>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: ChronosMetadataAccessor,
    private readonly scheduler: SchedulerService,
    private readonly worker: WorkerService,
    private readonly client: ChronosClient,
    @Inject(CHRONOS_OPTIONS) private readonly options: ResolvedChronosOptions,
    // absent in the testing kit's manual and inline modes, which open no connection
    @Optional() private readonly lifecycle?: ChronosLifecycle,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.lifecycle?.stopRequested) return; // the app closed while it booted: nothing is registered after the stop
    const providers = this.discovery.getProviders();
    const explorers = providers.map((w) => w.instance).filter((i): i is ChronosExplorer => i instanceof ChronosExplorer);
    try {
      // a second forRoot()/forRootAsync() builds a second module: its own worker and scheduler, which
      // would each discover every decorated method of the app and run it again; one of them may be the
      // testing kit, imported beside a module that imports ChronosModule (a test of the app's module)
      if (explorers.length > 1) {
        const namespaces = explorers.map((e) => e.options.namespace);
        const kit = providers.some((w) => w.token === CHRONOS_TESTING_KIT);
        throw new ChronosConfigError([kit ? MESSAGES.importedWithKit(namespaces) : MESSAGES.importedTwice(namespaces)]);
      }
      this.discover();
    } catch (err) {
      await Promise.all(explorers.map((e) => e.lifecycle?.startFailed()));
      throw err;
    }
  }

  private discover(): void {
    const issues: DiscoveryIssue[] = [];
    const warn: string[] = [];
    const listeners = new Map<string, Listener[]>();
    const scheduleSources = this.scheduleSources;
    scheduleSources.clear();
    const dispatches: { type: string; source: string }[] = [];
    let scheduleCount = 0;
    const issue = (source: string, message: string, cause?: unknown) => issues.push({ source, message, cause });
    const addListener = (l: Listener) => listeners.set(l.type, [...(listeners.get(l.type) ?? []), l]);

    for (const f of this.decoratedMethods(issues)) {
      const fn = f.instance[f.method] as (...args: unknown[]) => unknown;
      const invoke = (task: Task) => fn.call(f.instance, task);
      const schedules = this.accessor.schedules(fn);
      if (schedules.length > 1) issue(f.source, MESSAGES.twoSchedules(f.source));
      if (schedules.length > 0) {
        const r = this.schedule(f, schedules[0], issue);
        if (r) {
          scheduleCount++;
          this.worker.addQueue(r.def.queue!, f.source);
          if (r.dispatch) dispatches.push({ type: r.def.type!, source: f.source });
          else addListener({ type: r.def.type!, name: `${f.className}.${f.method}`, source: f.source, invoke });
        }
      }
      for (const h of this.accessor.taskHandlers(fn)) {
        const l = this.handler(f, h, invoke, issue);
        if (l) addListener(l);
      }
    }

    for (const [name, sources] of scheduleSources) {
      if (sources.length > 1)
        issue(sources[1], MESSAGES.duplicateSchedule(name, sources), new DuplicateScheduleError(name, sources.join(' and ')));
    }
    const bindings: [string, string][] = []; // payload class type → the queue its handlers declared
    for (const [type, ls] of listeners) {
      const bound = ls.filter((l) => l.payloadClass && l.queue !== undefined);
      const queues = new Set(bound.map((l) => l.queue!));
      if (queues.size > 1) issue(bound[0].source, MESSAGES.twoQueues(type, bound));
      else if (queues.size === 1) bindings.push([type, bound[0].queue!]);
      const byName = new Map<string, string[]>();
      for (const l of ls) byName.set(l.name, [...(byName.get(l.name) ?? []), l.source]);
      for (const [name, sources] of byName)
        if (sources.length > 1)
          issue(
            sources[1],
            MESSAGES.duplicateListener(type, name, sources),
            new DuplicateHandlerError(childType(type, name), sources.join(' and ')),
          );
      if (ls.length > 1) {
        for (const l of ls)
          if (childType(type, l.name).length > 200) issue(l.source, MESSAGES.childTypeTooLong(l.source, childType(type, l.name)));
      }
    }
    for (const d of dispatches) if (!listeners.has(d.type)) warn.push(MESSAGES.noHandlerForDispatch(d.source, d.type));
    if (issues.length === 0) this.register(listeners, issue);
    if (issues.length === 0) for (const [type, queue] of bindings) this.client.bindQueue(type, queue);
    if (issues.length > 0) throw new ChronosDiscoveryError(issues);
    for (const w of warn) this.logger.warn(w);
    const fanOuts = [...listeners].filter(([, ls]) => ls.length > 1).map(([t, ls]) => `${t}→${ls.length}`);
    this.logger.log(
      `Discovered ${scheduleCount} schedule(s) and handlers for ${listeners.size} task type(s)${fanOuts.length ? ` (fan-out: ${fanOuts.join(', ')})` : ''}`,
    );
  }

  /** Every method of a provider or controller that carries a Chronos decorator. */
  private *decoratedMethods(issues: DiscoveryIssue[]): Generator<Found> {
    const seen = new Set<unknown>();
    /** Class with Chronos decorators → the modules that made an instance of it (one is expected). */
    const hosts = new Map<object, { name: string; modules: string[] }>();
    const wrappers: InstanceWrapper[] = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    for (const wrapper of wrappers) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      // useValue/useFactory providers: the decorated class is the instance's constructor (as in @nestjs/bullmq)
      const proto: object | undefined =
        instance && typeof instance === 'object'
          ? (Object.getPrototypeOf(instance) as object)
          : typeof wrapper.metatype === 'function' && !wrapper.isNotMetatype
            ? (wrapper.metatype.prototype as object)
            : undefined;
      if (!proto || proto === Object.prototype || seen.has(instance ?? proto)) continue;
      seen.add(instance ?? proto);
      const className = (instance?.constructor as { name?: string } | undefined)?.name || wrapper.metatype?.name || String(wrapper.name);
      let staticTree: boolean | undefined;
      let again = false;
      for (const method of this.scanner.getAllMethodNames(proto)) {
        const fn = (proto as Record<string, unknown>)[method];
        const schedules = this.accessor.schedules(fn);
        const handlers = this.accessor.taskHandlers(fn);
        if (schedules.length === 0 && handlers.length === 0) continue;
        const source = sourceOf(className, method);
        if (staticTree === undefined && instance) {
          // the same class in the providers of several modules: one instance each, every one decorated
          const h = hosts.get(proto) ?? { name: className, modules: [] };
          h.modules.push((wrapper.host as { name?: string } | undefined)?.name ?? 'a module');
          hosts.set(proto, h);
          again = h.modules.length > 1;
        }
        staticTree ??= wrapper.isDependencyTreeStatic() && !wrapper.isTransient;
        if (again) break; // reported once below, not as duplicate schedule or listener names
        if (!staticTree || !instance) {
          const decorator = schedules.length ? (schedules[0].kind === 'cron' ? 'Cron' : 'Interval') : 'TaskHandler';
          issues.push({ source, message: MESSAGES.requestScoped(source, decorator) });
          continue;
        }
        yield { instance, className, method, source };
      }
    }
    for (const h of hosts.values())
      if (h.modules.length > 1) issues.push({ source: h.name, message: MESSAGES.providedTwice(h.name, h.modules) });
  }

  /** Builds (decorator-options.ts) and declares the schedule of a `@Cron`/`@Interval` method. */
  private schedule(
    f: Found,
    meta: ScheduleMetadata,
    issue: (source: string, message: string, cause?: unknown) => void,
  ): { def: ScheduleDefinition; dispatch: boolean } | undefined {
    const def = scheduleOf(f, meta, this.options, issue);
    if (!def) return undefined;
    const o = meta.options ?? {};
    const name = def.name;
    const sources = this.scheduleSources.get(name);
    this.scheduleSources.set(name, [...(sources ?? []), f.source]);
    if (sources) return undefined; // reported with every source once all are known
    try {
      if (o.disabled) {
        // not declared here, but still checked
        validateScheduleName(name);
        specOf(def, this.options.timeZone);
      } else {
        this.scheduler.register(def, f.source);
      }
    } catch (err) {
      issue(f.source, MESSAGES.invalidSchedule(f.source, (err as Error).message), err);
      return undefined;
    }
    return { def, dispatch: o.dispatch !== undefined };
  }

  /** Builds the listener of a `@TaskHandler` method. */
  private handler(
    f: Found,
    meta: TaskHandlerMetadata,
    invoke: (task: Task) => unknown,
    issue: (source: string, message: string) => void,
  ): Listener | undefined {
    const o = meta.options ?? {};
    let ok = true;
    for (const key of Object.keys(o)) {
      if (!HANDLER_OPTION_KEYS.has(key)) {
        const hint = Object.hasOwn(HANDLER_NOT_ACCEPTED, key) ? `: ${HANDLER_NOT_ACCEPTED[key]}` : '';
        issue(f.source, MESSAGES.invalidOption(f.source, 'TaskHandler', `option "${key}" is not supported${hint}`));
        ok = false;
      }
    }
    const type = resolveType(meta.type);
    if (!type || type.length > 200) {
      issue(f.source, MESSAGES.invalidType(f.source, meta.type));
      return undefined;
    }
    const name = o.name ?? `${f.className}.${f.method}`;
    if (typeof name !== 'string' || !/^[^\s#]{1,200}$/.test(name)) {
      issue(
        f.source,
        MESSAGES.invalidOption(
          f.source,
          'TaskHandler',
          `name: expected 1-200 characters without spaces or '#', got ${JSON.stringify(name)}`,
        ),
      );
      ok = false;
    }
    if (o.backoff !== undefined && typeof o.backoff !== 'function') {
      issue(f.source, MESSAGES.invalidOption(f.source, 'TaskHandler', 'backoff: expected a function (retried, error, task) => ms'));
      ok = false;
    }
    const payloadClass = typeof meta.type === 'function' ? (meta.type as PayloadClass) : undefined;
    const queue = o.queue ?? (payloadClass ? queueOf(payloadClass) : undefined);
    const badQueue = queue === undefined ? undefined : nameProblem('queue', queue);
    if (badQueue) {
      issue(f.source, MESSAGES.invalidOption(f.source, 'TaskHandler', badQueue));
      ok = false;
    } else if (queue !== undefined) this.worker.addQueue(queue, f.source);
    if (!ok) return undefined;
    return { type, name, source: f.source, invoke, payloadClass, queue, backoff: o.backoff };
  }

  /** Registers the handlers: one per type, or a dispatcher plus one child handler per listener (fan-out). */
  private register(listeners: Map<string, Listener[]>, issue: (source: string, message: string, cause?: unknown) => void): void {
    const mux = this.worker.mux;
    const handle = (type: string, fn: (task: Task) => unknown, l: Pick<Listener, 'source' | 'backoff'>) => {
      try {
        mux.handle(type, fn, { source: l.source, ...(l.backoff ? { backoff: l.backoff } : {}) });
      } catch (err) {
        issue(l.source, `${l.source}: ${(err as Error).message}`, err);
      }
    };
    for (const [type, ls] of listeners) {
      if (ls.length === 1) {
        handle(type, directHandler(ls[0]), ls[0]);
        continue;
      }
      handle(type, dispatcher(this.client, type, ls), { source: `fan-out of ${ls.map((l) => l.source).join(', ')}` });
      for (const l of ls) handle(childType(type, l.name), childHandler(l), l);
    }
  }
}
