/**
 * The fetch's reads skip ioredis's reply parser (issue 22, the worker's hot path): on the blocking
 * connection of a standalone or Sentinel client, a tap sits in front of ioredis's socket reader.
 * It finds where each reply ends and hands the bytes on to ioredis unchanged, except the reply of a
 * {@link ReadCommand} (an `XREADGROUP` array): that one is read by read-reply.ts into strings, kept
 * on the command, and ioredis gets `:1` in its place, so its queue of commands stays in step and the
 * command resolves as usual (`Consumer.read` then takes {@link ReadCommand.parsed}). Errors and null
 * replies (a read's timeout) go to ioredis as they are.
 *
 * Everything else stays ioredis's: writing, reconnecting, Sentinel, TLS, the command queue. The tap
 * only ever hands ioredis whole replies, so when anything surprises it (bytes that are not RESP2,
 * a reply of another shape) it hands on what it holds and steps aside (the replies are then read by
 * ioredis, as without it). It is installed per socket (a reconnect has a new one), only once the
 * client is `ready`, and only when the socket's first `data` listener is ioredis's reader; a read
 * whose reply arrives on a socket without a tap resolves with ioredis's array, which the caller takes too.
 */
import { Command, type Cluster, type Redis } from 'ioredis';
import { INCOMPLETE, neededBytes, parseReadReply, readEnd, replyEnd, type ReadReply } from './read-reply.js';

/** An `XREADGROUP` whose reply a tap reads; sent with `sendCommand`. */
export class ReadCommand extends Command {
  /** The reply, read by the tap (then the command resolved with 1); undefined when ioredis read it. */
  parsed?: ReadReply;

  constructor(args: (string | number)[]) {
    super('XREADGROUP', args, { replyEncoding: null });
  }

  /**
   * The reply the tap read (undefined when ioredis read it), taken off the command: a command object
   * stays reachable past young-generation GCs once it has resolved (from ioredis's or the socket's
   * bookkeeping, until a full GC), and a reply left on it went along into the old generation. Measured
   * at c=50 over 100,000 tasks: 43.0 MB promoted and then collected by full GCs, 16.9 MB once taken off;
   * the promotions also made V8 change the tenuring of the parser's allocation sites twice, each
   * time deoptimizing and recompiling it.
   */
  take(): ReadReply | undefined {
    const parsed = this.parsed;
    this.parsed = undefined;
    return parsed;
  }
}

const STAR = 0x2a;
const MINUS = 0x2d;

/** What ioredis gets in place of a reply the tap read. */
const READ_BY_TAP = Buffer.from(':1\r\n');

type DataListener = (chunk: Buffer) => void;

/** The tap of one socket. */
class ReplyTap {
  /** Bytes of an incomplete reply (whole replies before it were handed on). */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The least number of bytes the held reply needs. */
  private need = 0;
  /** Set when the tap stepped aside: everything goes to ioredis as it comes. */
  private off = false;

  constructor(
    private readonly client: Redis,
    private readonly reader: DataListener,
  ) {}

  readonly onData = (chunk: Buffer): void => {
    if (this.off) return this.reader(chunk);
    let data = chunk;
    if (this.heldBytes > 0) {
      this.held.push(chunk);
      this.heldBytes += chunk.length;
      if (this.heldBytes < this.need) return;
      data = Buffer.concat(this.held, this.heldBytes);
      this.held = [];
      this.heldBytes = 0;
    }
    const len = data.length;
    const queue = this.client.commandQueue;
    let o = 0;
    /** Start of the bytes not yet handed on. */
    let from = 0;
    /** Replies framed since `from` (ioredis has not had them: they answer the commands at the queue's head). */
    let k = 0;
    while (o < len) {
      const cmd = queue.peekAt(k)?.command;
      // a read's entries (`*`, not the `*-1` of a read's timeout): read here, in one pass
      if (cmd instanceof ReadCommand && data[o] === STAR && data[o + 1] !== MINUS) {
        let parsed: ReadReply | undefined;
        try {
          parsed = parseReadReply(data, o, len);
        } catch {
          parsed = undefined; // not expected (every read is bounds-checked): ioredis reads this reply then
        }
        if (parsed !== undefined) {
          if (o > from) this.reader(data.subarray(from, o)); // the k replies before it: ioredis takes their commands off the queue
          cmd.parsed = parsed;
          this.reader(READ_BY_TAP); // and this one's
          o = from = readEnd;
          k = 0;
          continue;
        }
        if (readEnd === INCOMPLETE) {
          this.need = neededBytes - o;
          break;
        }
      }
      const end = replyEnd(data, o, len);
      if (end === INCOMPLETE) {
        this.need = neededBytes - o;
        break;
      }
      if (end < 0) {
        // not RESP2 as this tap knows it: ioredis reads the rest (and reports what it finds)
        this.off = true;
        return this.reader(from === 0 ? data : data.subarray(from));
      }
      k++;
      o = end;
    }
    if (o > from) this.reader(from === 0 && o === len ? data : data.subarray(from, o));
    if (o < len) {
      this.held.push(o === 0 ? data : data.subarray(o));
      this.heldBytes = len - o;
    }
  };
}

/** The sockets that have a tap (or were found without ioredis's reader: `false`). */
const tapped = new WeakMap<object, boolean>();

/**
 * Puts a tap on `client`'s current socket, once; the client must be a standalone (or Sentinel)
 * ioredis client in state `ready`. @returns whether the socket has a tap (a {@link ReadCommand}
 * sent now is read by it, unless ioredis resends it on another socket after a reconnect).
 */
export function tapReads(client: Redis): boolean {
  const stream = client.stream as unknown as NodeJS.EventEmitter | undefined;
  if (!stream) return false;
  const known = tapped.get(stream);
  if (known !== undefined) return known;
  const reader = stream.listeners('data')[0] as DataListener | undefined;
  // ioredis 5's reader: `(data) => { parser.execute(data); }` (DataHandler.ts), the socket's first data listener
  const ok = typeof reader === 'function' && /\.execute\(/.test(Function.prototype.toString.call(reader));
  tapped.set(stream, ok);
  if (!ok) return false;
  const tap = new ReplyTap(client, reader);
  stream.removeListener('data', reader);
  stream.prependListener('data', tap.onData);
  return true;
}

/**
 * Puts a tap ({@link tapReads}) on the socket of each master of `cluster` that is `ready`, once per
 * socket: a {@link ReadCommand} sent on the cluster client goes to its slot's master, whose tap reads
 * it. A read that ends on a socket without one (a master not ready yet, a redirection to a node met
 * since) is read by ioredis, as on a standalone client after a reconnect.
 */
export function tapClusterReads(cluster: Cluster): void {
  for (const node of cluster.nodes('master')) if (node.status === 'ready') tapReads(node);
}
