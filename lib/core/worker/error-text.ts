// How a handler's failure is told: as text for the task's record and messages, and whether it may be retried.
import { inspect } from 'node:util';
import { cutText, wellFormed } from '../runtime/unicode.js';

/**
 * An error as stored with a failed task (meta `le`): its stack (or name and message), or the thrown
 * value as text; at most 4,000 UTF-16 code units and `…`, cut between characters, and each lone
 * surrogate of the error's own text as U+FFFD. The meta is JSON that Redis's scripts decode (retry of
 * a dead task, reclaim of a crashed worker's task), and cjson refuses the `\udXXX` escape
 * `JSON.stringify` writes for a lone surrogate: a cut inside a surrogate pair made the whole meta
 * unreadable there, and the task lost its retry budget, timeout and group (trial 24).
 */
export function errorText(err: unknown): string {
  const text = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : thrownText(err);
  return wellFormed(text.length > 4000 ? cutText(text, 4000) + '…' : text);
}

/**
 * A thrown value that is not an Error, as text: an object as `util.inspect` shows it (`{ code: 'E1' }`,
 * not `[object Object]`: trial 8), anything else as `String()` does.
 */
function thrownText(err: unknown): string {
  return typeof err === 'object' && err !== null ? inspect(err, { depth: 4, breakLength: Infinity }) : String(err);
}

/** The message of an error, or the value as text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : thrownText(err);
}

/** True for a `NonRetryableError` (by name, or `code: 'NON_RETRYABLE'`): the task goes to dead at once. */
export function isNonRetryable(err: unknown): boolean {
  return err instanceof Error && (err.name === 'NonRetryableError' || (err as { code?: string }).code === 'NON_RETRYABLE');
}
