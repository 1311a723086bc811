import { FailureLog, type ChronosLogger } from './logger.js';
import { engineTime } from './time.js';

/** The health of one background service. */
export interface ServiceHealth {
  /** The service's name (e.g. `fetch`, `forward`, `lease`). */
  readonly name: string;
  /** `running` while started and its last attempt succeeded, `failing` while its attempts fail, else `stopped`. */
  readonly state: 'running' | 'stopped' | 'failing';
  /** When an attempt last succeeded (epoch ms, Redis time); undefined before the first. */
  readonly lastOkAt?: number;
  /** The last error's message while failing. */
  readonly lastError?: string;
}

/**
 * A background loop of a worker server or a scheduler, all of one shape: built with an options
 * object, started and stopped by its owner (in the order of its list: stopped in reverse), and
 * asked for its health.
 */
export interface Service {
  readonly name: string;
  /** Starts the loop (resolves once it runs). */
  start(): void | Promise<void>;
  /** Stops the loop (resolves once it has ended). Idempotent. */
  stop(): void | Promise<void>;
  health(): ServiceHealth;
}

/** Tracks a service's state, its last success and its failures (logged once per run of failures). */
export class ServiceStatus {
  /** The failures of the loop (logged once per run; `backoffMs` for the next attempt). */
  readonly failures: FailureLog;
  running = false;
  lastOkAt?: number;

  constructor(
    readonly name: string,
    logger: ChronosLogger,
    what: string,
    explain?: (error: unknown) => string,
  ) {
    this.failures = new FailureLog(logger, what, explain);
  }

  /** An attempt succeeded. */
  ok(): void {
    this.lastOkAt = engineTime.now();
    this.failures.ok();
  }

  /** An attempt failed. */
  failed(err: unknown): void {
    this.failures.failed(err);
  }

  health(): ServiceHealth {
    const s = this.failures.status;
    if (!this.running) return { name: this.name, state: 'stopped', lastOkAt: this.lastOkAt };
    if (!s.ok) return { name: this.name, state: 'failing', lastOkAt: this.lastOkAt, lastError: s.lastError };
    return { name: this.name, state: 'running', lastOkAt: this.lastOkAt };
  }
}

/**
 * A job run every `intervalMs` while started, never two at once (a tick is skipped while the last
 * one is busy), or while `when()` is false. A failure is logged once per run of failures. With
 * `nextInMs`, the job instead runs again that many ms after each run ends (a job that wants its
 * next run sooner, e.g. a presence tick confirming what it saw).
 */
export class PeriodicService implements Service {
  readonly name: string;
  private readonly status: ServiceStatus;
  private timer?: NodeJS.Timeout;
  private started = false;
  /** Bumped by every start and stop: a run that ends after a stop does not chain the next one. */
  private generation = 0;

  constructor(
    private readonly o: {
      name: string;
      /** What the job does, for its failure log (e.g. `Server heartbeat`). */
      what: string;
      intervalMs: number;
      run: () => Promise<void>;
      logger: ChronosLogger;
      /** The job is skipped while this is false (its owner is stopping). */
      when: () => boolean;
      /** When given: the delay before the next run, ms, asked after each run (and before the first: `intervalMs`). */
      nextInMs?: () => number;
      /** The text of a failure for the log (FailureLog's `explain`). */
      explain?: (error: unknown) => string;
    },
  ) {
    this.name = o.name;
    this.status = new ServiceStatus(o.name, o.logger, o.what, o.explain);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.status.running = true;
    const next = this.o.nextInMs;
    if (next) {
      const generation = ++this.generation;
      const chain = (ms: number) => {
        this.timer = setTimeout(() => {
          if (!this.o.when()) return chain(this.o.intervalMs);
          void this.once().finally(() => {
            if (this.generation === generation) chain(next());
          });
        }, ms);
      };
      chain(this.o.intervalMs);
      return;
    }
    let busy = false;
    this.timer = setInterval(() => {
      if (busy || !this.o.when()) return;
      busy = true;
      void this.once().finally(() => (busy = false));
    }, this.o.intervalMs);
  }

  private once(): Promise<void> {
    return this.o.run().then(
      () => this.status.ok(),
      (err) => this.status.failed(err),
    );
  }

  stop(): void {
    this.started = false;
    this.generation++;
    clearInterval(this.timer); // clears a timeout as well
    this.timer = undefined;
    this.status.running = false;
  }

  health(): ServiceHealth {
    return this.status.health();
  }
}

/** Starts `services` in order. */
export async function startServices(services: readonly Service[]): Promise<void> {
  for (const s of services) await s.start();
}

/**
 * Stops every service at once, without waiting for any: for an owner that gave up waiting on
 * {@link stopServices} (Redis did not answer within its bound, runtime/shutdown.ts). The stops are
 * idempotent; what matters is that each loop's timers are cleared now, not behind a stop that still
 * waits on Redis (the fetch loop's, on a blocking read that a reconnecting client never settles):
 * left armed, they held the process open after its owner's stop had returned.
 */
export function haltServices(services: readonly Service[]): void {
  for (const s of services) {
    try {
      void Promise.resolve(s.stop()).catch(() => undefined);
    } catch {
      /* a synchronous failure of one stop: the others are stopped all the same */
    }
  }
}

/**
 * Stops `services` in reverse order, each one whatever the ones before it did: a stop that fails
 * (its Redis call rejected, e.g. on a connection the owner closed when Redis did not answer in time)
 * does not leave the services after it running, whose timers would hold the process open.
 * @throws the first stop's error, once every service was stopped
 */
export async function stopServices(services: readonly Service[]): Promise<void> {
  const errors: unknown[] = [];
  for (const s of [...services].reverse()) {
    try {
      await s.stop();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw errors[0];
}
