/**
 * The ack of a batch of plain tasks (ack.lua with no marker to release), written without ioredis's
 * script machinery (issue 22, the worker's hot path): one ack per fetched batch went through
 * `defineCommand`'s wrapper (a rest-argument array, an options object, the arguments spread twice and
 * flattened, a promise chained for NOSCRIPT, a closure per write, every argument measured and
 * concatenated). An {@link AckCommand} holds the batch's few changing arguments; what never changes for
 * a queue (the keys, the group, the counters' lifetime) is laid out as RESP once ({@link ackHead}) and
 * reused by every batch, as the fetch's read is sent as a `ReadCommand` (fetch/reply-tap.ts).
 *
 * NOSCRIPT as ioredis handles it: the first ack written on a socket is an EVAL of the whole source (a
 * new connection, e.g. after Redis restarted, loads the script with its first ack), later ones are
 * EVALSHA; a NOSCRIPT reply (the script cache was flushed: SCRIPT FLUSH, a failover to a replica
 * that never ran it) forgets the socket, and {@link sendAck} sends the batch again, as an EVAL. Redis
 * ran nothing of a call it answered NOSCRIPT, so the batch is acked once.
 */
import { Command } from 'ioredis';
import { CONSUMER_GROUP, type QueueKeys } from '../keys.js';
import { scriptText, wrapScriptError } from '../scripts.js';
import type { RedisClient } from '../types.js';

/** ack.lua's reply: acked, entry ids reclaimed, entry ids gone. */
export type AckReply = [acked: number, reclaimed: string[], gone: string[]];

/** One RESP bulk string. */
function bulk(text: string): string {
  return `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
}

/** ack.lua's source and SHA1, and the two ways a plain ack starts (11 parts: the command, the script, 3 keys, 5 args). */
let script: { readonly evalsha: string; readonly eval: string; readonly sha: string } | undefined;

function ackScriptText(): NonNullable<typeof script> {
  if (!script) {
    const { lua, sha } = scriptText('ack');
    script = { sha, evalsha: `*11\r\n$7\r\nevalsha\r\n${bulk(sha)}`, eval: `*11\r\n$4\r\neval\r\n${bulk(lua)}` };
  }
  return script;
}

/** What follows the script in a plain ack of a queue: the key count, the keys, the group, the counters' lifetime. */
const heads = new WeakMap<QueueKeys, { readonly ttl: number; readonly text: string }>();

function ackHead(keys: QueueKeys, counterTtlMs: number): string {
  let head = heads.get(keys);
  if (head?.ttl !== counterTtlMs) {
    const text =
      bulk('3') + bulk(keys.stream) + bulk(keys.counts) + bulk(keys.reclaimed) + bulk(CONSUMER_GROUP) + bulk(String(counterTtlMs));
    heads.set(keys, (head = { ttl: counterTtlMs, text }));
  }
  return head.text;
}

/** The sockets on which ack.lua was sent as EVAL (so it is in that Redis's script cache, unless flushed since). */
const loadedOn = new WeakSet<object>();

/**
 * `EVALSHA <ack.lua> 3 <stream> <counts> <reclaimed> <group> <counterTtlMs> <nowMs> <P> <ids>`, or
 * the EVAL of the source when the socket it is written to has not had it. Sent with `sendCommand`;
 * ioredis may write it again on another socket (a reconnect resends it), so it is laid out per write.
 */
class AckCommand extends Command {
  /** The socket it was written to last. */
  socket?: object;
  private readonly head: string;
  private readonly rest: string;

  /** @param ids the entry ids, space-separated; all ASCII (`<ms>-<seq>`), as are the numbers */
  constructor(keys: QueueKeys, counterTtlMs: number, nowMs: number, count: number, ids: string) {
    super('evalsha', [], { replyEncoding: 'utf8' });
    const now = String(nowMs);
    const p = String(count);
    this.head = ackHead(keys, counterTtlMs);
    this.rest = `$${now.length}\r\n${now}\r\n$${p.length}\r\n${p}\r\n$${ids.length}\r\n${ids}\r\n`;
    // as ioredis lays them out: a cluster client finds the slot from them (and its debug log shows them)
    const { sha } = ackScriptText();
    this.args = [sha, '3', keys.stream, keys.counts, keys.reclaimed, CONSUMER_GROUP, String(counterTtlMs), now, p, ids];
  }

  override toWritable(socket: object): string {
    this.socket = socket;
    const s = ackScriptText();
    if (loadedOn.has(socket)) return s.evalsha + this.head + this.rest;
    loadedOn.add(socket);
    return s.eval + this.head + this.rest;
  }
}

/**
 * Sends ack.lua for `count` plain entries (`ids`, space-separated) of `keys`' stream on `client`,
 * and sends it again as an EVAL when Redis answers NOSCRIPT (its script cache was flushed).
 * @returns ack.lua's reply
 * @throws RedisScriptError (script `ack`) on any other error reply; connection errors as they are
 */
export async function sendAck(
  client: RedisClient,
  keys: QueueKeys,
  counterTtlMs: number,
  nowMs: number,
  count: number,
  ids: string,
): Promise<AckReply> {
  const cmd = new AckCommand(keys, counterTtlMs, nowMs, count, ids);
  try {
    return (await client.sendCommand(cmd)) as AckReply;
  } catch (err) {
    if (!isNoScript(err)) throw wrapScriptError('ack', err);
    if (cmd.socket) loadedOn.delete(cmd.socket);
    try {
      return (await client.sendCommand(new AckCommand(keys, counterTtlMs, nowMs, count, ids))) as AckReply;
    } catch (again) {
      throw wrapScriptError('ack', again);
    }
  }
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.name === 'ReplyError' && err.message.startsWith('NOSCRIPT');
}
