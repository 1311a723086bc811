/**
 * The fetch's own reading of an `XREADGROUP` reply (RESP2 bytes), used by reply-tap.ts on the
 * blocking connection instead of ioredis's parser: ioredis makes a `Buffer` of every bulk string
 * (nine per task entry) and an array of every level, and the fetch then decodes most of them again.
 * Here a whole reply is decoded once (its bytes as one Latin-1 string when they are all ASCII, so
 * byte offsets are string offsets) and each value is a slice of it; the field names Chronos writes
 * are its constants and a task type equal to the last one read is that string (no decode, one hash).
 * The result has the shape of ioredis's string reply (`call` rather than `callBuffer`): what
 * `Consumer.read` and codec.ts `decodeEntry` take either way.
 */
import { isAscii } from 'node:buffer';
import { ENTRY_FIELDS } from '../redis/protocol.js';

/** An `XREADGROUP` reply as strings: per stream, its key and its entries (id, flat field/value list or null). */
export type ReadReply = [string, [string, string[] | null][]][];

const CR = 13;
const STAR = 42; // *
const DOLLAR = 36; // $
const PLUS = 43; // +
const MINUS = 45; // -
const COLON = 58; // :
const ZERO = 48;
const NINE = 57;

/** {@link replyEnd}: the reply is not complete in the bytes given. */
export const INCOMPLETE = -1;
/** {@link replyEnd}: the bytes are not a RESP2 reply (an unknown type byte, a bad number). */
export const NOT_RESP2 = -2;

/**
 * Where the number read by {@link intAt} ends (past its CRLF); {@link INCOMPLETE} or {@link NOT_RESP2}
 * when it could not be read. Module state, not a returned object: this runs for every element of every reply.
 */
let intEnd = 0;

/** The (optionally negative) integer at `o` up to its CRLF; sets {@link intEnd}. */
function intAt(b: Buffer, o: number, len: number): number {
  let i = o;
  let neg = false;
  if (i < len && b[i] === MINUS) {
    neg = true;
    i++;
  }
  let n = 0;
  const first = i;
  for (; i < len; i++) {
    const c = b[i];
    if (c === CR) break;
    if (c < ZERO || c > NINE) {
      intEnd = NOT_RESP2;
      return 0;
    }
    n = n * 10 + (c - ZERO);
  }
  if (i + 1 >= len) {
    intEnd = INCOMPLETE;
    return 0;
  }
  if (i === first) {
    intEnd = NOT_RESP2;
    return 0;
  }
  intEnd = i + 2;
  return neg ? -n : n;
}

/** The least number of bytes a reply found {@link INCOMPLETE} needs (from the start of the bytes given), for the caller to wait for. */
export let neededBytes = 0;

/**
 * Where the RESP2 reply that starts at `o` in `b[0, len)` ends (the offset past it), or
 * {@link INCOMPLETE} (then {@link neededBytes} is the least length of bytes that could hold it), or
 * {@link NOT_RESP2}. Reads only the type bytes and lengths: bulk strings are skipped, not read.
 */
export function replyEnd(b: Buffer, o: number, len: number): number {
  let left = 1;
  let i = o;
  while (left > 0) {
    left--;
    if (i >= len) {
      neededBytes = len + 1;
      return INCOMPLETE;
    }
    const t = b[i];
    if (t === DOLLAR || t === STAR || t === COLON) {
      const n = intAt(b, i + 1, len);
      if (intEnd < 0) {
        neededBytes = len + 1;
        return intEnd;
      }
      i = intEnd;
      if (t === DOLLAR && n >= 0) {
        i += n + 2;
        if (i > len) {
          neededBytes = i;
          return INCOMPLETE;
        }
      } else if (t === STAR && n > 0) left += n;
    } else if (t === PLUS || t === MINUS) {
      const cr = b.indexOf(CR, i + 1);
      if (cr < 0 || cr + 1 >= len) {
        neededBytes = len + 1;
        return INCOMPLETE;
      }
      i = cr + 2;
    } else return NOT_RESP2;
  }
  return i;
}

/** The last task type read, reused while the next ones are the same (most tasks of a read share one). */
let lastType = '';

/** {@link parseReadReply}: the bytes hold something else than a read's reply (then ioredis reads it). */
export const NOT_A_READ = -3;

/**
 * After {@link parseReadReply}: where the reply it read ends (the offset past it), or why it read
 * none: {@link INCOMPLETE} (then {@link neededBytes} is the least length that could hold it) or {@link NOT_A_READ}.
 */
export let readEnd = 0;

// The state of one parseReadReply call (module variables, not a cursor object: the parse runs per
// read, mostly before the JIT has optimised it, and is split into small one-loop functions so that
// it is compiled in small pieces).
/** The read position. */
let at = 0;
/** The reply's bytes as one Latin-1 string when they are all ASCII (then a byte offset minus {@link base} is a string offset). */
let text: string | undefined;
let base = 0;

/** Why no reply was read: `why`, with the bytes needed when incomplete; -2 for the caller to return. */
function fail(why: number, need: number): number {
  readEnd = why;
  neededBytes = need;
  return -2;
}

