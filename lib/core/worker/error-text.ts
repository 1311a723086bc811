// How a handler's failure is told: as text for the task's record and messages, and whether it may be retried.
import { inspect } from 'node:util';
import { NonRetryableError, TaskTimeoutError } from '../runtime/errors.js';
import { cutText, wellFormed } from '../runtime/unicode.js';

/** Longest error text Chronos keeps or writes (the record's `le`, a log line's `error=`, an event's `error`), UTF-16 code units. */
const TEXT_MAX = 4000;

/** How many causes of an error its record follows (`cause` of `cause` …). */
const CAUSES_MAX = 5;

/**
 * An error as stored with a failed task (meta `le`): its stack (or name and message), then each of
 * its causes (`new Error(msg, { cause })`, up to 5, a loop not followed) as `Caused by: <its stack>`,
 * as Java prints them (a stack does not show its causes: the record kept `charge failed` and lost the
 * `ECONNREFUSED` under it: trial 33); or the thrown value as text; at most 4,000 UTF-16 code units and
 * `…`, cut between characters, and each lone surrogate of the error's own text as U+FFFD. The meta is
 * JSON that Redis's scripts decode (retry of a dead task, reclaim of a crashed worker's task), and
 * cjson refuses the `\udXXX` escape `JSON.stringify` writes for a lone surrogate: a cut inside a
 * surrogate pair made the whole meta unreadable there, and the task lost its retry budget, timeout
 * and group (trial 24).
 */
export function errorText(err: unknown): string {
  let text = oneError(err);
  const seen = new Set<unknown>([err]);
  let cause = causeOf(err);
  for (let n = 0; cause !== undefined && !seen.has(cause) && n < CAUSES_MAX && text.length <= TEXT_MAX; n++) {
    seen.add(cause);
    text += `\nCaused by: ${oneError(cause)}`;
    cause = causeOf(cause);
  }
  return bounded(text);
}

/** One error as text, without its causes: its stack when it is text, else its name and message; a thrown non-Error as {@link thrownText}. */
function oneError(err: unknown): string {
  return shown(() => {
    if (!(err instanceof Error)) return thrownText(err);
    return typeof err.stack === 'string' ? err.stack : `${err.name}: ${messageOf(err)}`;
  });
}

/**
 * What `show()` returns, or a placeholder when showing the value threw: a thrown value whose
 * `[util.inspect.custom]` or `stack`/`name` getter throws, a revoked Proxy (even `instanceof` throws
 * on it). These functions run where a failure is recorded, and an exception there rejected the
 * record's promise unhandled, which ended the worker's process (trial 33): they never throw.
 */
function shown(show: () => string): string {
  try {
    return show();
  } catch {
    return UNSHOWABLE;
  }
}

/** The text of a thrown value that cannot be shown (see {@link shown}). */
const UNSHOWABLE = '<a thrown value that cannot be shown as text: inspecting it threw>';

/** The `cause` of an Error, when it has one. */
function causeOf(err: unknown): unknown {
  try {
    return err instanceof Error ? err.cause : undefined;
  } catch {
    return undefined; // a revoked Proxy, a throwing getter: no cause to follow
  }
}

/** An Error's message as text (a message set to something else is shown as {@link thrownText} shows it). */
function messageOf(err: Error): string {
  const m: unknown = err.message;
  return typeof m === 'string' ? m : thrownText(m);
}

/** `text` cut to {@link TEXT_MAX} (`…` marks the cut), each lone surrogate as U+FFFD. */
function bounded(text: string): string {
  return wellFormed(text.length > TEXT_MAX ? cutText(text, TEXT_MAX) + '…' : text);
}

/**
 * A thrown value that is not an Error, as text: an object as `util.inspect` shows it (`{ code: 'E1' }`,
 * not `[object Object]`: trial 8), anything else as `String()` does.
 */
function thrownText(err: unknown): string {
  return typeof err === 'object' && err !== null ? inspect(err, { depth: 4, breakLength: Infinity }) : String(err);
}

/**
 * The message of an error, or the value as text, cut as {@link errorText} is (4,000 UTF-16 code units
 * and `…`): what the logs and the `task.failed` / `task.dead` events carry (a 2 MB message was written
 * whole into every retry's warning and every event, while the record kept 4,000 characters: trial 33).
 */
export function errorMessage(err: unknown): string {
  return bounded(shown(() => (err instanceof Error ? messageOf(err) : thrownText(err))));
}

/**
 * True for a `NonRetryableError`: an instance of it (a subclass with a name and a code of its own
 * included: trial 33), or by name or `code: 'NON_RETRYABLE'` (one from another copy of the package).
 * The task goes to dead at once. False when reading the value throws (see {@link shown}).
 */
export function isNonRetryable(err: unknown): boolean {
  try {
    if (err instanceof NonRetryableError) return true;
    return err instanceof Error && (err.name === 'NonRetryableError' || (err as { code?: string }).code === 'NON_RETRYABLE');
  } catch {
    return false;
  }
}

/** True for a {@link TaskTimeoutError} (the attempt's timeout elapsed); false when reading the value throws (see {@link shown}). */
export function isTimeout(err: unknown): boolean {
  try {
    return err instanceof TaskTimeoutError;
  } catch {
    return false;
  }
}
