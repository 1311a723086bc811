/**
 * Well-formed text for what Redis's Lua decodes: a lone UTF-16 surrogate (a high one not followed by
 * a low one, or a low one alone) survives `JSON.stringify` as a `\udXXX` escape, which Redis's
 * cjson refuses ("invalid unicode escape code"), so a schedule definition holding one could be
 * stored but never read back, changed or removed by the registry scripts. The rule is the
 * ECMAScript one of `String.prototype.isWellFormed` (ES2024).
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** Whether `text` holds a lone surrogate (is not well-formed UTF-16). */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/**
 * A non-empty string of at most `max` characters without a lone UTF-16 surrogate (a task type, a task
 * id, a dedup key): Redis keeps text as UTF-8, so a lone surrogate came back as U+FFFD (an explicit id
 * returned changed, a type no handler matched: the task went dead) or, escaped in the meta, made it
 * unreadable to Redis's Lua.
 */
export function isIdText(v: unknown, max: number): boolean {
  return typeof v === 'string' && v.length > 0 && v.length <= max && !hasLoneSurrogate(v);
}

/** Longest task type, characters (an enqueue's and a handler's). */
export const TASK_TYPE_MAX = 200;

/** What a task type must be ({@link isIdText} of {@link TASK_TYPE_MAX}), as its messages say it. */
export const TASK_TYPE_RULE = `a non-empty string of at most ${TASK_TYPE_MAX} characters without lone surrogates`;

/**
 * `text` with each lone surrogate replaced by U+FFFD (the replacement character), as ES2024's
 * `String.prototype.toWellFormed` does; the same string when it holds none.
 */
export function wellFormed(text: string): string {
  return hasLoneSurrogate(text) ? text.replace(LONE_SURROGATES, '\ufffd') : text;
}

/**
 * `text` cut to at most `max` UTF-16 code units without splitting a surrogate pair (a pair that
 * would straddle the cut is left out whole), so the cut text is well-formed when `text` is.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const c = text.charCodeAt(max - 1);
  return text.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max);
}

/**
 * The path of the first string in `value` (a key or a value, depth first) that holds a lone
 * surrogate, as `a.b[2]` from `root`; undefined when there is none. Cycles are not followed (the
 * payload checks report them). The path is built only for a string found: a bulk call walks
 * 100,000 payloads and label sets that hold none.
 */
export function loneSurrogatePath(value: unknown, root: string): string | undefined {
  if (typeof value === 'string') return hasLoneSurrogate(value) ? root : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  const steps = lonePath(value, new Set());
  return steps === undefined ? undefined : root + steps.reverse().join('');
}

/** The steps from `value` down to the first string with a lone surrogate, innermost first; undefined when none. */
function lonePath(value: unknown, seen: Set<object>): string[] | undefined {
  if (typeof value === 'string') return hasLoneSurrogate(value) ? [] : undefined;
  if (typeof value !== 'object' || value === null || seen.has(value)) return undefined;
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = lonePath(value[i], seen);
      if (p !== undefined) return (p.push(`[${i}]`), p);
    }
    return undefined;
  }
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    if (hasLoneSurrogate(k)) return [` (the key ${JSON.stringify(k)})`];
    const p = lonePath((value as Record<string, unknown>)[k], seen);
    if (p !== undefined) return (p.push(`.${k}`), p);
  }
  return undefined;
}
