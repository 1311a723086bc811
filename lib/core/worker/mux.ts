import { DuplicateHandlerError, InvalidOptionsError } from '../runtime/errors.js';
import { OptionProblems, show } from '../runtime/options.js';
import { HANDLER_KEY_HINTS } from '../runtime/migrant-hints.js';
import { isIdText, TASK_TYPE_MAX, TASK_TYPE_RULE } from '../runtime/unicode.js';
import type { BackoffFn, TaskHandlerFn } from '../queue/task.js';

/** Options of one handler registration. @publicApi */
export interface HandlerOptions {
  /** Backoff of this type's retries; overrides the server's. */
  backoff?: BackoffFn;
  /** Where the registration comes from (e.g. `EmailService#send`), for messages. */
  source?: string;
}

/** The keys of {@link HandlerOptions}: another key (a `maxRetry` or `timeout`, which are enqueue options) is refused, not ignored. */
const HANDLER_KEYS: ReadonlySet<string> = new Set(['backoff', 'source']);

/** A registered handler. */
export interface Registration {
  /** The task type the handler serves. */
  readonly type: string;
  /** The handler, called with each task of that type. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- one registry holds handlers of every payload type
  readonly fn: TaskHandlerFn<any>;
  /** The options it was registered with (backoff, source). */
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
   * @throws DuplicateHandlerError when the type already has one (naming both sources);
   * InvalidOptionsError for a type no task can have (empty, over 200 characters, or holding a lone
   * UTF-16 surrogate: enqueue refuses it), a handler that is not a function, or bad `options` (an
   * unknown key, a `backoff` that is not a function, a `source` that is not a string), naming the value.
   */
  handle<T = unknown>(type: string, fn: TaskHandlerFn<T>, options: HandlerOptions = {}): this {
    // a type no task can have (enqueue refuses it) would be a handler that never runs
    if (!isIdText(type, TASK_TYPE_MAX)) throw new InvalidOptionsError([`type: expected ${TASK_TYPE_RULE}, got ${show(type)}`], 'handler');
    if (typeof fn !== 'function') throw new InvalidOptionsError([`handler of "${type}": expected a function, got ${typeof fn}`], 'handler');
    checkHandlerOptions(type, options);
    const existing = this.handlers.get(type);
    if (existing) {
      throw new DuplicateHandlerError(type, [existing.options.source, options.source].filter(Boolean).join(' and ') || undefined);
    }
    this.handlers.set(type, { type, fn, options });
    return this;
  }

  /** The registration of a task type, or undefined when no handler is registered for it. */
  get(type: string): Registration | undefined {
    return this.handlers.get(type);
  }

  /** The task types that have a handler, in registration order. */
  types(): string[] {
    return [...this.handlers.keys()];
  }
}

/**
 * Checks a registration's options (a plain-JavaScript caller's typo would otherwise be ignored: a
 * `backoff: 5` failed only at the first retry, a `maxRetry: 3` silently left the budget at 25).
 * @throws InvalidOptionsError listing every problem.
 */
function checkHandlerOptions(type: string, options: unknown): void {
  const p = new OptionProblems();
  if (typeof options !== 'object' || options === null) p.expected('options', 'an object { backoff?, source? }', options);
  else {
    const o = options as Record<string, unknown>;
    p.unknownKeys(o, HANDLER_KEYS, '', HANDLER_KEY_HINTS);
    p.fn('backoff', o.backoff, '(retried, error, task) => ms');
    if (o.source !== undefined && typeof o.source !== 'string') p.expected('source', 'a string', o.source);
  }
  p.throwIfAny(`handler options of "${type}"`);
}
