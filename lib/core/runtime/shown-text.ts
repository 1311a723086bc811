// How much of an offending value an error message shows: a 1 MB string or a huge object given as an
// option is cut, with its length, so a refused value cannot flood a message or a log line. The
// error's own fields (`value`, `state`…) keep what they kept.

/** Most characters of a value an error message shows; a longer one is cut and its length said. */
export const SHOWN_MAX_CHARS = 300;

/** `text` as a message shows it: its first {@link SHOWN_MAX_CHARS} characters and `…(<length> chars)` when longer. */
export function cutShown(text: string): string {
  return text.length <= SHOWN_MAX_CHARS ? text : `${text.slice(0, SHOWN_MAX_CHARS)}…(${text.length} chars)`;
}

/** A string quoted as JSON for a message, cut as {@link cutShown} does (the length is the string's, unquoted). */
export function quoteShown(text: string): string {
  return text.length <= SHOWN_MAX_CHARS ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, SHOWN_MAX_CHARS))}…(${text.length} chars)`;
}
