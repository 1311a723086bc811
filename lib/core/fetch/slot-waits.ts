import { keySlot } from '../redis/cluster.js';
import { duplicateConnection, type RedisClient } from '../redis/connection.js';
import { readDeadlineMs, withDeadline } from './readers.js';

/** A stream a waiting fetch blocks on (`XREAD`, which claims nothing), from an id: a queue's stream, or its group signal. */
export interface BlockOn {
  key: string;
  lastId: string;
}

interface SlotRead {
  conn: RedisClient;
  /** The streams its read waits on (their keys, joined). */
  keys: string;
  /** The read in flight, if any: resolves with its reply (null: it timed out empty), or undefined when it failed. */
  read?: Promise<unknown>;
}

/**
 * The wait of a limited fetch on Redis Cluster when its streams live in several slots (one `XREAD`
 * over several slots is refused with CROSSSLOT): one blocking `XREAD` per slot, each on its own
 * connection (a duplicate of the fetcher's, so it follows the slot to a promoted master), all in
 * parallel; the wait ends when any of them tells of an entry. A read still blocked when a wait ended
 * otherwise (a wake, another slot's entry) stays in flight and serves the next wait on the same
 * streams: nothing was added to them since it was sent (else it would have returned), so its ids are
 * still the ones to wait from. A wait on other streams of that slot closes its connection first.
 * Every read has the client-side deadline of the fetcher's reads ({@link readDeadlineMs}).
 */
export class SlotWaits {
  private readonly reads = new Map<number, SlotRead>();
  private closed = false;

  constructor(private readonly client: RedisClient) {}

  /**
   * Waits on `blockOn` for up to `blockMs`: resolves `'timeout'` when every read ended empty,
   * `'other'` as soon as one returned an entry or failed (the fetch runs again; a failed read's
   * connection is replaced). Never rejects.
   */
  wait(blockOn: readonly BlockOn[], blockMs: number): Promise<'timeout' | 'other'> {
    const bySlot = new Map<number, BlockOn[]>();
    for (const b of blockOn) {
      const slot = keySlot(b.key);
      bySlot.set(slot, [...(bySlot.get(slot) ?? []), b]);
    }
    const reads = [...bySlot].map(([slot, on]) => this.read(slot, on, blockMs));
    return new Promise((resolve) => {
      let empty = 0;
      for (const r of reads)
        void r.then((reply) => {
          if (reply !== null) resolve('other');
          else if (++empty === reads.length) resolve('timeout');
        });
    });
  }

  /**
   * Closes every connection at once, and opens none after (a wait then ends at once). Disconnected,
   * not QUIT: a QUIT queued behind a read still blocked (one left in flight for the next wait) waited
   * out closeClient's bound, a second added to the shutdown of every idle worker of a limited queue on
   * a cluster; the reads claim nothing, so nothing is lost. Synchronous: a disconnect waits for no
   * reply, and the reads it ends settle as failed reads do (read's catch).
   */
  close(): void {
    this.closed = true;
    for (const r of this.reads.values()) r.conn.disconnect();
    this.reads.clear();
  }

  private read(slot: number, on: readonly BlockOn[], blockMs: number): Promise<unknown> {
    if (this.closed) return Promise.resolve(undefined); // closed: no connection that would outlive the server
    const keys = on.map((b) => b.key).join(' ');
    let r = this.reads.get(slot);
    if (r?.read && r.keys === keys) return r.read; // still blocked on the same streams: nothing new there since
    if (r?.read) this.drop(slot, r.conn);
    r = this.reads.get(slot) ?? { conn: duplicateConnection(this.client), keys };
    r.keys = keys;
    this.reads.set(slot, r);
    const entry = r;
    const args: (string | number)[] = ['COUNT', 1, 'BLOCK', blockMs, 'STREAMS', ...on.map((b) => b.key), ...on.map((b) => b.lastId)];
    entry.read = withDeadline(entry.conn.call('XREAD', ...args), readDeadlineMs(blockMs), () => this.drop(slot, entry.conn))
      .catch(() => {
        this.drop(slot, entry.conn); // closed, failed over, hung: the next wait opens another connection
        return undefined;
      })
      .finally(() => {
        if (this.reads.get(slot) === entry) entry.read = undefined;
      });
    return entry.read;
  }

  private drop(slot: number, conn: RedisClient): void {
    if (this.reads.get(slot)?.conn !== conn) return;
    this.reads.delete(slot);
    conn.disconnect();
  }
}
