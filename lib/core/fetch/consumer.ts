import { DEFAULTS } from '../runtime/defaults.js';
import { engineTime } from '../runtime/time.js';
import { corked, execReads, isCluster } from '../redis/cluster.js';
import { requeueScript } from '../redis/commands/queue.js';
import { deleteConsumersScript } from '../redis/commands/recovery.js';
import { CONSUMER_GROUP, type QueueKeys } from '../redis/keys.js';
import { SCAN_START } from '../redis/protocol.js';
import {
  claimScript,
  recoverScript,
  type ClaimOutcome,
  type HeldEntry,
  type PoisonTask,
  type RequeuedTask,
} from '../redis/commands/recovery.js';
import type { Redis } from 'ioredis';
import type { RedisClient } from '../redis/types.js';
import type { ReadReply } from './read-reply.js';
import { ReadCommand, tapClusterReads, tapReads } from './reply-tap.js';

/** A queue as a consumer sees it. */
/**
 * True for Redis's NOGROUP error: the stream or its consumer group does not exist — Redis lost its
 * data (restarted empty, FLUSHDB) and no fetch has recreated the group yet ({@link Consumer.ensureGroups}).
 */
export function isNoGroup(err: unknown): boolean {
  return /NOGROUP/.test(err instanceof Error ? err.message : String(err));
}

export interface ConsumedQueue {
  readonly name: string;
  readonly weight: number;
  readonly keys: QueueKeys;
}

/** One entry read from a stream. */
export interface Fetched<Q extends ConsumedQueue = ConsumedQueue> {
  readonly queue: Q;
  readonly entryId: string;
  /** Its field/value list: the bytes of a buffer reply (a read), or strings (a script's reply); see codec.ts decodeEntry. */
  readonly fields: readonly string[] | readonly Buffer[] | null;
}

/**
 * The entries of a read's reply (strings from the tap, or ioredis's buffers) with their queues. Apart
 * from the async `read`, and with indexed loops: per entry, mostly run before the JIT has optimised it,
 * and a loop in an async function makes the whole of it hot (a large compile).
 */
function fetchedOf<Q extends ConsumedQueue>(
  reply: ReadReply | [Buffer, [Buffer, Buffer[] | null][]][],
  queues: readonly Q[],
): Fetched<Q>[] {
  let n = 0;
  for (let s = 0; s < reply.length; s++) n += reply[s][1].length;
  // sized once: a read hands `count` entries per stream, and growing by push copied the list ~6 times per read of 50
  const out: Fetched<Q>[] = new Array(n);
  let o = 0;
  for (let s = 0; s < reply.length; s++) {
    const key = reply[s][0];
    const entries = reply[s][1] as readonly [string | Buffer, string[] | Buffer[] | null][];
    const queue = queues.length === 1 ? queues[0] : queues.find((q) => q.keys.stream === key.toString())!;
    for (let e = 0; e < entries.length; e++) {
      const entry = entries[e];
      const entryId = entry[0];
      out[o++] = { queue, entryId: typeof entryId === 'string' ? entryId : entryId.toString(), fields: entry[1] };
    }
  }
  return out;
}

/** A consumer idle this long with nothing pending belongs to a server that is gone, ms. */
const GONE_CONSUMER_IDLE_MS = 60 * 60_000;
/**
 * How much of a queue's pending entries list one visibility-timeout sweep looks at: `rounds` recover.lua
 * calls of XAUTOCLAIM COUNT `count`, each looking at up to `count` × 10 entries (10,000 in all). A sweep
 * goes on where the previous one stopped, so a longer list is covered over several sweeps.
 */
export const RECOVER_SCAN = Object.freeze({ rounds: 10, count: 100 });
/**
 * Most entries of one claim.lua or requeue.lua call (a claims round or a give-back makes as many calls
 * as it needs, one after the other): claim.lua costs about 45 µs of Redis time per entry (two XPENDING, an XRANGE, an
 * XCLAIM, the markers), so a round over all of a server's entries in one call blocked Redis 44 ms at
 * 1,000 held entries and 608 ms at 20,000 (before review46).
 */
export const CLAIM_CHUNK = 100;

