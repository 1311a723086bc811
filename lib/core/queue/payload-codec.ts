// Payload encoding: a task's payload to JSON text, refusing what JSON cannot hold or would mangle.
import { InvalidPayloadError } from '../runtime/errors.js';

function describeValue(value: unknown): string {
  if (typeof value === 'function') return `a function${value.name ? ` (${value.name})` : ''}`;
  if (typeof value === 'bigint') return `a BigInt (${value}n)`;
  if (typeof value === 'symbol') return `a symbol (${String(value)})`;
  return `the number ${String(value)}`;
}

/** Objects whose prototype is Object.prototype (of any realm) or null: JSON keeps all they hold. */
export function isPlainObject(value: object): boolean {
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
      // an object's undefined property is left out, as JSON.stringify does (reading it gives undefined
      // either way); in an array (a hole too) it would become null
      if (ancestors.length === 0) return 'undefined is not a JSON value';
      return Array.isArray(ancestors[ancestors.length - 1]) ? `undefined at ${path} would become null in JSON` : undefined;
    case 'object': {
      if (value instanceof Date && Number.isNaN(value.getTime())) return `an invalid Date at ${path} would become null in JSON`;
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
      if (value === null) return true;
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return !(value instanceof Date) || !Number.isNaN(value.getTime());
      if (depth >= QUICK_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (value[i] === undefined || !isFaithful(value[i], depth + 1)) return false;
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
 * function, a symbol, a non-finite number, `undefined` as the whole payload or in an array (a hole
 * too), an invalid Date, a Map, a Set, a typed array or ArrayBuffer, an instance of a class without
 * `toJSON()`, nesting too deep to walk; or the size and the limit. An object's property whose value
 * is undefined is left out, as `JSON.stringify` does.
 */
export function encodePayload(type: string, payload: unknown, maxBytes = 0): string {
  // the quick walk finds whether there is a problem; the careful one (paths built) says which
  if (payload === undefined || !isFaithful(payload, 0)) {
    let problem: string | undefined;
    try {
      problem = findProblem(payload, '(root)', []);
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      problem = `it is nested too deeply to check or encode (${err.message})`; // the call stack, thousands of levels down
    }
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
