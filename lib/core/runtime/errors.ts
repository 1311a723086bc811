/**
 * Typed errors of Chronos. Every error names the offending value and keeps its `cause`.
 * Expected outcomes (a deduplicated enqueue, a trigger already fired) are values, not errors.
 * @publicApi
 */
import { foreignReply } from './foreign-reply.js';
import { cutShown, quoteShown, show } from './shown-text.js';

/** Machine-readable codes carried by every {@link ChronosError}. */
export type ChronosErrorCode =
  | 'INVALID_PAYLOAD'
  | 'INVALID_OPTIONS'
  | 'INVALID_SCHEDULE'
  | 'CONFIG'
  | 'NON_RETRYABLE'
  | 'TASK_TIMEOUT'
  | 'TASK_NOT_FOUND'
  | 'TASK_CANCELLED'
  | 'TASK_SUPERSEDED'
  | 'INVALID_TASK_STATE'
  | 'QUEUE_NOT_FOUND'
  | 'SCHEDULE_NOT_FOUND'
  | 'DUPLICATE_SCHEDULE'
  | 'DUPLICATE_HANDLER'
  | 'NO_HANDLER'
  | 'DECODE'
  | 'REDIS_SCRIPT'
  | 'REDIS_VERSION'
  | 'REDIS_UNREACHABLE'
  | 'REDIS_UNAVAILABLE'
  | 'REDIS_CONFIG'
  | 'STATE';

