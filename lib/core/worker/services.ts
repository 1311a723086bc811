import { DEFAULTS } from '../runtime/defaults.js';
import type { FailureLog } from '../runtime/logger.js';
import type { Runtime } from '../runtime/runtime.js';
import { PeriodicService, type Service, type ServiceHealth } from '../runtime/service.js';
import type { RedisClient } from '../redis/connection.js';
import { parseDueWake } from '../redis/commands/due.js';
import type { GlobalKeys } from '../redis/keys.js';
import type { Fetcher } from '../fetch/fetcher.js';
import type { Forwarder } from '../fetch/forwarder.js';
import type { Liveness } from '../recovery/liveness.js';
import { claimsEveryMs, type Recoverer } from '../recovery/recoverer.js';
import type { Slots } from '../fetch/slots.js';
import type { Wake } from '../fetch/wake.js';
import type { Heartbeat } from './heartbeat.js';
import { SAMPLE_EVERY_MS, type QueueSampler } from '../observability/queue-sampler.js';
import { listenForCancels, type CancelListener } from './cancel-listener.js';
import { supersede } from './supersede.js';
import type { ResolvedServerOptions } from './server-options.js';

/** The health of a loop whose state is `running` and whose failures are `failures`. */
function loopHealth(name: string, running: boolean, failures: FailureLog, lastOkAt?: number): ServiceHealth {
  const s = failures.status;
  if (!running) return { name, state: 'stopped', lastOkAt };
  return s.ok ? { name, state: 'running', lastOkAt } : { name, state: 'failing', lastOkAt, lastError: s.lastError };
}

/**
 * A long-running loop (`run()` returns when its owner stops running) as a service: `start()` runs
 * it, `stop()` ends it (`halt`, repeated until it ended: e.g. a blocking read that must be
 * unblocked) and resolves when it has.
 */
export class LoopService implements Service {
  readonly name: string;
  private ended?: Promise<void>;

  constructor(
    private readonly o: {
      name: string;
      loop: { run(): Promise<void>; readonly failures: FailureLog; readonly lastFetchAt?: number };
      /** Ends a wait of the loop (called until the loop has ended, every 50 ms). */
      halt?: () => void | Promise<void>;
    },
  ) {
    this.name = o.name;
  }

  start(): void {
    this.ended ??= this.o.loop.run();
  }

  async stop(): Promise<void> {
    const ended = this.ended;
    if (!ended) return;
    let done = false;
    void ended.then(
      () => (done = true),
      () => (done = true),
    );
    const halt = this.o.halt;
    if (!halt) await ended.catch(() => undefined);
    // a read sent just after an UNBLOCK would still block: repeat until the loop has ended
    else
      while (!done) {
        await halt();
        await Promise.race([ended.catch(() => undefined), new Promise((r) => setTimeout(r, 50))]);
      }
    this.ended = undefined;
  }

  health(): ServiceHealth {
    return loopHealth(this.name, this.ended !== undefined, this.o.loop.failures, this.o.loop.lastFetchAt);
  }
}

/**
 * The worker's notice subscriber (one connection): operators' cancel notices (`<ns>:cancel`), the
 * forwarder's due-time wakes (subscribed before its first round: a due time lowered after that
 * round's claim is heard) and pause changes (the paused set is read again at once).
 */
export class NoticeService implements Service {
  readonly name = 'notices';
  private listener?: CancelListener;

  constructor(
    private readonly o: {
      client: RedisClient;
      namespace: string;
      globalKeys: GlobalKeys;
      slots: Slots;
      forwarder: Forwarder;
      fetcher: Fetcher;
      runtime: Runtime;
    },
  ) {}

  async start(): Promise<void> {
    const { slots, runtime, forwarder, fetcher, globalKeys } = this.o;
    const { events } = runtime;
    const wakes = {
      channel: globalKeys.dueWake,
      onMessage: (text: string) => {
        const w = parseDueWake(text);
        if (w) forwarder.dueAt(w.queue, w.dueAt);
      },
      onResubscribed: () => forwarder.wake(),
    };
    const refreshPaused = () => void fetcher.refreshPaused().catch(() => {}); // the fallback read retries
    const pauses = { channel: globalKeys.pausedWake, onMessage: refreshPaused, onResubscribed: refreshPaused };
    this.listener = await listenForCancels(
      this.o.client,
      this.o.namespace,
      (entryId, queue) => slots.cancelled(queue, entryId),
      runtime.logger,
      (run, actor) => {
        if (events.active) events.emit({ type: 'task.cancelled', queue: run.queue, taskId: run.id, taskType: run.type, actor });
      },
      [wakes, pauses],
      (n) => {
        for (const run of slots.supersededBy(n.queue, n.schedule, n.triggerAt)) supersede(run, n.supersededBy, runtime.logger, events);
      },
    );
  }

