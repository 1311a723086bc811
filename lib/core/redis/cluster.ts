import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import { isRedisUnavailable } from './connection.js';
import type { RedisClient } from './types.js';

/**
 * What Chronos needs to know about Redis Cluster: whether a client is one, the slot of a key, a
 * pipeline that splits itself by slot, and SCAN over every master. On a single Redis (or Sentinel)
 * each of these is the plain operation.
 */

/** True for an ioredis `Cluster` (duck-typed on `isCluster`, so another copy of ioredis works). */
export function isCluster(client: RedisClient): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}

const CRC16_TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let j = 0; j < 8; j++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

/** The cluster slot (0..16383) of a key: CRC16 of its hash tag (`{…}`, when non-empty) or of the whole key. */
export function keySlot(key: string): number {
  let s = key;
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) s = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(s)) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc % 16384;
}

/** One command's reply in a pipeline: `[error, reply]`. */
export type Reply = [Error | null, unknown];

/**
 * The replies of a pipeline or `MULTI`, `[error, reply]` per command in order; a reply error of
 * Redis (`NOGROUP`, `WRONGTYPE`) stays in its place for the caller to read.
 * @throws the client's own error when it did not serve the commands ({@link isRedisUnavailable}: the
 * connection closed, its retries ran out, a command timed out). Such a "reply" never came: read as a
 * missing value it made the Inspector's reads fail with a TypeError (`val is not a function or its
 * return value is not iterable`), or say a task that is there was not found (trial 37).
 */
export async function execReplies(p: ChainableCommander): Promise<Reply[]> {
  const replies = ((await p.exec()) ?? []) as Reply[];
  const lost = replies.find(([err]) => isRedisUnavailable(err));
  if (lost) throw lost[0]!;
  return replies;
}

/**
 * The replies of a Redis Cluster node that refused a command before running it: the slot is served
 * elsewhere (`MOVED`), is moving (`ASK`: the key left already; `TRYAGAIN`: a multi-key command or a
 * script whose keys are split between the two nodes, or not all there), or the cluster is down.
 * Such a command did nothing: sending it again is safe.
 */
const REFUSED = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/;

/** True when `err` is a cluster node's refusal of a command it did not run (see REFUSED). */
export function isRefusedByCluster(err: unknown): err is Error {
  return err instanceof Error && REFUSED.test(err.message);
}

/**
 * A pipeline whose commands may touch keys in different slots: each command names its key, and on a
 * cluster one ioredis pipeline is sent per slot (in parallel); the replies come back in the order the
 * commands were added. Commands with no key (`TIME`) join the first slot's pipeline.
 *
 * On a cluster, the commands a node refused without running them ({@link isRefusedByCluster}: the
 * slot is migrating, or moved) are sent again, every `retryDelayOnTryAgain` ms (the client's option,
 * 200 ms with Chronos's: connection.ts CLUSTER_RETRY_OPTIONS), until served; after `maxRedirections`
 * such rounds each still refused command's reply is ioredis's `Too many Cluster redirections. Last
 * error: …` (failures.ts: Redis unavailable). ioredis re-sends a pipeline itself only when all its
 * commands were refused alike and those that ran are reads: while a slot migrates, a script with its
 * keys still on the old node ran and the next one, with a key absent there, was refused (TRYAGAIN),
 * and that refusal came back as the reply (an enqueueBulk threw `TRYAGAIN …` after writing part of
 * its tasks). A command sent again runs after those of its slot that ran at the first try, each
 * alone ({@link sendAlone}), in order within its slot.
 */
export class SlotPipeline {
  private readonly ops: { key: string | undefined; add: (p: ChainableCommander) => void }[] = [];

  constructor(private readonly client: RedisClient) {}

  /** Number of commands added. */
  get length(): number {
    return this.ops.length;
  }

  /** Adds a command on `key` (undefined for a key-less command). */
  add(key: string | undefined, add: (p: ChainableCommander) => void): this {
    this.ops.push({ key, add });
    return this;
  }