/**
 * The Redis Streams operations of one consumer (a server) in the `chronos` consumer group of its
 * queues: reads, claims, give-backs, recovery. No state: the server decides when.
 */
export class Consumer {
  private readonly client: RedisClient;
  /** This consumer's name in the group (the server's id). */
  readonly name: string;
  /**
   * Written on the connection of each read just before the read is sent (the server's batched
   * acks): what it sends and the read leave in one socket write.
   */
  private readonly acks?: { writeOn(via: RedisClient): void };

  constructor(o: { client: RedisClient; name: string; acks?: { writeOn(via: RedisClient): void } }) {
    this.client = o.client;
    this.name = o.name;
    this.acks = o.acks;
  }

  /** `XREADGROUP … COUNT count [BLOCK blockMs] STREAMS <queues> >` on `via` (the blocking connection). */
  async read<Q extends ConsumedQueue>(via: RedisClient, queues: readonly Q[], count: number, blockMs?: number): Promise<Fetched<Q>[]> {
    const args: (string | number)[] = ['GROUP', CONSUMER_GROUP, this.name, 'COUNT', count];
    if (blockMs !== undefined) args.push('BLOCK', blockMs);
    args.push('STREAMS');
    for (const q of queues) args.push(q.keys.stream);
    for (let i = 0; i < queues.length; i++) args.push('>');

    const acks = this.acks;
    const cluster = isCluster(via);
    const ready = !cluster && via.status === 'ready';
    // its reply read by the socket's tap (reply-tap.ts), not by ioredis's parser, where there is one;
    // on a cluster, by the tap of its slot's master (a redirected read is read by ioredis)
    if (cluster) tapClusterReads(via);
    const cmd = cluster || (ready && tapReads(via as Redis)) ? new ReadCommand(args) : undefined;
    const send = (): Promise<unknown> => {
      acks?.writeOn(via);
      return cmd ? (via.sendCommand(cmd) as Promise<unknown>) : via.callBuffer('XREADGROUP', ...args);
    };
    // one write (writev) for the acks and the read: a syscall less per fetch (on a cluster the fetcher
    // corks the masters around the whole round)
    const read = acks && ready ? corked(via, send) : send();
    const got = await read;
    // read by the tap (then the command resolved with 1), or by ioredis (after a reconnect, or without a tap)
    const reply = (cmd?.take() ?? got) as ReadReply | [Buffer, [Buffer, Buffer[] | null][]][] | null;
    if (!reply || typeof reply !== 'object') return [];
    return fetchedOf(reply, queues);
  }

