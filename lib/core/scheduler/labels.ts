/**
 * The rules of a schedule's labels (`ScheduleDefinition.labels`): one checker of them for a
 * definition (addSchedule & co.) and for a label filter (`Inspector.schedulePage`, the CLI's
 * `--label`, the console's `label=`), so a filter no schedule could ever match is an error naming
 * its value, never an empty page.
 */
import { InvalidScheduleError } from '../runtime/errors.js';
import { show } from '../runtime/options.js';
import { isPlainObject } from '../queue/payload-codec.js';

/** Limits of a schedule's labels: most labels, longest key and value (characters). */
export const LABEL_LIMITS = { count: 16, keyLength: 64, valueLength: 128 } as const;

/** A label key: 1 to 64 characters of `[A-Za-z0-9_./-]`, but not {@link RESERVED_KEY}. */
const LABEL_KEY = /^[A-Za-z0-9_./-]{1,64}$/;
/**
 * The one key of that alphabet a JavaScript object cannot be given by assignment: `o['__proto__'] = 'x'`
 * sets nothing. Refused, so that it is never dropped from a definition, nor from a filter (which
 * then matched every schedule: trial 22).
 */
const RESERVED_KEY = '__proto__';
/**
 * A label value: up to 128 characters (code points, the `u` flag: without it an emoji counted as two
 * and 100 of them were refused as more than 128), none a control character or `=`.
 */
// eslint-disable-next-line no-control-regex
const LABEL_VALUE = /^[^\u0000-\u001f\u007f-\u009f=]{0,128}$/u;

/** What is wrong with some labels. */
export interface LabelsProblem {
  /** The offending value as text (a key, a value, the keys when too many). */
  value: string;
  /** What is wrong with it (`labels: …` or `labels.<key>: …`), without the value. */
  problem: string;
  /** One line naming both, for an options error: `labels.tenant: expected …, got "a=b"`. */
  issue: string;
}

/**
 * The first problem of `labels` against the rules above, in key order; undefined when they hold
 * (undefined is valid: no labels).
 */
export function labelsProblem(labels: unknown): LabelsProblem | undefined {
  if (labels === undefined) return undefined;
  // `value` is the offending value as text (an InvalidScheduleError's); `got` shows it as it was given (null, 7: unquoted)
  const found = (value: string, problem: string, got = show(value)): LabelsProblem => ({
    value,
    problem,
    issue: `${problem}, got ${got}`,
  });
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) {
    return found(JSON.stringify(labels) ?? String(labels), 'labels: expected an object of string values', show(labels));
  }
  // a Map, a Date, a class instance: their entries are no own keys, so they would be read as no
  // labels (a definition's dropped, a filter matching every schedule: trial 29)
  if (!isPlainObject(labels)) {
    const name = (labels as { constructor?: { name?: string } }).constructor?.name;
    const kind = name ? `a ${name}` : 'an object with a prototype';
    const hint = labels instanceof Map ? ' (Object.fromEntries(map) makes one)' : '';
    return found(name ?? 'object', `labels: expected a plain object of string values, not ${kind}${hint}`, kind);
  }
  const keys = Object.keys(labels).sort();
  if (keys.length > LABEL_LIMITS.count) {
    return found(keys.join(','), `labels: expected at most ${LABEL_LIMITS.count} labels`, `${keys.length}`);
  }
  for (const k of keys) {
    const v = (labels as Record<string, unknown>)[k];
    if (!LABEL_KEY.test(k)) return found(k, `labels: a key is 1 to ${LABEL_LIMITS.keyLength} characters of [A-Za-z0-9_./-]`);
    if (k === RESERVED_KEY) return found(k, `labels: a key is not "${RESERVED_KEY}" (JavaScript objects reserve it)`);
    if (typeof v !== 'string' || !LABEL_VALUE.test(v)) {
      const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
      return found(
        text,
        `labels.${k}: expected a string of at most ${LABEL_LIMITS.valueLength} characters without control characters or "="`,
        show(v),
      );
    }
  }
  return undefined;
}

/**
 * Checks a definition's labels and returns them sorted by key; undefined for none (undefined or `{}`).
 * @throws InvalidScheduleError naming the schedule and the offending label (`labels.<key>`) or value.
 */
export function validateLabels(schedule: string | undefined, labels: unknown): Record<string, string> | undefined {
  const bad = labelsProblem(labels);
  if (bad) throw new InvalidScheduleError(schedule, bad.value, bad.problem);
  if (labels === undefined) return undefined;
  const keys = Object.keys(labels as object).sort();
  if (keys.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const k of keys) out[k] = (labels as Record<string, string>)[k];
  return out;
}

/**
 * The `key=value` pairs of one filter text: `a=1,b=2` is `a=1` and `b=2` (the selector form of
 * kubectl's `-l`). A value holds no `=` and a key no `,`, so every `=` after the first begins a
 * pair at the last comma before it; a comma with no `=` after it belongs to the value (`kinds=a,b`
 * is one label). A second `=` with no comma before it (`a=b=c`) leaves the text whole, refused then.
 */
function splitPairs(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  let eq = text.indexOf('=');
  for (let next = text.indexOf('=', eq + 1); eq >= 0 && next >= 0; next = text.indexOf('=', eq + 1)) {
    const comma = text.lastIndexOf(',', next);
    if (comma <= eq) break;
    out.push(text.slice(start, comma));
    start = comma + 1;
    eq = next;
  }
  out.push(text.slice(start));
  return out;
}

/**
 * A label filter from `key=value` texts (the CLI's repeated `--label`, the console's repeated
 * `label=`), each one pair or several joined by commas (`a=1,b=2`, see {@link splitPairs}):
 * `{ key: value }`, checked as a definition's labels are.
 * @returns the labels, or the problem naming the offending text (`label: …` or `label <key>: …`): not
 *   `key=value`, a key given twice (no schedule has two values of one key), a key or value a label
 *   cannot have, or more labels than one schedule can carry.
 */
export function labelFilterOf(texts: readonly string[]): { labels: Record<string, string> } | { problem: string } {
  // no prototype: every key given is an own key, so the checks below see it (a `__proto__` one included)
  const labels = Object.create(null) as Record<string, string>;
  for (const pair of texts.flatMap(splitPairs)) {
    const eq = pair.indexOf('=');
    if (eq < 1) return { problem: `label: expected key=value, got ${JSON.stringify(pair)}` };
    const key = pair.slice(0, eq);
    if (Object.hasOwn(labels, key)) return { problem: `label: key ${JSON.stringify(key)} given twice, got ${JSON.stringify(pair)}` };
    labels[key] = pair.slice(eq + 1);
  }
  const bad = labelsProblem(labels);
  return bad ? { problem: bad.issue.replace(/^labels\.?/, (m) => (m.endsWith('.') ? 'label ' : 'label')) } : { labels };
}
