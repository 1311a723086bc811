// The fetch's own reading of XREADGROUP replies (fetch/read-reply.ts) and the socket tap that uses it
// (fetch/reply-tap.ts) give what ioredis's parser gives: the same strings for every reply of a read,
// whatever the bytes (non-ASCII, CRLF inside values, null field lists, other layouts), and the other
// replies of the connection handed to ioredis's reader unchanged, however the socket splits them.
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { Command, type Redis } from 'ioredis';
import { INCOMPLETE, NOT_RESP2, parseReadReply, replyEnd } from '../../lib/core/fetch/read-reply.js';
import { ReadCommand, tapReads } from '../../lib/core/fetch/reply-tap.js';

type Parsed = unknown;
interface ParserOptions {
  returnBuffers: boolean;
  returnReply: (r: Parsed) => void;
  returnError: (e: Error) => void;
  returnFatalError?: (e: Error) => void;
}
const RedisParser = createRequire(import.meta.url)('redis-parser') as new (o: ParserOptions) => { execute(b: Buffer): void };

/** A seeded generator (mulberry32): the same cases on every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const bulk = (s: string | Buffer) => {
  const b = typeof s === 'string' ? Buffer.from(s) : s;
  return Buffer.concat([Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n')]);
};
const arr = (items: Buffer[]) => Buffer.concat([Buffer.from(`*${items.length}\r\n`), ...items]);

/** Every reply of `bytes`, read by redis-parser with string values (what ioredis's `call` resolves with). */
function ioredisReplies(bytes: Buffer): Parsed[] {
  const out: Parsed[] = [];
  const p = new RedisParser({ returnBuffers: false, returnReply: (r) => out.push(r), returnError: (e) => out.push(e) });
  p.execute(bytes);
  return out;
}

function randomText(r: () => number): string {
  const pool = ['a', 'Z', '0', ' ', '\r\n', '\r', '$3', '*2', ':', '-', 'é', '€', '😀', '"', '{', '}', 'payload', 'type'];
  let s = '';
  const n = Math.floor(r() * 12);
  for (let i = 0; i < n; i++) s += pool[Math.floor(r() * pool.length)];
  return s;
}

/** A random read reply: 1-3 streams, 0-6 entries each, Chronos's layout, another one, or a null field list. */
function randomRead(r: () => number): Buffer {
  const streams: Buffer[] = [];
  const ns = 1 + Math.floor(r() * 3);
  for (let s = 0; s < ns; s++) {
    const entries: Buffer[] = [];
    const ne = Math.floor(r() * 7);
    for (let e = 0; e < ne; e++) {
      const id = `${Math.floor(r() * 1e13)}-${e}`;
      const kind = r();
      let fields: Buffer;
      if (kind < 0.1) fields = Buffer.from('*-1\r\n');
      else if (kind < 0.7) {
        const type = r() < 0.7 ? 'email' : randomText(r);
        fields = arr(
          ['id', randomText(r), 'type', type, 'payload', `{"n":${e},"s":"${randomText(r)}"}`, 'meta', '{"m":2}'].map((x) => bulk(x)),
        );
      } else {
        const n = 2 * Math.floor(r() * 6);
        fields = arr(
          Array.from({ length: n }, () => bulk(r() < 0.2 ? ['id', 'type', 'payload', 'meta'][Math.floor(r() * 4)] : randomText(r))),
        );
      }
      entries.push(arr([bulk(id), fields]));
    }
    streams.push(arr([bulk(`ns:{q${s}}:stream${randomText(r)}`), arr(entries)]));
  }
  return arr(streams);
}

/** A random reply of another command: integers, statuses, errors, nulls, nested arrays. */
function randomOther(r: () => number, depth = 0): Buffer {
  const k = r();
  if (k < 0.15) return Buffer.from(`:${Math.floor(r() * 1e6) * (r() < 0.2 ? -1 : 1)}\r\n`);
  if (k < 0.25) return Buffer.from('+OK\r\n');
  if (k < 0.3) return Buffer.from('-ERR something went wrong\r\n');
  if (k < 0.35) return Buffer.from('$-1\r\n');
  if (k < 0.4) return Buffer.from('*-1\r\n');
  if (k < 0.45) return Buffer.from(':12345678901234567890\r\n');
  if (k < 0.7 || depth > 2) return bulk(randomText(r));
  return arr(Array.from({ length: Math.floor(r() * 4) }, () => randomOther(r, depth + 1)));
}

describe('replyEnd', () => {
  test('finds the end of a whole reply, and no end in any part of it', () => {
    const r = rng(1);
    for (let c = 0; c < 200; c++) {
      const reply = c % 2 === 0 ? randomRead(r) : randomOther(r);
      const withNext = Buffer.concat([reply, Buffer.from('+NEXT\r\n')]);
      expect(replyEnd(withNext, 0, withNext.length)).toBe(reply.length);
      for (let cut = 0; cut < reply.length; cut++) expect(replyEnd(reply, 0, cut)).toBe(INCOMPLETE);
    }
    expect(replyEnd(Buffer.from('%2\r\n'), 0, 4)).toBe(NOT_RESP2); // RESP3: not this tap's
    expect(replyEnd(Buffer.from('$x\r\n'), 0, 4)).toBe(NOT_RESP2);
  });
});

