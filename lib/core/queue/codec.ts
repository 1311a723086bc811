/**
 * The wire form of a task: a stream entry has the fields of protocol.ts ENTRY_FIELDS (`id`, `type`,
 * `payload` JSON text, `meta` JSON text of {@link TaskMeta}); a task outside the stream (scheduled,
 * retry, dead) is stored as the JSON array of the same values in the same order.
 */
import { InvalidPayloadError, TaskDecodeError } from '../errors.js';
import type { QueueKeys } from '../redis/keys.js';
import { ENTRY_FIELDS, META, isEntryLayout, newMeta, type TaskMeta } from '../redis/protocol.js';

export type { TaskMeta } from '../redis/protocol.js';
export { utcDay } from '../redis/keys.js';

/** A decoded task message, payload still JSON text. */
export interface TaskMessage {
  id: string;
  type: string;
  payload: string;
  meta: TaskMeta;
}

/** A task read from a stream entry. */
export interface StreamTask extends TaskMessage {
  entryId: string;
}

function describeValue(value: unknown): string {
  if (typeof value === 'function') return `a function${value.name ? ` (${value.name})` : ''}`;
  if (typeof value === 'bigint') return `a BigInt (${value}n)`;
  if (typeof value === 'symbol') return `a symbol (${String(value)})`;
  return `the number ${String(value)}`;
}

/** Where a task's markers are (its uid and overlap keys, see protocol.ts MARKER_TTL); empty for most tasks. */
export function markerKeys(keys: QueueKeys, task: { id: string; meta: TaskMeta }): string[] {
  const out: string[] = [];
  const schedule = task.meta[META.schedule];
  if (task.meta[META.uniqueId]) out.push(keys.uniqueId(task.id));
  if (task.meta[META.overlapSkip] && schedule) out.push(keys.overlap(schedule));
  return out;
}

/** Objects whose prototype is Object.prototype (of any realm) or null: JSON keeps all they hold. */
function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto === null || proto === Object.prototype) return true;
  return Object.getPrototypeOf(proto) === null && (proto as { constructor?: { name?: string } }).constructor?.name === 'Object';
}