  async stop(): Promise<void> {
    await this.listener?.close();
    this.listener = undefined;
  }

  health(): ServiceHealth {
    return { name: this.name, state: this.listener ? 'running' : 'stopped' };
  }
}

/** The parts a worker server's background services drive. */
export interface WorkerParts {
  readonly runtime: Runtime;
  readonly opts: ResolvedServerOptions;
  readonly fetcher: Fetcher;
  /** Rung at a shutdown: the fetch loop may wait for a free slot. */
  readonly fetchWake: Wake;
  readonly forwarder: Forwarder;
  readonly recoverer: Recoverer;
  readonly liveness: Liveness;
  readonly heartbeat: Heartbeat;
  /** Samples the queues' depth and latency into their counts, once a minute. */
  readonly sampler: QueueSampler;
  /** True while the server runs: periodic jobs are skipped otherwise. */
  readonly isRunning: () => boolean;
  /** The text of a job's failure for its log (names the Redis and its last connection error). */
  readonly explain: (error: unknown) => string;
}

/**
 * The background loops of a worker server, in start order (a server stops them in reverse: the
 * fetch loop first). Every job but the two loops is periodic: skipped while the previous run is busy.
 */
export function workerServices(p: WorkerParts): Service[] {
  const { runtime, opts, fetcher, forwarder, recoverer, liveness, heartbeat, isRunning, explain } = p;
  const logger = runtime.logger;
  const every = (name: string, intervalMs: number, what: string, run: () => Promise<void>, nextInMs?: () => number) =>
    new PeriodicService({ name, what, intervalMs, run, logger, when: isRunning, nextInMs, explain });
  let sweepAll = true;
  return [
    every('heartbeat', DEFAULTS.serverHeartbeatMs, 'Server heartbeat', () => heartbeat.beat()),
    // the presence tick: every liveness.tickMs, sooner to confirm a silent channel (liveness.nextTickInMs)
    every(
      'liveness',
      liveness.tickMs,
      'Checking the liveness of worker servers',
      async () => {
        const view = await liveness.tick();
        sweepAll = view.sweepAll;
        recoverer.stall.saw(view.lateMs, 'presence tick'); // a stalled Redis: the sweep waits for live holders' renewals
        for (const id of view.dead) {
          const count = await recoverer.reclaimFrom(id, `from server ${id}, whose process is gone`);
          if (count > 0) fetcher.freed(fetcher.queueNames()); // slots of fleet-wide limits freed: tell waiting workers
          liveness.handled(id);
          await heartbeat.forget(id);
          if (runtime.signals.active) runtime.signals.emit('reclaimed', { from: id, count });
        }
      },
      () => liveness.nextTickInMs(),
    ),
    // not during the reconnect grace (liveness.settling): an entry's idle time then counts the outage, while its holder reconnects
    every('recover', opts.recoverInterval, 'Recovering idle tasks', async () => {
      if (liveness.settling) return;
      const freed = await recoverer.recover(sweepAll);
      // slots of fleet-wide limits freed (a stopped worker's tasks reclaimed): tell waiting workers, as a reclaim by liveness does (trial 28)
      if (freed.length > 0) fetcher.freed(freed);
    }),
    every('claims', claimsEveryMs(opts.visibilityTimeout), 'Extending claims', () => recoverer.extendClaims()),
    every('paused', DEFAULTS.pausedPollMs, 'Reading paused queues', () => fetcher.refreshPaused()),
    every('gone-consumers', 5 * 60_000, 'Deleting consumers of gone servers', () => recoverer.deleteGoneConsumers()),
    every('queue-samples', SAMPLE_EVERY_MS, 'Sampling the depth and latency of queues', () => p.sampler.sample()),
    new LoopService({ name: 'forward', loop: forwarder }),
    new LoopService({
      name: 'fetch',
      loop: fetcher,
      halt: () => {
        p.fetchWake.wake();
        return fetcher.unblock();
      },
    }),
  ];
}