  /** Sends every command; one `[error, reply]` per command, in order. */
  async exec(): Promise<Reply[]> {
    if (this.ops.length === 0) return [];
    if (!isCluster(this.client)) {
      const p = this.client.pipeline();
      for (const op of this.ops) op.add(p);
      return execReplies(p);
    }
    const out: Reply[] = new Array(this.ops.length);
    const { retryDelayOnTryAgain, maxRedirections } = this.client.options;
    const rounds = Math.max(1, maxRedirections ?? 16);
    let pending = this.ops.map((_, i) => i);
    for (let round = 1; pending.length > 0; round++) {
      if (round > 1) await new Promise((r) => setTimeout(r, Math.max(retryDelayOnTryAgain ?? 100, 10)));
      await this.send(pending, out, round > 1);
      pending = pending.filter((i) => isRefusedByCluster(out[i][0]));
      if (round >= rounds) {
        for (const i of pending) out[i] = [new Error(`Too many Cluster redirections. Last error: ${out[i][0]}`), null];
        break;
      }
    }
    return out;
  }

  /**
   * Sends the commands `idx` (one ioredis pipeline per slot, in parallel; `alone`: each command by
   * itself, in order within its slot) and puts their replies in `out`.
   */
  private async send(idx: readonly number[], out: Reply[], alone: boolean): Promise<void> {
    const groups = new Map<number, number[]>();
    const firstSlot = keySlot(this.ops.find((o) => o.key !== undefined)?.key ?? '');
    for (const i of idx) {
      const key = this.ops[i].key;
      const slot = key === undefined ? firstSlot : keySlot(key);
      const g = groups.get(slot);
      if (g) g.push(i);
      else groups.set(slot, [i]);
    }
    await Promise.all(
      [...groups.values()].map(async (group) => {
        if (alone) {
          // once one is not served within the client's bound (Redis unavailable), neither are the rest of its slot
          let lost: Error | null = null;
          for (const i of group) {
            out[i] = lost
              ? [lost, null]
              : await sendAlone(
                  this.client,
                  recordCommands((p) => this.ops[i].add(p)),
                );
            if (isRedisUnavailable(out[i][0])) lost = out[i][0];
          }
          return;
        }
        const p = this.client.pipeline();
        for (const i of group) this.ops[i].add(p);
        const replies = await execReplies(noPipelineRedirect(p));
        group.forEach((i, j) => (out[i] = replies[j] ?? [new Error('no reply'), null]));
      }),
    );
  }
}

/**
 * Ends a cluster pipeline with a `PING` (on its node; its reply is the last, to drop), so that ioredis
 * never re-sends the pipeline itself: it does when every refused command was refused alike and every
 * command that ran is flagged read-only (`PING` is not), and then sends them *all* again after an `ASK`
 * to the importing node, where the reads that had run on the old owner read keys still there as absent
 * (the Inspector found a scheduled task's score but not its definition, and called it not found).
 * The refused commands are sent again by the caller, each alone ({@link sendAlone}).
 */
function noPipelineRedirect(p: ChainableCommander): ChainableCommander {
  return p.ping();
}

/** A command as a pipeline was told it: its method name and arguments. */
interface RecordedCommand {
  name: string;
  args: unknown[];
}

/** The commands `build` adds to a pipeline, in order, to be sent later by themselves ({@link sendAlone}). */
function recordCommands(build: (p: ChainableCommander) => void): RecordedCommand[] {
  const calls: RecordedCommand[] = [];
  const recorder: ChainableCommander = new Proxy({} as ChainableCommander, {
    get: (_, name) =>
      typeof name !== 'string'
        ? undefined
        : (...args: unknown[]) => {
            calls.push({ name, args });
            return recorder;
          },
  });
  build(recorder);
  return calls;
}

/**
 * Sends recorded commands one at a time, each by itself (not in a pipeline), and returns the last
 * one's reply as `[error, reply]` (an error ends it: the error is the reply). A single command
 * follows a cluster's redirections in ioredis: an `ASK` to the importing node, which ioredis connects
 * to if it had never served a slot (a node just added); a pipeline told `ASK` was sent again to the
 * node its slot cache names, the old owner, until its redirections ran out. ioredis retries a single
 * command's `TRYAGAIN` itself, up to `maxRedirections`, then rejects it with `Too many Cluster
 * redirections` (Redis unavailable), which is the reply then. Never rejects.
 */
async function sendAlone(client: RedisClient, calls: readonly RecordedCommand[]): Promise<Reply> {
  let reply: Reply = [new Error('no command'), null];
  for (const { name, args } of calls) {
    const run = (client as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name];
    reply = await run.apply(client, args).then(
      (v): Reply => [null, v],
      (e: unknown): Reply => [e instanceof Error ? e : new Error(String(e)), null],
    );
    if (reply[0]) break;
  }
  return reply;
}