describe('parseReadReply', () => {
  test("gives the strings ioredis's string reply gives", () => {
    const r = rng(2);
    for (let c = 0; c < 500; c++) {
      const reply = randomRead(r);
      const at = Math.floor(r() * 5);
      const bytes = Buffer.concat([Buffer.from('+x\r\n'.repeat(at)), reply, Buffer.from(':1\r\n')]);
      const start = 4 * at;
      expect(parseReadReply(bytes, start, start + reply.length)).toEqual(ioredisReplies(reply)[0]);
    }
  });

  test("uses Chronos's field names and the last type as they are", () => {
    const entry = (type: string) => arr([bulk('1-1'), arr(['id', 'x', 'type', type, 'payload', '1', 'meta', '{}'].map((x) => bulk(x)))]);
    const reply = arr([arr([bulk('s'), arr([entry('email'), entry('email'), entry('sms')])])]);
    const got = parseReadReply(reply, 0, reply.length)!;
    const [a, b, c] = got[0][1].map((e) => e[1]!);
    expect(a[3]).toBe('email');
    expect(b[3]).toBe('email');
    expect(c[3]).toBe('sms');
  });

  test('declines replies of another shape', () => {
    for (const other of [
      arr([bulk('a')]),
      arr([arr([bulk('s'), bulk('x')])]),
      arr([arr([bulk('s'), arr([arr([bulk('1-1'), bulk('x')])])])]),
    ]) {
      expect(parseReadReply(other, 0, other.length)).toBeUndefined();
    }
  });
});

/** A stand-in for an ioredis client: its command queue, its socket, and a reader like DataHandler's. */
function fakeClient() {
  const items: { command: Command }[] = [];
  const results = new Map<Command, Parsed>();
  const parser = new RedisParser({
    returnBuffers: false,
    returnReply: (reply) => results.set(items.shift()!.command, reply),
    returnError: (err) => results.set(items.shift()!.command, err),
  });
  const stream = new EventEmitter();
  stream.prependListener('data', (data: Buffer) => {
    parser.execute(data);
  });
  const commandQueue = { peekAt: (i: number) => items[i] };
  return { client: { stream, commandQueue } as unknown as Redis, stream, items, results };
}

describe('the tap', () => {
  test("hands ioredis every other reply unchanged and reads the reads' replies, however the socket splits them", () => {
    const r = rng(3);
    for (let c = 0; c < 300; c++) {
      const { client, stream, items, results } = fakeClient();
      expect(tapReads(client)).toBe(true);
      const sent: { command: Command; reply: Buffer }[] = [];
      const n = 1 + Math.floor(r() * 8);
      for (let i = 0; i < n; i++) {
        const isRead = r() < 0.5;
        const command = isRead ? new ReadCommand(['GROUP', 'g', 'c', 'STREAMS', 's', '>']) : new Command('get', ['k']);
        const k = r();
        const reply = isRead
          ? k < 0.1
            ? Buffer.from('*-1\r\n')
            : k < 0.15
              ? Buffer.from('-NOGROUP No such key\r\n')
              : randomRead(r)
          : randomOther(r);
        sent.push({ command, reply });
        items.push({ command });
      }
      const bytes = Buffer.concat(sent.map((s) => s.reply));
      // random cuts, some of them inside a length or a CRLF
      let o = 0;
      while (o < bytes.length) {
        const size = r() < 0.3 ? 1 + Math.floor(r() * 3) : 1 + Math.floor(r() * 200);
        stream.emit('data', bytes.subarray(o, o + size));
        o += size;
      }
      expect(items).toHaveLength(0);
      for (const { command, reply } of sent) {
        const expected = ioredisReplies(reply)[0];
        if (command instanceof ReadCommand && command.parsed !== undefined) {
          expect(results.get(command)).toBe(1);
          expect(command.parsed).toEqual(expected);
        } else {
          expect(results.get(command)).toEqual(expected);
          if (command instanceof ReadCommand) expect(reply[0] === 0x2a && reply[1] !== 0x2d).toBe(false); // only nulls and errors are ioredis's
        }
      }
    }
  });

  test('steps aside on bytes it does not know, handing on what it held', () => {
    const { client, stream, items, results } = fakeClient();
    tapReads(client);
    const get = new Command('get', ['k']);
    const read = new ReadCommand(['GROUP', 'g', 'c', 'STREAMS', 's', '>']);
    items.push({ command: get }, { command: read });
    stream.emit('data', Buffer.from('$3\r\nab'));
    stream.emit('data', Buffer.concat([Buffer.from('c\r\n'), Buffer.from('~garbage')])); // '~' (RESP3 set): not known
    expect(results.get(get)).toBe('abc');
    expect(read.parsed).toBeUndefined();
  });

  test('is not put on a socket whose first data listener is not a reply reader', () => {
    const stream = new EventEmitter();
    stream.on('data', () => {});
    expect(tapReads({ stream, commandQueue: { peekAt: () => undefined } } as unknown as Redis)).toBe(false);
  });
});
