// How much of an offending value an error message shows: a 1 MB string or a huge object given as an
// option is cut, with its length, so a refused value cannot flood a message or a log line. The
// error's own fields (`value`, `state`…) keep what they kept.

/** Most characters of a value an error message shows; a longer one is cut and its length said. */
export const SHOWN_MAX_CHARS = 300;

/**
 * The longest a cut text can be: {@link SHOWN_MAX_CHARS} and the marker `…(<length> chars)` (a length
 * below 2^53). A text up to this long is shown whole, so a value shown once (options.ts `show`) and
 * then quoted by an error's message is not cut again: a second cut would drop the first marker and
 * give the length of the shown text, not of the value.
 */
const CUT_MAX_CHARS = SHOWN_MAX_CHARS + '…( chars)'.length + String(Number.MAX_SAFE_INTEGER).length;

/** `text` as a message shows it: when longer than a cut text can be, its first {@link SHOWN_MAX_CHARS} characters and `…(<length> chars)`. */
export function cutShown(text: string): string {
  return text.length <= CUT_MAX_CHARS ? text : `${text.slice(0, SHOWN_MAX_CHARS)}…(${text.length} chars)`;
}

/** A string quoted as JSON for a message, cut as {@link cutShown} does (the length is the string's, unquoted). */
export function quoteShown(text: string): string {
  return text.length <= CUT_MAX_CHARS ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, SHOWN_MAX_CHARS))}…(${text.length} chars)`;
}

/**
 * A value as a message shows it: strings quoted, functions as 'a function', other values as JSON
 * where they have one; cut after 300 characters with the length (`"aaa…"…(1048576 chars)`, shown-text.ts).
 * A value neither JSON nor String() can print (an array nested 30,000 deep: a RangeError; an object
 * whose toString throws) is `an array (not printable)`, so that the error naming it is thrown, not
 * that RangeError (trial 45).
 */
export function show(v: unknown): string {
  if (typeof v === 'string') return quoteShown(v);
  if (typeof v === 'function') return 'a function';
  if (typeof v === 'bigint') return cutShown(`${v}n`);
  if (typeof v === 'number' || v === undefined) return String(v);
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();
  try {
    return cutShown(JSON.stringify(v) ?? String(v));
  } catch {
    try {
      return cutShown(String(v));
    } catch {
      return `${Array.isArray(v) ? 'an array' : 'a value'} (not printable)`;
    }
  }
}
