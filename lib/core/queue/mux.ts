import { DuplicateHandlerError, InvalidOptionsError } from '../errors.js';
import type { BackoffFn, TaskHandlerFn } from './task.js';

/** Options of one handler registration. @publicApi */
export interface HandlerOptions {
  /** Backoff of this type's retries; overrides the server's. */
  backoff?: BackoffFn;
  /** Where the registration comes from (e.g. `EmailService#send`), for messages. */
  source?: string;
}

/** A registered handler. */
export interface Registration {
  readonly type: string;
  readonly fn: TaskHandlerFn<any>;
  readonly options: HandlerOptions;
}

/**
 * The handler registry ("mux"): task type → handler. One handler per type.
 * @publicApi
 */
export class Mux {
  private readonly handlers = new Map<string, Registration>();

  /**
   * Registers the handler of a task type.
   * @throws DuplicateHandlerError when the type already has one (naming both sources).
   */
  handle<T = unknown>(type: string, fn: TaskHandlerFn<T>, options: HandlerOptions = {}): this {
    if (typeof type !== 'string' || type.length === 0)
      throw new InvalidOptionsError([`type: expected a non-empty string, got ${JSON.stringify(type)}`], 'handler');
    if (typeof fn !== 'function') throw new InvalidOptionsError([`handler of "${type}": expected a function, got ${typeof fn}`], 'handler');
    const existing = this.handlers.get(type);
    if (existing) {
      throw new DuplicateHandlerError(type, [existing.options.source, options.source].filter(Boolean).join(' and ') || undefined);
    }
    this.handlers.set(type, { type, fn, options });
    return this;
  }

  get(type: string): Registration | undefined {
    return this.handlers.get(type);
  }

  types(): string[] {
    return [...this.handlers.keys()];
  }
}
