import { InvalidPayloadError, TaskDecodeError } from '../errors.js';

/**
 * The wire form of a task. A stream entry has four fields: `id`, `type`, `payload` (JSON text) and
 * `meta` (JSON text of {@link TaskMeta}); tasks outside the stream (scheduled, retry, dead) are
 * stored as the JSON array `[id, type, payload, meta]`.
 */
export interface TaskMeta {
  /** retried: failed attempts so far. */
  r: number;
  /** maxRetry: retries allowed before the task is dead. */
  m: number;
  /** timeout of one attempt, ms (0 = none). */
  t: number;
  /** enqueuedAt, epoch ms. */
  e: number;
  /** schedule name, for tasks a schedule trigger enqueued. */
  s?: string;
  /** trigger instant, epoch ms, for tasks a schedule trigger enqueued. */
  tr?: number;
  /** 1 when the task was enqueued with an explicit id (its uid key is released when it ends). */
  u?: 1;
  /** 1 when the schedule's overlap policy is `skip` (its overlap key is released when it ends). */
  o?: 1;
  /** crashes: times the task was reclaimed from a dead or stuck consumer. */
  c?: number;
  /** last error message (with stack when known). */
  le?: string;
  /** failedAt, epoch ms, of the last failure. */
  fa?: number;
  /** why the task is dead: 'retries' | 'non-retryable' | 'poison' | 'decode' | 'no-handler' | 'timeout'. */
  rs?: string;
  /** W3C traceparent of the span that created the task (the enqueue's or the fire's), when tracing is on. */
  tp?: string;
  /** the raw fields of an entry that could not be decoded. */
  raw?: Record<string, string>;
}

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
      ancestors.push(value);
      let problem: string | undefined;
      if (Array.isArray(value)) {
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

/**
 * Serialises a payload to JSON text, refusing what JSON cannot hold or would mangle, before
 * anything is written.
 * @throws InvalidPayloadError naming the path and the problem: a circular reference, a BigInt, a
 * function, a symbol, a non-finite number, or `undefined` as the whole payload.
 */
export function encodePayload(type: string, payload: unknown): string {
  const problem = findProblem(payload, '(root)', []);
  if (problem) throw new InvalidPayloadError(type, problem);
  try {
    return JSON.stringify(payload);
  } catch (err) {
    // a toJSON() that throws or returns something circular
    throw new InvalidPayloadError(type, `it is not JSON-serialisable (${(err as Error).message})`, { cause: err });
  }
}

/** Meta to JSON, dropping undefined fields. */
export function encodeMeta(meta: TaskMeta): string {
  return JSON.stringify(meta);
}

/** The stored form of a task outside the stream: the JSON array `[id, type, payload, meta]`. */
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
    m = { r: 0, m: 0, t: 0, e: 0 };
  }
  return { id, type, payload, meta: m };
}

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
  // fast path: the layout Chronos writes (id, type, payload, meta in that order)
  if (flat && flat.length === 8 && flat[0] === 'id' && flat[2] === 'type' && flat[4] === 'payload' && flat[6] === 'meta' && flat[3] !== '') {
    try {
      const meta = JSON.parse(flat[7]) as TaskMeta;
      const payload: unknown = JSON.parse(flat[5]);
      if (typeof meta === 'object' && meta !== null && typeof meta.r === 'number') {
        return { ok: true, task: { entryId, id: flat[1], type: flat[3], payload: flat[5], meta }, payload };
      }
    } catch {
      /* fall through to the careful path, which says what is wrong */
    }
  }
  const fields: Record<string, string> = {};
  if (flat) for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
  let meta: TaskMeta = { r: 0, m: 0, t: 0, e: 0 };
  let metaProblem: string | undefined;
  if (fields.meta !== undefined) {
    try {
      const parsed: unknown = JSON.parse(fields.meta);
      if (typeof parsed === 'object' && parsed !== null) meta = { ...meta, ...(parsed as TaskMeta) };
      else metaProblem = 'invalid meta: not an object';
    } catch (err) {
      metaProblem = `invalid meta: ${(err as Error).message}`;
    }
  }
  const task: StreamTask = { entryId, id: fields.id ?? entryId, type: fields.type ?? '', payload: fields.payload ?? '', meta };
  const fail = (problem: string): DecodedEntry => ({ ok: false, entryId, fields, task, error: new TaskDecodeError(entryId, problem) });
  if (!flat) return fail('entry has no fields');
  if (fields.type === undefined || fields.type === '') return fail('missing task type (field "type")');
  if (fields.payload === undefined) return fail(`missing payload (field "payload") for task type "${fields.type}"`);
  if (metaProblem) return fail(metaProblem);
  let payload: unknown;
  try {
    payload = JSON.parse(fields.payload);
  } catch (err) {
    return fail(`invalid JSON payload for task type "${fields.type}": ${(err as Error).message}`);
  }
  return { ok: true, task, payload };
}

/** The UTC day `YYYY-MM-DD` of an instant (epoch ms), the bucket of the daily counters. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