/** The count of the `type` header (`*` or `$`) at {@link at}, moving past it: -1 for a null, -2 when none ({@link readEnd} says why). */
function header(b: Buffer, len: number, type: number): number {
  if (at >= len) return fail(INCOMPLETE, len + 1);
  if (b[at] !== type) return fail(NOT_A_READ, 0);
  const n = intAt(b, at + 1, len);
  if (intEnd < 0) return fail(intEnd === INCOMPLETE ? INCOMPLETE : NOT_A_READ, len + 1);
  if (n < -1) return fail(NOT_A_READ, 0);
  at = intEnd;
  return n;
}

/** The bulk string at {@link at} (whole in `b`), moving past it; undefined when none ({@link readEnd} says why). */
function bulk(b: Buffer, len: number): string | undefined {
  const n = header(b, len, DOLLAR);
  if (n < 0) {
    if (n === -1) fail(NOT_A_READ, 0); // a null value: not a stream entry's
    return undefined;
  }
  const start = at;
  if (start + n + 2 > len) {
    fail(INCOMPLETE, start + n + 2);
    return undefined;
  }
  at = start + n + 2;
  return text !== undefined ? text.slice(start - base, start - base + n) : b.toString('utf8', start, start + n);
}

/** The `nf` fields of an entry at {@link at}: Chronos's field names are its constants, a task type equal to the last one that string. */
function fields(b: Buffer, len: number, nf: number): string[] | undefined {
  const out: string[] = new Array(nf);
  for (let f = 0; f < nf; f++) {
    const n = header(b, len, DOLLAR);
    if (n < 0 || at + n + 2 > len) {
      if (n >= -1) fail(n === -1 ? NOT_A_READ : INCOMPLETE, at + n + 2);
      return undefined;
    }
    let v: string | undefined;
    if (text !== undefined) {
      const rel = at - base;
      if ((f & 1) === 0) {
        const name = f < 8 ? ENTRY_FIELDS[f >> 1] : undefined;
        if (name !== undefined && n === name.length && text.startsWith(name, rel)) v = name;
      } else if (f === 3 && n === lastType.length && out[2] === ENTRY_FIELDS[1] && text.startsWith(lastType, rel)) v = lastType;
      v ??= text.slice(rel, rel + n);
    } else v = b.toString('utf8', at, at + n);
    if (f === 3 && out[2] === ENTRY_FIELDS[1]) lastType = v;
    out[f] = v;
    at += n + 2;
  }
  return out;
}

/** The `count` entries of a stream at {@link at}; undefined when they are not entries ({@link readEnd} says why). */
function entries(b: Buffer, len: number, count: number): [string, string[] | null][] | undefined {
  const out: [string, string[] | null][] = new Array(count);
  for (let e = 0; e < count; e++) {
    if (header(b, len, STAR) !== 2) return notARead();
    const entryId = bulk(b, len);
    if (entryId === undefined) return undefined;
    const nf = header(b, len, STAR);
    if (nf < -1) return undefined;
    const f = nf === -1 ? null : fields(b, len, nf);
    if (f === undefined) return undefined;
    out[e] = [entryId, f];
  }
  return out;
}

/**
 * Reads the reply at `b[o, len)` as an `XREADGROUP` reply: an array of `[key, [[id, [field, value,
 * …] | null], …]]`. Undefined when it is not one, or not whole in `b` ({@link readEnd} says which);
 * else {@link readEnd} is where it ends. Values are decoded as UTF-8, as ioredis's string replies are.
 */
export function parseReadReply(b: Buffer, o: number, len: number): ReadReply | undefined {
  // all ASCII (the usual case): Latin-1 is UTF-8 there, and a byte offset is a string offset
  text = isAscii(b.subarray(o, len)) ? b.toString('latin1', o, len) : undefined;
  base = o;
  at = o;
  readEnd = 0;
  const reply = streams(b, len);
  text = undefined; // the reply's text lives on in the values sliced from it, not in this module
  if (reply !== undefined) readEnd = at;
  return reply;
}

/** The streams of the reply at {@link at}. */
function streams(b: Buffer, len: number): ReadReply | undefined {
  const n = header(b, len, STAR);
  if (n < 1) {
    if (n >= -1) readEnd = NOT_A_READ; // a null or empty array: ioredis's to read
    return undefined;
  }
  const out: ReadReply = new Array(n);
  for (let s = 0; s < n; s++) {
    if (header(b, len, STAR) !== 2) return notARead();
    const key = bulk(b, len);
    if (key === undefined) return undefined;
    const count = header(b, len, STAR);
    if (count < 0) return notARead();
    const e = entries(b, len, count);
    if (e === undefined) return undefined;
    out[s] = [key, e];
  }
  return out;
}

/** A header of the wrong count (or a null) where a read's reply has a fixed one: ioredis's to read, unless the bytes ran out. */
function notARead(): undefined {
  if (readEnd !== INCOMPLETE) readEnd = NOT_A_READ;
  return undefined;
}
