/**
 * Typed errors of Chronos. Every error names the offending value and keeps its `cause`.
 * Expected outcomes (a deduplicated enqueue, a trigger already fired) are values, not errors.
 * @publicApi
 */

/** Machine-readable codes carried by every {@link ChronosError}. */
export type ChronosErrorCode =
  | 'INVALID_PAYLOAD'
  | 'INVALID_OPTIONS'
  | 'INVALID_SCHEDULE'
  | 'CONFIG'
  | 'NON_RETRYABLE'
  | 'TASK_TIMEOUT'
  | 'TASK_NOT_FOUND'
  | 'QUEUE_NOT_FOUND'
  | 'SCHEDULE_NOT_FOUND'
  | 'DUPLICATE_SCHEDULE'
  | 'DUPLICATE_HANDLER'
  | 'NO_HANDLER'
  | 'DECODE'
  | 'REDIS_SCRIPT'
  | 'REDIS_VERSION'
  | 'REDIS_UNREACHABLE'
  | 'REDIS_CONFIG'
  | 'STATE';

/** Base class of every error Chronos throws. */
export class ChronosError extends Error {
  constructor(
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
    readonly taskType: string,
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super('INVALID_PAYLOAD', `Invalid payload for task type "${taskType}": ${problem}`, options);
  }
}

/** An enqueue or server option is invalid (names the option and the value). */
export class InvalidOptionsError extends ChronosError {
  constructor(
    readonly issues: readonly string[],
    readonly subject = 'options',
  ) {
    super(
      'INVALID_OPTIONS',
      `Invalid ${subject} (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n  - ${issues.join('\n  - ')}`,
    );
  }
}

/**
 * A schedule spec is invalid: names the schedule, the value and what is wrong.
 * Thrown at registration, never at fire time.
 */
export class InvalidScheduleError extends ChronosError {
  constructor(
    readonly schedule: string | undefined,
    readonly value: string,
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super('INVALID_SCHEDULE', `Invalid schedule${schedule ? ` "${schedule}"` : ''}: ${JSON.stringify(value)}: ${problem}`, options);
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
    readonly taskId: string,
    readonly timeoutMs: number,
  ) {
    super('TASK_TIMEOUT', `Task ${taskId} timed out after ${timeoutMs} ms`);
  }
}

/** A stream entry could not be decoded into a task (bad JSON, a missing field). Never retried. */
export class TaskDecodeError extends ChronosError {
  constructor(
    readonly entryId: string,
    problem: string,
  ) {
    super('DECODE', `${problem} (stream entry ${entryId})`);
  }
}

/** No handler is registered for a task's type on the server that fetched it. */
export class HandlerNotFoundError extends ChronosError {
  constructor(
    readonly taskType: string,
    readonly entryId?: string,
  ) {
    super('NO_HANDLER', `no handler for task type "${taskType}"${entryId ? ` (stream entry ${entryId})` : ''}`);
  }
}

/** A handler for this task type is already registered. */
export class DuplicateHandlerError extends ChronosError {
  constructor(
    readonly taskType: string,
    readonly source?: string,
  ) {
    super('DUPLICATE_HANDLER', `A handler for task type "${taskType}" is already registered${source ? ` (${source})` : ''}`);
  }
}

/** A schedule with this name is already registered. */
export class DuplicateScheduleError extends ChronosError {
  constructor(
    readonly schedule: string,
    readonly source?: string,
  ) {
    super('DUPLICATE_SCHEDULE', `A schedule named "${schedule}" is already registered${source ? ` (${source})` : ''}`);
  }
}

/** No task with this id in the given queue and state. */
export class TaskNotFoundError extends ChronosError {
  constructor(
    readonly queue: string,
    readonly taskId: string,
  ) {
    super('TASK_NOT_FOUND', `Task ${taskId} not found in queue "${queue}"`);
  }
}

/** No schedule with this name. */
export class ScheduleNotFoundError extends ChronosError {
  constructor(readonly schedule: string) {
    super('SCHEDULE_NOT_FOUND', `Schedule "${schedule}" not found`);
  }
}

/** A Lua script returned an error reply; carries the script name and the reply. */
export class RedisScriptError extends ChronosError {
  constructor(
    readonly script: string,
    readonly reply: string,
    options?: ErrorOptions,
  ) {
    super('REDIS_SCRIPT', `Redis script ${script} failed: ${reply}`, options);
  }
}

/** The Redis server is older than Chronos needs (6.2, for XAUTOCLAIM and GETDEL). */
export class RedisVersionError extends ChronosError {
  constructor(
    readonly version: string,
    readonly where: string,
  ) {
    super('REDIS_VERSION', `Redis ${version} at ${where} is too old: Chronos needs Redis >= 6.2 (XAUTOCLAIM)`);
  }
}

/** Redis did not answer at start (wrong address, down, auth). Names the address, never a password. */
export class RedisUnreachableError extends ChronosError {
  constructor(
    readonly where: string,
    readonly lastError: string,
    readonly timeoutMs: number,
    options?: ErrorOptions,
  ) {
    super(
      'REDIS_UNREACHABLE',
      `Redis at ${where} did not answer within ${timeoutMs} ms (last error: ${lastError}). Check the connection option (REDIS_URL) and that Redis is running.`,
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
    readonly policy: string,
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