/**
 * Sends a pipeline of reads (`build` adds them; all on keys of one slot, as any ioredis pipeline on a
 * cluster) and returns its replies as {@link execReplies} does. On a cluster, the reads a node
 * refused without running them ({@link isRefusedByCluster}: their slot is migrating) are sent again,
 * each by itself ({@link sendAlone}: it follows an `ASK` to the importing node), every
 * `retryDelayOnTryAgain` ms for up to `maxRedirections` rounds (as {@link SlotPipeline}). With a slot
 * half-moved, ioredis sent again only a pipeline refused whole and of commands flagged read-only (not
 * `TIME`), so the refused reads came back as errors among the others: the Inspector counted them 0,
 * or read them as absent (a live server left out of `servers()`, a scheduled task "not found"); and a
 * whole pipeline sent again was refused again, for as long as the migration held the slot.
 * @throws as execReplies; `Too many Cluster redirections. Last error: …` (Redis unavailable) when
 * still refused after the last round.
 */
export async function execReads(client: RedisClient, build: (p: ChainableCommander) => void): Promise<Reply[]> {
  const p = client.pipeline();
  build(p);
  if (!isCluster(client)) return execReplies(p);
  const out = (await execReplies(noPipelineRedirect(p))).slice(0, -1);
  if (!out.some(([err]) => isRefusedByCluster(err))) return out;
  const reads = recordCommands(build);
  const rounds = Math.max(1, client.options.maxRedirections ?? 16);
  const delayMs = Math.max(client.options.retryDelayOnTryAgain ?? 100, 10);
  let pending = reads.map((_, i) => i).filter((i) => isRefusedByCluster(out[i][0]));
  for (let round = 2; pending.length > 0; round++) {
    if (round > rounds) throw new Error(`Too many Cluster redirections. Last error: ${out[pending[0]][0]}`);
    if (round > 2) await new Promise((r) => setTimeout(r, delayMs));
    await Promise.all(pending.map(async (i) => (out[i] = await sendAlone(client, [reads[i]]))));
    const lost = pending.find((i) => isRedisUnavailable(out[i][0]));
    if (lost !== undefined) throw out[lost][0]!;
    pending = pending.filter((i) => isRefusedByCluster(out[i][0]));
  }
  return out;
}

/**
 * Runs `send`, which sends commands on `client` without awaiting them, with the client's sockets
 * corked (on a cluster, those of its masters), and uncorks them once it returns: what it sent to
 * one node leaves in one socket write, and that node is woken once for all of it. A worker's fetch
 * round on a cluster sends each master its acks and its read: written one by one they were two writes
 * per master, and each woke it (issue 22 target 5, bench/experiments/cluster-cost.ts); on one Redis,
 * a fetch's acks and read, a shard batch's lastFired and orphaned-since reads: a syscall and a wake of
 * Redis less per extra command. A socket not connected is left alone (a command for it waits in
 * ioredis's offline queue, as without this). Corks nest (a stream counts them).
 * @returns what `send` returned
 */
export function corked<T>(client: RedisClient, send: () => T): T {
  const nodes = isCluster(client) ? client.nodes('master') : [client];
  const socks: NonNullable<Redis['stream']>[] = [];
  for (const n of nodes) {
    const s = n.stream as Redis['stream'] | undefined;
    if (n.status === 'ready' && s && typeof s.cork === 'function') {
      s.cork();
      socks.push(s);
    }
  }
  try {
    return send();
  } finally {
    for (const s of socks) s.uncork();
  }
}

/** The nodes to SCAN: every master of a cluster, or the one client. */
export function scanNodes(client: RedisClient): (Redis | RedisClient)[] {
  return isCluster(client) ? client.nodes('master') : [client];
}

/**
 * Every key matching `match` (a SCAN MATCH glob), on every master of a cluster or on the one node
 * otherwise; SCAN with `COUNT count` per call, never KEYS. Keys are yielded in batches as SCAN
 * returns them (a key may appear twice when the keyspace changes during the scan, as with SCAN).
 */
export async function* scanAll(client: RedisClient, match: string, count = 1000): AsyncGenerator<string[]> {
  for (const node of scanNodes(client)) {
    let cursor = '0';
    do {
      const [next, keys] = await (node as Redis).scan(cursor, 'MATCH', match, 'COUNT', count);
      cursor = next;
      if (keys.length > 0) yield keys;
    } while (cursor !== '0');
  }
}
