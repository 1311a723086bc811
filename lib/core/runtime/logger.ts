import { engineTime } from './time.js';
/**
 * The logging interface the engine writes to. NestJS apps get the Nest `Logger` (via `lib/nest`);
 * plain Node users get the console logger (`consoleLogger`) or pass their own. Messages are a short sentence then
 * key=value pairs; payloads are never logged.
 * @publicApi
 */
export interface ChronosLogger {
  /** A normal lifecycle message (started, stopped, recovered, leadership acquired). */
  log(message: string): void;
  /** Something went wrong but was handled: a retry scheduled, a trigger skipped, leadership lost. */
  warn(message: string): void;
  /**
   * A failure that needs attention (a task dead, a loop failing); `error` is the thrown value, when
   * there is one, for its stack.
   */
  error(message: string, error?: unknown): void;
  /** Detail for troubleshooting; optional (omit it to drop debug output). */
  debug?(message: string): void;
}

/** A logger that drops every message (what `logger: false` gives). */
export const silentLogger: ChronosLogger = Object.freeze({ log() {}, warn() {}, error() {}, debug() {} });

/**
 * The logger a `logger` option means: `false` → {@link silentLogger}, absent → {@link consoleLogger}
 * with `context`, else the one given (checked by `OptionProblems.logger` first).
 */
export function resolveLogger(option: ChronosLogger | false | undefined, context: string): ChronosLogger {
  return option === false ? silentLogger : (option ?? consoleLogger(context));
}

/** A logger writing `[Chronos] <context> <message>` lines to stdout/stderr. */
export function consoleLogger(context: string): ChronosLogger {
  const line = (level: string, message: string) => `${new Date().toISOString()} ${level} [Chronos] ${context}: ${message}\n`;
  return {
    log: (m) => void process.stdout.write(line('LOG', m)),
    warn: (m) => void process.stderr.write(line('WARN', m)),
    error: (m, e) => void process.stderr.write(line('ERROR', m) + (e instanceof Error && e.stack ? e.stack + '\n' : '')),
    debug: () => {},
  };
}

/**
 * Logs a failing loop's error once per run of failures (not once per poll), and says when it
 * recovers. Loops never die: they catch, log through this, back off and continue.
 */
export class FailureLog {
  private failing = false;
  private count = 0;
  private since = 0;
  private lastError = '';

  /**
   * @param explain the text of an error for the log and `lastError` (e.g. naming the Redis address
   * and its last connection error: connection.ts explainFailure); the message alone by default.
   */
  constructor(
    private readonly logger: ChronosLogger,
    private readonly what: string,
    private readonly explain: (error: unknown) => string = (error) => (error as Error)?.message ?? String(error),
  ) {}

  /** Records one failed attempt of the loop; logs `error` only on the first failure of a run. */
  failed(error: unknown): void {
    this.count++;
    this.lastError = this.explain(error);
    if (!this.failing) {
      this.failing = true;
      this.since = engineTime.now();
      this.logger.error(`${this.what} failed; retrying with backoff (error=${this.lastError})`, error);
    }
  }

  /** Records a successful attempt; logs the recovery (with the count of failed attempts) when the loop was failing. */
  ok(): void {
    if (this.failing) {
      this.logger.log(`${this.what} recovered after ${this.count} failed attempt${this.count === 1 ? '' : 's'}`);
      this.failing = false;
      this.count = 0;
    }
  }

  /** `{ ok: true }`, or since when (epoch ms) the loop has been failing and its last error. */
  get status():
    | {
        /** The loop's last attempt succeeded (or it never failed). */
        ok: true;
      }
    | {
        /** The loop is failing: its attempts fail and it backs off between them. */
        ok: false;
        /** When the current run of failures began, epoch ms. */
        failingSince: number;
        /** Message of the latest error. */
        lastError: string;
      } {
    return this.failing ? { ok: false, failingSince: this.since, lastError: this.lastError } : { ok: true };
  }

  /** Backoff before the next attempt, ms: 100, 200, 400 … capped at 5 s. */
  get backoffMs(): number {
    return Math.min(5_000, 100 * 2 ** Math.min(this.count, 6));
  }
}