/** What JSON would make of an object that is neither plain nor an array nor has toJSON(); undefined when it keeps it faithfully. */
function objectProblem(value: object, path: string): string | undefined {
  const kind = (value as { constructor?: { name?: string } }).constructor?.name;
  if (value instanceof Map || value instanceof WeakMap) return `a ${kind} at ${path} would become {} in JSON (use an object or pairs)`;
  if (value instanceof Set || value instanceof WeakSet) return `a ${kind} at ${path} would become {} in JSON (use an array)`;
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name} at ${path} would not survive JSON (use an array or a base64 string)`;
  if (value instanceof ArrayBuffer) return `an ArrayBuffer at ${path} would become {} in JSON (use an array or a base64 string)`;
  if (value instanceof String || value instanceof Number || value instanceof Boolean) return undefined; // JSON unboxes them
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } }).constructor?.name || 'anonymous';
  return `an instance of class ${name} at ${path} has no toJSON(): JSON would keep its own fields and lose its class (pass a plain object)`;
}

/** The first value JSON would refuse or silently mangle, with its path; undefined when none. */
function findProblem(value: unknown, path: string, ancestors: object[]): string | undefined {
  switch (typeof value) {
    case 'function':
    case 'bigint':
    case 'symbol':
      return `${describeValue(value)} at ${path} is not JSON-serialisable`;
    case 'number':
      return Number.isFinite(value) ? undefined : `${describeValue(value)} at ${path} would become null in JSON`;
    case 'undefined':
      return ancestors.length === 0 ? 'undefined is not a JSON value' : undefined;
    case 'object': {
      if (value === null || typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined;
      if (ancestors.includes(value)) return `a circular reference at ${path}, which JSON cannot represent`;
      const isArray = Array.isArray(value);
      if (!isArray && !isPlainObject(value)) return objectProblem(value, path);
      ancestors.push(value);
      let problem: string | undefined;
      if (isArray) {
        for (let i = 0; i < value.length && !problem; i++) problem = findProblem(value[i], `${path}[${i}]`, ancestors);
      } else {
        for (const key of Object.keys(value)) {
          problem = findProblem((value as Record<string, unknown>)[key], path === '(root)' ? key : `${path}.${key}`, ancestors);
          if (problem) break;
        }
      }
      ancestors.pop();
      return problem;
    }
    default:
      return undefined;
  }
}

/** Deeper than this, {@link isFaithful} gives up (it keeps no ancestors, so a cycle ends here) and the careful walk decides. */
const QUICK_DEPTH = 32;

/**
 * True when JSON keeps `value` faithfully: the rules of {@link findProblem} without building a
 * path per key or keeping ancestors. False means "not sure" (a problem, or deeper than
 * QUICK_DEPTH, where a cycle could be): then the careful walk decides and names the problem.
 */
function isFaithful(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null || typeof (value as { toJSON?: unknown }).toJSON === 'function') return true;
      if (depth >= QUICK_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!isFaithful(value[i], depth + 1)) return false;
        return true;
      }
      if (!isPlainObject(value)) return false;
      for (const key in value) {
        if (Object.prototype.hasOwnProperty.call(value, key) && !isFaithful((value as Record<string, unknown>)[key], depth + 1))
          return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * Serialises a payload to JSON text, refusing what JSON cannot hold or would mangle, before
 * anything is written. Objects with a `toJSON()` are taken as it returns them: a `Date` becomes its
 * ISO string (`"2026-01-01T00:00:00.000Z"`), which the handler receives as a string.
 * @param maxBytes the largest encoded payload, UTF-8 bytes; 0 = no limit.
 * @throws InvalidPayloadError naming the path and the problem: a circular reference, a BigInt, a
 * function, a symbol, a non-finite number, `undefined` as the whole payload, a Map, a Set, a typed
 * array or ArrayBuffer, an instance of a class without `toJSON()`; or the size and the limit.
 */
export function encodePayload(type: string, payload: unknown, maxBytes = 0): string {
  // the quick walk finds whether there is a problem; the careful one (paths built) says which
  if (payload === undefined || !isFaithful(payload, 0)) {
    const problem = findProblem(payload, '(root)', []);
    if (problem) throw new InvalidPayloadError(type, problem);
  }
  let text: string;
  try {
    text = JSON.stringify(payload);
  } catch (err) {
    // a toJSON() that throws or returns something circular
    throw new InvalidPayloadError(type, `it is not JSON-serialisable (${(err as Error).message})`, { cause: err });
  }
  // a UTF-16 unit is 1 to 3 UTF-8 bytes: count them only when the length alone cannot decide
  if (maxBytes > 0 && text.length * 3 > maxBytes) {
    const size = Buffer.byteLength(text, 'utf8');
    if (size > maxBytes) {
      throw new InvalidPayloadError(type, `it is ${size} bytes of JSON, over the limit of ${maxBytes} bytes (maxPayloadBytes)`);
    }
  }
  return text;
}

/** Meta to JSON, dropping undefined fields. */
export function encodeMeta(meta: TaskMeta): string {
  return JSON.stringify(meta);
}

/**
 * The JSON text of `newMeta(maxRetry, timeoutMs, enqueuedAt)` (a new task's meta, nothing else),
 * the same text {@link encodeMeta} gives, without building the object. Integers only (the
 * checked options and `Date.now()`).
 */
export function encodeNewMeta(maxRetry: number, timeoutMs: number, enqueuedAt: number): string {
  return `{"${META.retried}":0,"${META.maxRetry}":${maxRetry},"${META.timeoutMs}":${timeoutMs},"${META.enqueuedAt}":${enqueuedAt}}`;
}

/** The stored form of a task outside the stream: the JSON array `[id, type, payload, meta]` (ENTRY_FIELDS order). */
export function encodeStored(msg: TaskMessage): string {
  return JSON.stringify([msg.id, msg.type, msg.payload, JSON.stringify(msg.meta)]);
}

/** Parses the stored form; throws TaskDecodeError on garbage. */
export function decodeStored(text: string, where: string): TaskMessage {
  let arr: unknown;
  try {
    arr = JSON.parse(text);
  } catch (err) {
    throw new TaskDecodeError(where, `invalid stored task: ${(err as Error).message}`);
  }
  if (!Array.isArray(arr) || arr.length !== 4) throw new TaskDecodeError(where, 'invalid stored task: not [id, type, payload, meta]');
  const [id, type, payload, meta] = arr as string[];
  let m: TaskMeta;
  try {
    m = JSON.parse(meta) as TaskMeta;
  } catch {
    m = newMeta(0, 0, 0);
  }
  return { id, type, payload, meta: m };
}

const [F_ID, F_TYPE, F_PAYLOAD, F_META] = ENTRY_FIELDS;

/** The result of reading one stream entry: a task, or a decode problem (never thrown). */
export type DecodedEntry =
  | { ok: true; task: StreamTask; payload: unknown }
  | { ok: false; entryId: string; error: TaskDecodeError; fields: Record<string, string>; task: StreamTask };

/**
 * Decodes a stream entry `[entryId, [k1, v1, k2, v2, …]]` and parses its payload. Garbage (a
 * missing field, invalid JSON) is returned as a problem carrying the raw fields, so the caller can
 * dead-letter it with the error; this function never throws.
 */
export function decodeEntry(entryId: string, flat: readonly string[] | null): DecodedEntry {
  // fast path: the layout Chronos writes (entryFields: values at 1, 3, 5, 7 in ENTRY_FIELDS order)
  if (flat && isEntryLayout(flat) && flat[3] !== '') {
    try {
      const meta = JSON.parse(flat[7]) as TaskMeta;
      const payload: unknown = JSON.parse(flat[5]);
      if (typeof meta === 'object' && meta !== null && typeof meta[META.retried] === 'number') {
        return { ok: true, task: { entryId, id: flat[1], type: flat[3], payload: flat[5], meta }, payload };
      }
    } catch {
      /* fall through to the careful path, which says what is wrong */
    }
  }
  const fields: Record<string, string> = {};
  if (flat) for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
  let meta = newMeta(0, 0, 0);
  let metaProblem: string | undefined;
  if (fields[F_META] !== undefined) {
    try {
      const parsed: unknown = JSON.parse(fields[F_META]);
      if (typeof parsed === 'object' && parsed !== null) meta = { ...meta, ...(parsed as TaskMeta) };
      else metaProblem = 'invalid meta: not an object';
    } catch (err) {
      metaProblem = `invalid meta: ${(err as Error).message}`;
    }
  }
  const task: StreamTask = { entryId, id: fields[F_ID] ?? entryId, type: fields[F_TYPE] ?? '', payload: fields[F_PAYLOAD] ?? '', meta };
  const fail = (problem: string): DecodedEntry => ({ ok: false, entryId, fields, task, error: new TaskDecodeError(entryId, problem) });
  if (!flat) return fail('entry has no fields');
  const type = fields[F_TYPE];
  if (type === undefined || type === '') return fail(`missing task type (field "${F_TYPE}")`);
  if (fields[F_PAYLOAD] === undefined) return fail(`missing payload (field "${F_PAYLOAD}") for task type "${type}"`);
  if (metaProblem) return fail(metaProblem);
  let payload: unknown;
  try {
    payload = JSON.parse(fields[F_PAYLOAD]);
  } catch (err) {
    return fail(`invalid JSON payload for task type "${type}": ${(err as Error).message}`);
  }
  return { ok: true, task, payload };
}