/** Base class of every error Chronos throws. */
export class ChronosError extends Error {
  constructor(
    /** Machine-readable code of the failure, stable across releases (e.g. `TASK_NOT_FOUND`); branch on it, not on the message. */
    readonly code: ChronosErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A task payload is not JSON-serialisable (circular, BigInt, function, symbol, undefined at top level). */
export class InvalidPayloadError extends ChronosError {
  constructor(
    /** Type of the task whose payload was rejected. */
    readonly taskType: string,
    /** What is wrong with the payload, e.g. `BigInt value can't be serialized` (the serialiser's own words). */
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super('INVALID_PAYLOAD', `Invalid payload for task type "${taskType}": ${problem}`, options);
  }
}

/** An enqueue or server option is invalid (names the option and the value). */
export class InvalidOptionsError extends ChronosError {
  constructor(
    /** Every problem found, one line each, naming the option and the value (e.g. `limit: expected an integer 1-500, got 0`). */
    readonly issues: readonly string[],
    /** What was being validated, e.g. `client options`, `server options`, `enqueue options`, `queue name`; default `options`. */
    readonly subject = 'options',
    options?: ErrorOptions,
  ) {
    super(
      'INVALID_OPTIONS',
      `Invalid ${subject} (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n  - ${issues.join('\n  - ')}`,
      options,
    );
  }
}

/**
 * A schedule spec is invalid: names the schedule, the value and what is wrong, in one form:
 * `Invalid schedule "<name>": "<value>": <problem>`, or `Invalid schedule "<value>": <problem>` when
 * the name itself is the bad value (or there is no name). A value that is not a string where the
 * name would be (a bulk call's `null` item, `removeSchedule(5)`) is not quoted as a name: the
 * message names where it was and what it is, `Invalid schedule definition [3] of the call:
 * expected a schedule definition object …, got null`. Thrown at registration, never at fire time.
 */
export class InvalidScheduleError extends ChronosError {
  /** The offending value as text: the expression, duration, time zone or name that was rejected (a value that is no string: as JSON). */
  readonly value: string;
  /** The value as given, for {@link InvalidScheduleError.at}. */
  readonly #given: unknown;
  /** Whether the value is shown after "got" (options.got), kept for {@link InvalidScheduleError.at}. */
  readonly #got: boolean;

  constructor(
    /** Name of the schedule, or `undefined` when the name itself is invalid. */
    readonly schedule: string | undefined,
    /** The offending value: text (the expression, duration, time zone or name), or the value itself when it is no string. */
    value: unknown,
    /** What is wrong with the value, with a hint of what is expected. */
    readonly problem: string,
    options?: ErrorOptions & {
      /** Index of the definition in the array of a bulk call (`addSchedules`, `upsertSchedules`, `removeSchedules`). */
      index?: number;
      /** What the array of that call holds, for the message: `definition` (the default) or `name` (`removeSchedules`). */
      item?: 'definition' | 'name';
      /** The value is not where a name would be (a definition that is no object): shown after "got", never as the subject. */
      got?: boolean;
    },
  ) {
    const item = options?.item ?? 'definition';
    const at = options?.index === undefined ? '' : ` (${item} [${options.index}] of the call)`;
    let message: string;
    if (typeof value === 'string' && !(options?.got && !schedule)) {
      const shown = quoteShown(value); // cut after 300 chars; `value` keeps it whole
      message = `Invalid schedule ${schedule ? `"${schedule}"${at}: ${shown}` : `${shown}${at}`}: ${problem}`;
    } else if (schedule) {
      message = `Invalid schedule "${schedule}"${at}: ${quoteShown(show(value))}: ${problem}`; // the value's text, quoted as before
    } else {
      // no name and a value that is no text: the place of the value, then the value after "got" (never quoted as a name)
      const where = options?.index === undefined ? '' : ` ${item} [${options.index}] of the call`;
      message = `Invalid schedule${where}: ${problem}, got ${show(value)}`;
    }
    super('INVALID_SCHEDULE', message, options);
    this.value = typeof value === 'string' ? value : show(value);
    this.#given = value;
    this.#got = options?.got === true;
    this.index = options?.index;
  }

  /** Index of the offending definition in the array of a bulk call; undefined outside one. */
  readonly index?: number;

  /**
   * The same error, at `index` of a bulk call's array (the message names the index).
   * @internal
   */
  static at(err: InvalidScheduleError, index: number, item: 'definition' | 'name'): InvalidScheduleError {
    return new InvalidScheduleError(err.schedule, err.#given, err.problem, { cause: err.cause ?? err, index, item, got: err.#got });
  }
}

/**
 * Thrown by a handler to send its task straight to the dead-letter set (state `dead`) without
 * using the rest of its retry budget (asynq's SkipRetry, BullMQ's UnrecoverableError).
 */
export class NonRetryableError extends ChronosError {
  constructor(message: string, options?: ErrorOptions) {
    super('NON_RETRYABLE', message, options);
  }
}

/** The reason a task's AbortSignal fired and its failure when its `timeout` (ms) elapsed. */
export class TaskTimeoutError extends ChronosError {
  constructor(
    /** Id of the task that timed out. */
    readonly taskId: string,
    /** The task's timeout that elapsed, in ms. */
    readonly timeoutMs: number,
  ) {
    super('TASK_TIMEOUT', `Task ${taskId} timed out after ${timeoutMs} ms`);
  }
}

/** A stream entry could not be decoded into a task (bad JSON, a missing field). Never retried. */
export class TaskDecodeError extends ChronosError {
  constructor(
    /** Redis Stream entry id (`<ms>-<seq>`) of the entry that could not be decoded. */
    readonly entryId: string,
    problem: string,
  ) {
    super('DECODE', `${problem} (stream entry ${entryId})`);
  }
}

/** No handler is registered for a task's type on the server that fetched it. */
export class HandlerNotFoundError extends ChronosError {
  constructor(
    /** The task type no handler is registered for. */
    readonly taskType: string,
    /** Redis Stream entry id (`<ms>-<seq>`) of the task, when the error comes from a fetched task. */
    readonly entryId?: string,
  ) {
    super('NO_HANDLER', `no handler for task type "${taskType}"${entryId ? ` (stream entry ${entryId})` : ''}`);
  }
}

/** A handler for this task type is already registered. */
export class DuplicateHandlerError extends ChronosError {
  constructor(
    /** The task type registered twice. */
    readonly taskType: string,
    /** Where the registrations come from, when known (e.g. `A#handle and B#handle` for decorated methods). */
    readonly source?: string,
  ) {
    super('DUPLICATE_HANDLER', `A handler for task type "${taskType}" is already registered${source ? ` (${source})` : ''}`);
  }
}

/** A schedule with this name is already registered, or is given twice in one bulk call (`indexes`). */
export class DuplicateScheduleError extends ChronosError {
  /** The two positions of the name in the array of one bulk call (`addSchedules`, `upsertSchedules`, `removeSchedules`). */
  readonly indexes?: readonly [number, number];

  constructor(
    /** The schedule name declared twice. */
    readonly schedule: string,
    /** Where the declarations come from, when known (e.g. `A#tick and B#tick` for decorated methods, or the bulk call's name). */
    readonly source?: string,
    options?: {
      /** The two positions of the name in the array of one bulk call. */
      indexes?: readonly [number, number];
    },
  ) {
    const i = options?.indexes;
    super(
      'DUPLICATE_SCHEDULE',
      i
        ? `A schedule named "${schedule}" is given twice in one call${source ? ` to ${source}` : ''}: at [${i[0]}] and [${i[1]}]`
        : `A schedule named "${schedule}" is already registered${source ? ` (${source})` : ''}`,
    );
    this.indexes = i;
  }
}

/** No task with this id in the given queue (and state, when one is named); `queue` is '*' for every queue. */
export class TaskNotFoundError extends ChronosError {
  constructor(
    /** Queue that was searched, or `'*'` when every queue was. */
    readonly queue: string,
    /** The task id that was not found. */
    readonly taskId: string,
    /** The state the task was looked for in (e.g. `dead`, `scheduled`), when the lookup named one. */
    readonly state?: string,
    /** The state the task is in, when it was found in another one than `state` (e.g. `pending`). */
    readonly actualState?: string,
  ) {
    const where = queue === '*' ? 'in any queue' : `in queue "${queue}"`;
    const states = state ? ` (state ${state}${actualState ? `; it is ${actualState}` : ''})` : '';
    super('TASK_NOT_FOUND', `Task ${taskId} not found ${where}${states}`);
  }
}

/** No queue with this name is known in the namespace (never enqueued to, served or scheduled). */
export class QueueNotFoundError extends ChronosError {
  /** @param queue The queue name that was asked for. */
  constructor(readonly queue: string) {
    super('QUEUE_NOT_FOUND', `Queue "${queue}" not found`);
  }
}

/** A task state the Inspector does not know: names the value and the valid states. */
export class InvalidTaskStateError extends ChronosError {
  constructor(
    /** The value given as a state, as received (it may not even be a string). */
    readonly state: unknown,
    /** The states that would have been accepted. */
    readonly validStates: readonly string[],
    /** What kind of state was expected, for the message; default `task state`. */
    readonly what = 'task state',
  ) {
    const shown = typeof state === 'string' ? quoteShown(state) : cutShown(String(JSON.stringify(state)));
    super('INVALID_TASK_STATE', `Unknown ${what} ${shown}: expected one of ${validStates.join(', ')}`);
  }
}

/**
 * The reason an operator's cancel gives a running task's AbortSignal (`task.signal.reason`). The
 * task was already dead-lettered (reason `cancelled`) when the signal aborts; whatever the handler
 * does next is ignored.
 */
export class TaskCancelledError extends ChronosError {
  constructor(
    /** Id of the cancelled task. */
    readonly taskId: string,
    /** Who cancelled it: the `actor` the operator gave to the Inspector or CLI (e.g. a user name). */
    readonly actor: string,
  ) {
    super('TASK_CANCELLED', `Task ${taskId} was cancelled by ${actor}`);
  }
}

/**
 * The reason a task's AbortSignal fired when a newer trigger of its schedule superseded it (overlap
 * policy `cancel-previous`, Temporal's CancelOther): the new trigger's task was enqueued while this
 * one was live and now holds the schedule's overlap marker. Not a failure: whatever the handler does
 * next, the task leaves the queue like a success (acked) and is never retried; a handler that
 * ignores its signal runs on beside the new one. Check `signal.reason instanceof TaskSupersededError`.
 */
export class TaskSupersededError extends ChronosError {
  constructor(
    /** Name of the schedule whose trigger superseded the task. */
    readonly schedule: string,
    /** Id of the superseded task (`<schedule>:<trigger-unix>`). */
    readonly taskId: string,
    /** Task id of the superseding trigger, its dedup key `<schedule>:<trigger-unix>` (unix seconds). */
    readonly supersededBy: string,
  ) {
    super(
      'TASK_SUPERSEDED',
      `Task ${taskId} was superseded by ${supersededBy}, the next trigger of schedule "${schedule}" (overlap: 'cancel-previous')`,
    );
  }
}

/** No schedule with this name. */
export class ScheduleNotFoundError extends ChronosError {
  /** @param schedule The schedule name that was asked for. */
  constructor(readonly schedule: string) {
    super('SCHEDULE_NOT_FOUND', `Schedule "${schedule}" not found`);
  }
}

/** A Lua script returned an error reply; carries the script name and the reply. */
export class RedisScriptError extends ChronosError {
  constructor(
    /** Name of the Chronos Lua script that failed (e.g. `enqueue`, `ack`). */
    readonly script: string,
    /** The error reply Redis returned, or a description of the unexpected reply code. */
    readonly reply: string,
    options?: ErrorOptions,
  ) {
    super('REDIS_SCRIPT', `Redis script ${script} failed: ${reply}`, options);
  }
}

/** The Redis server is older than Chronos needs (6.2, for XAUTOCLAIM and GETDEL). */
export class RedisVersionError extends ChronosError {
  constructor(
    /** The `redis_version` the server reported (`0` when it reported none). */
    readonly version: string,
    /** The server's address as `host:port/db` (or `cluster`), never the password. */
    readonly where: string,
  ) {
    super('REDIS_VERSION', `Redis ${version} at ${where} is too old: Chronos needs Redis >= 6.2 (XAUTOCLAIM)`);
  }
}

/**
 * Redis did not answer at start (wrong address, down, auth). Names the address, never a password, the last
 * connection error, and how long Chronos waited: the bound (`within 10000 ms`), or less when the client gave up
 * first (`the client gave up after 312 ms`).
 */
export class RedisUnreachableError extends ChronosError {
  /** How long Chronos waited before it gave up, in ms: `timeoutMs` when the wait ran out, less when the client stopped retrying first. */
  readonly waitedMs: number;

  constructor(
    /** The server's address as `host:port/db` (or `cluster`), never the password. */
    readonly where: string,
    /** Message of the last connection error the client saw (e.g. `connect ECONNREFUSED 127.0.0.1:6379`), or `no answer`. */
    readonly lastError: string,
    /** How long Chronos would wait for an answer (the bound), in ms. */
    readonly timeoutMs: number,
    options?: ErrorOptions & {
      /** How long it waited, in ms, when the client gave up before `timeoutMs` (a one-shot CLI connects twice at most). */
      waitedMs?: number;
    },
  ) {
    const foreign = foreignReply(lastError);
    const waited = options?.waitedMs !== undefined && options.waitedMs < timeoutMs ? options.waitedMs : timeoutMs;
    const how =
      waited < timeoutMs
        ? `(the client gave up after ${waited} ms; last error: ${lastError})`
        : `within ${timeoutMs} ms (last error: ${lastError})`;
    super(
      'REDIS_UNREACHABLE',
      foreign !== undefined
        ? `${where} is not Redis: it answered with ${JSON.stringify(foreign)}, not the Redis protocol (${foreign === 'H' ? 'an HTTP server? ' : ''}check the address: REDIS_URL / --redis-url).`
        : `Redis at ${where} did not answer ${how}. Check the connection option (REDIS_URL) and that Redis is running.`,
      options,
    );
    this.waitedMs = waited;
  }
}

/**
 * An enqueue could not be written because Redis did not serve its queue within the client's retry
 * bound: on Redis Cluster, the master of the queue's slot was unreachable (dead, its replica not
 * promoted yet) or the cluster was down (`CLUSTERDOWN`) for longer than the failover bound
 * (`CLUSTER_FAILOVER_BOUND_MS`, 10 s with the options Chronos sets); on one Redis or Sentinel, the
 * client's `maxRetriesPerRequest` reconnects ran out. The task was not enqueued — unless the
 * connection closed after Redis ran the write, as with any request whose reply is lost; enqueue it
 * again (with a `taskId` or `dedupKey` to make that safe). Names the queue and the cause.
 */
export class RedisUnavailableError extends ChronosError {
  constructor(
    /** The queue the task was for. */
    readonly queue: string,
    /** Message of the client's error (e.g. `Too many Cluster redirections. Last error: CLUSTERDOWN The cluster is down`). */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(
      'REDIS_UNAVAILABLE',
      `Could not enqueue to queue "${queue}": Redis did not serve it within the client's retry bound (${reason})`,
      options,
    );
  }
}

/**
 * Redis may evict keys (its `maxmemory-policy` is not `noeviction`) and the `requireNoEviction`
 * option asks to refuse that at start. Names the policy and the address.
 */
export class RedisEvictionPolicyError extends ChronosError {
  constructor(
    /** The server's `maxmemory-policy` (e.g. `allkeys-lru`). */
    readonly policy: string,
    /** The address, `host:port/db` (never a password). */
    readonly where: string,
  ) {
    super(
      'REDIS_CONFIG',
      `Redis at ${where}: maxmemory-policy is ${policy}, and requireNoEviction is set. Chronos needs noeviction: an ` +
        'evicted lease, dedup key or stream breaks its guarantees. Run CONFIG SET maxmemory-policy noeviction, or unset ' +
        'requireNoEviction to start with a warning.',
    );
  }
}

/** An operation is not valid in the current lifecycle state (e.g. registering after start). */
export class ChronosStateError extends ChronosError {
  constructor(message: string) {
    super('STATE', message);
  }
}
