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

/** The read position of {@link parseReadReply} and its helpers. */
let at = 0;

/** {@link parseReadReply}: the bytes hold something else than a read's reply (then ioredis reads it). */
export const NOT_A_READ = -3;

/**
 * After {@link parseReadReply}: where the reply it read ends (the offset past it), or why it read
 * none: {@link INCOMPLETE} (then {@link neededBytes} is the least length that could hold it) or {@link NOT_A_READ}.
 */
export let readEnd = 0;

/** Marks the reply incomplete (needing more than `len` bytes, or `need`) and returns -1. */
function short(len: number, need = len + 1): number {
  readEnd = INCOMPLETE;
  neededBytes = need;
  return -1;
}

/** The length of the array at {@link at} (moving past its header; -1 for a null one), or -2 with {@link readEnd} saying why not. */
function arrayAt(b: Buffer, len: number): number {
  if (at >= len) return short(len) - 1;
  if (b[at] !== STAR) {
    readEnd = NOT_A_READ;
    return -2;
  }
  const n = intAt(b, at + 1, len);
  if (intEnd < 0) {
    if (intEnd === INCOMPLETE) return short(len) - 1;
    readEnd = NOT_A_READ;
    return -2;
  }
  at = intEnd;
  if (n >= -1) return n;
  readEnd = NOT_A_READ;
  return -2;
}

/** The length of the bulk string at {@link at} (moving to its bytes, whole in `b`), or -1 with {@link readEnd} saying why not. */
function bulkAt(b: Buffer, len: number): number {
  if (at >= len) return short(len);
  if (b[at] !== DOLLAR) {
    readEnd = NOT_A_READ;
    return -1;
  }
  const n = intAt(b, at + 1, len);
  if (intEnd < 0 || n < 0) {
    if (intEnd === INCOMPLETE) return short(len);
    readEnd = NOT_A_READ; // a null (or bad) value: not a stream entry's
    return -1;
  }
  if (intEnd + n + 2 > len) return short(len, intEnd + n + 2);
  at = intEnd;
  return n;
}

/**
 * Reads the reply at `b[o, len)` as an `XREADGROUP` reply: an array of `[key, [[id, [field, value,
 * …] | null], …]]`. Undefined when it is not one, or not whole in `b` ({@link readEnd} says which);
 * else {@link readEnd} is where it ends. Values are decoded as UTF-8, as ioredis's string replies are.
 */
export function parseReadReply(b: Buffer, o: number, len: number): ReadReply | undefined {
  // all ASCII (the usual case): Latin-1 is UTF-8 there, and a byte offset is a string offset
  const text = isAscii(b.subarray(o, len)) ? b.toString('latin1', o, len) : undefined;
  at = o;
  readEnd = 0;
  const streams = arrayAt(b, len);
  if (streams < 1) {
    if (streams >= -1) readEnd = NOT_A_READ; // a null or empty array: ioredis's to read
    return undefined;
  }
  const out: ReadReply = new Array(streams);
  for (let s = 0; s < streams; s++) {
    if (arrayAt(b, len) !== 2) return notARead();
    const kn = bulkAt(b, len);
    if (kn < 0) return undefined;
    const key = text !== undefined ? text.slice(at - o, at - o + kn) : b.toString('utf8', at, at + kn);
    at += kn + 2;
    const count = arrayAt(b, len);
    if (count < 0) return notARead();
    const entries: [string, string[] | null][] = new Array(count);
    for (let e = 0; e < count; e++) {
      if (arrayAt(b, len) !== 2) return notARead();
      const idn = bulkAt(b, len);
      if (idn < 0) return undefined;
      const entryId = text !== undefined ? text.slice(at - o, at - o + idn) : b.toString('utf8', at, at + idn);
      at += idn + 2;
      const nf = arrayAt(b, len);
      if (nf < -1) return undefined;
      if (nf === -1) {
        entries[e] = [entryId, null];
        continue;
      }
      const fields: string[] = new Array(nf);
      for (let f = 0; f < nf; f++) {
        const n = bulkAt(b, len);
        if (n < 0) return undefined;
        let v: string | undefined;
        if (text !== undefined) {
          const rel = at - o;
          if ((f & 1) === 0) {
            // a field name: Chronos's own at its place is its constant
            const name = f < 8 ? ENTRY_FIELDS[f >> 1] : undefined;
            if (name !== undefined && n === name.length && text.startsWith(name, rel)) v = name;
          } else if (f === 3 && n === lastType.length && fields[2] === ENTRY_FIELDS[1] && text.startsWith(lastType, rel)) v = lastType;
          v ??= text.slice(rel, rel + n);
        } else v = b.toString('utf8', at, at + n);
        if (f === 3 && fields[2] === ENTRY_FIELDS[1]) lastType = v;
        fields[f] = v;
        at += n + 2;
      }
      entries[e] = [entryId, fields];
    }
    out[s] = [key, entries];
  }
  readEnd = at;
  return out;
}

/** An array of the wrong length (or a null one) where a read's reply has a fixed one: ioredis's to read. */
function notARead(): undefined {
  if (readEnd !== INCOMPLETE) readEnd = NOT_A_READ;
  return undefined;
}