  /** Creates each queue's consumer group at id 0 (so tasks enqueued before any server are served); BUSYGROUP is fine. */
  async ensureGroups(queues: readonly ConsumedQueue[]): Promise<void> {
    for (const q of queues) {
      try {
        await this.client.call('XGROUP', 'CREATE', q.keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM');
      } catch (err) {
        if (!/BUSYGROUP/.test((err as Error).message)) throw err;
      }
    }
  }

  /**
   * `XCLAIM … 0 <ids> JUSTID` to this consumer: resets the idle time of entries it holds (a long
   * handler is not reclaimed). @returns the ids it still owns — an entry the recoverer gave back
   * to the queue meanwhile is no longer pending, so it is not returned.
   */
  async claim(stream: string, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    return (await this.client.call('XCLAIM', stream, CONSUMER_GROUP, this.name, 0, ...ids, 'JUSTID')) as string[];
  }

  /**
   * The entries of `queue` that Redis delivered to this consumer by a read whose reply never reached
   * it (the read was abandoned: its connection rebuilt): pending here, delivered once, with ids after
   * `afterId` (the greatest id this consumer was handed from the stream; undefined: none yet), at most 1000.
   * Each is claimed again with `XCLAIM … JUSTID` (its idle time reset, its delivery count kept) and
   * returned with its fields; one whose stream entry is gone is left pending (the recoverer reports it lost).
   */
  async unseen<Q extends ConsumedQueue>(queue: Q, afterId: string | undefined): Promise<Fetched<Q>[]> {
    const stream = queue.keys.stream;
    const start = afterId === undefined ? '-' : `(${afterId}`;
    const rows = (await this.client.call('XPENDING', stream, CONSUMER_GROUP, start, '+', 1000, this.name)) as [
      string,
      string,
      number,
      number,
    ][];
    // delivered once: a '>' read's entries (a reclaimed or poison entry claimed here has a higher count)
    const ids = rows.filter((r) => Number(r[3]) === 1).map((r) => r[0]);
    if (ids.length === 0) return [];
    // the fields first: an entry whose stream entry is gone is not claimed (XCLAIM would drop it from the PEL, unreported)
    const replies = await execReads(this.client, (p) => {
      for (const id of ids) p.xrange(stream, id, id);
    });
    const failed = replies.find((r) => r[0]);
    if (failed) throw failed[0];
    const found = new Map<string, string[]>();
    for (const [, r] of replies) {
      const entry = (r as [string, string[]][])[0];
      if (entry) found.set(entry[0], entry[1]);
    }
    if (found.size === 0) return [];
    const claimed = await this.claim(stream, [...found.keys()]);
    const out: Fetched<Q>[] = [];
    for (const id of claimed) out.push({ queue, entryId: id, fields: found.get(id)! });
    return out;
  }

  /** Puts entries this consumer holds back at the end of the queue's stream (requeue.lua, {@link CLAIM_CHUNK} per call), uncounted. */
  async giveBack(keys: QueueKeys, ids: readonly string[]): Promise<number> {
    let n = 0;
    for (let i = 0; i < ids.length; i += CLAIM_CHUNK) n += await requeueScript(this.client, keys, ids.slice(i, i + CLAIM_CHUNK));
    return n;
  }

  /** Ids of the entries this consumer has pending (at most 1000). */
  async pending(stream: string): Promise<string[]> {
    const rows = (await this.client.call('XPENDING', stream, CONSUMER_GROUP, '-', '+', 1000, this.name)) as [
      string,
      string,
      number,
      number,
    ][];
    return rows.map(([entryId]) => entryId);
  }

  /**
   * How many entries a queue's pending entries list holds, for every consumer (`XPENDING` in its summary
   * form: O(consumers)).
   * @throws the Redis error; NOGROUP when the queue has no consumer group (or no stream).
   */
  async pendingCount(stream: string): Promise<number> {
    const reply = (await this.client.call('XPENDING', stream, CONSUMER_GROUP)) as [number | string, ...unknown[]];
    return Number(reply[0]);
  }

  /**
   * Resets the idle time of entries this consumer still holds and renews their tasks' markers to
   * `markerTtlMs` (claim.lua, {@link CLAIM_CHUNK} entries per call). Entries it no longer holds are not in `claimed` (those pending for no
   * consumer are in `ended`); entries pending whose stream entry is gone are in `gone` (left pending:
   * the recoverer reports them lost).
   */
  async hold(keys: QueueKeys, entries: readonly HeldEntry[], markerTtlMs: number): Promise<ClaimOutcome> {
    const out: ClaimOutcome = { claimed: [], gone: [], taken: [], ended: [] };
    for (let i = 0; i < entries.length; i += CLAIM_CHUNK) {
      const r = await claimScript(this.client, keys, this.name, markerTtlMs, entries.slice(i, i + CLAIM_CHUNK));
      out.claimed.push(...r.claimed);
      out.gone.push(...r.gone);
      out.taken.push(...r.taken);
      out.ended.push(...r.ended);
    }
    return out;
  }

  /**
   * Reclaims entries idle past `visibilityTimeoutMs` (recover.lua: XAUTOCLAIM, then back to the
   * stream; poison tasks past `maxDeliveries` stay pending for this consumer, to be killed; entries
   * whose stream entry is gone are lost). One call looks at up to {@link RECOVER_SCAN}.rounds ×
   * {@link RECOVER_SCAN}.count × 10 entries of the pending entries list (XAUTOCLAIM looks at COUNT × 10
   * per call), from `from` on. Entries in `opts.keep` (this server holds them: its slot table) are
   * left pending for it, their idle time reset, whatever their idle time was. With `opts.maxLateMs`,
   * each round carries this process's estimate of Redis time when it is sent (runtime/time.ts), and a
   * round Redis runs more than that much later takes nothing and ends the call (`lateMs` > 0): it waited
   * behind a stalled Redis, as may the claim renewals of live holders (recover.lua). With `opts.after`
   * as well (local base, epoch ms: runtime/time.ts `localNow`, when the caller sent a call to this
   * queue's Redis whose reply it has), each round is sent at most `maxLateMs` after the send of the call
   * whose reply it follows (that call, then the round before), else the call ends there (`slow`: true),
   * the cursor where it stopped (recovery/redis-stall.ts: a round so sent runs after every claim renewal
   * that waited in Redis with the call before it).
   * @param from where the scan starts: {@link SCAN_START} for the start of the list, or the `cursor` of
   * the previous call, which the list's end did not stop.
   * @returns what was taken, the `cursor` to go on from ({@link SCAN_START}: the list's end was reached),
   * `lateMs`: 0, or how many ms late (past `maxLateMs`) Redis ran the round that ended the call, and
   * `slow`: true when a round was not sent because the reply before it came too long after its call was sent.
   */
  async recover(
    keys: QueueKeys,
    opts: { visibilityTimeoutMs: number; maxDeliveries: number; keep?: readonly string[]; maxLateMs?: number; after?: number },
    from: string = SCAN_START,
  ): Promise<{ requeued: RequeuedTask[]; poison: PoisonTask[]; lost: string[]; cursor: string; lateMs: number; slow: boolean }> {
    const out = { requeued: [] as RequeuedTask[], poison: [] as PoisonTask[], lost: [] as string[], cursor: from, lateMs: 0, slow: false };
    let after = opts.after;
    for (let round = 0; round < RECOVER_SCAN.rounds; round++) {
      if (after !== undefined && opts.maxLateMs !== undefined) {
        const sent = engineTime.localNow();
        if (sent - after > opts.maxLateMs) {
          out.slow = true;
          break;
        }
        after = sent;
      }
      // no estimate of Redis time yet (no round trip sampled): nothing to measure lateness against
      const checked = opts.maxLateMs !== undefined && engineTime.bestRttMs < Infinity;
      const r = await recoverScript(this.client, keys, {
        consumer: this.name,
        minIdleMs: opts.visibilityTimeoutMs,
        count: RECOVER_SCAN.count,
        maxDeliveries: opts.maxDeliveries,
        counterTtlMs: DEFAULTS.counterTtlMs,
        cursor: out.cursor,
        keep: opts.keep,
        late: checked ? { sentAtMs: engineTime.now(), maxLateMs: opts.maxLateMs! } : undefined,
      });
      out.requeued.push(...r.requeued);
      out.poison.push(...r.poison);
      out.lost.push(...r.lost);
      out.cursor = r.cursor;
      out.lateMs = r.lateMs;
      if (out.cursor === SCAN_START || r.lateMs > 0) break;
    }
    return out;
  }

  /**
   * Deletes consumers that have been idle for an hour and own no pending entry (servers that are
   * gone: a live server touches its consumer every `blockTimeout`; one serving a queue paused for
   * over an hour is deleted too, and made again by its next read). A consumer that still owns
   * entries is never deleted; the recoverer reclaims those. XINFO picks the candidates; each is
   * checked again and deleted in one script (delete-consumers.lua), since XGROUP DELCONSUMER drops
   * the pending entries a consumer read since the XINFO.
   * @param idleMs least idle time of a consumer to delete, ms (a test's shorter one)
   * @returns the names deleted
   */
  async deleteGoneConsumers(stream: string, idleMs = GONE_CONSUMER_IDLE_MS): Promise<string[]> {
    const rows = (await this.client.call('XINFO', 'CONSUMERS', stream, CONSUMER_GROUP)) as (string | number)[][];
    const names: string[] = [];
    for (const row of rows) {
      const info: Record<string, string | number> = {};
      for (let i = 0; i + 1 < row.length; i += 2) info[String(row[i])] = row[i + 1];
      if (info.name !== this.name && Number(info.pending) === 0 && Number(info.idle) > idleMs) names.push(String(info.name));
    }
    return names.length === 0 ? [] : deleteConsumersScript(this.client, stream, idleMs, names);
  }
}
