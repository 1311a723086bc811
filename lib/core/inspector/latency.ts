import type { RedisClient } from '../redis/connection.js';
import { SlotPipeline } from '../redis/cluster.js';
import { CONSUMER_GROUP, QueueKeys } from '../redis/keys.js';

/** The `last-delivered-id` of the Chronos group in an `XINFO GROUPS` reply; '-' when the group does not exist yet. */
function lastDelivered(reply: unknown): string {
  for (const g of (reply as unknown[][]) ?? []) {
    const fields = g as (string | number)[];
    const at = (k: string) => fields[fields.indexOf(k) + 1];
    if (at('name') === CONSUMER_GROUP) return `(${String(at('last-delivered-id'))}`;
  }
  return '-';
}

/** When a stream entry became ready: its id's time, or its trigger instant when later (a trigger task enqueued early). */
function readyAt(entryId: string, fields: string[]): number {
  const added = Number(entryId.slice(0, entryId.indexOf('-')));
  const i = fields.indexOf('meta');
  if (i < 0 || i % 2 !== 0) return added;
  try {
    const tr = (JSON.parse(fields[i + 1]) as { tr?: unknown }).tr;
    return typeof tr === 'number' ? Math.max(added, tr) : added;
  } catch {
    return added;
  }
}

/**
 * The age of the oldest task waiting in each queue's stream (not yet delivered to a worker), ms
 * by Redis time; 0 when none waits. "Waiting since" is when the entry entered the stream (enqueued,
 * or moved in when due, retried or put back) or its trigger instant, whichever is later.
 * Costs `1 + 2 × queues` commands in two round trips (`TIME`, then per queue `XINFO GROUPS` and an
 * `XRANGE … COUNT 1` after the group's last delivered id), whatever the queue sizes.
 */
export async function queueLatencies(client: RedisClient, namespace: string, names: readonly string[]): Promise<Map<string, number>> {
  const streams = names.map((n) => new QueueKeys(namespace, n).stream);
  const p1 = new SlotPipeline(client); // one pipeline per slot on a cluster
  p1.add(streams[0], (c) => c.time());
  for (const s of streams) p1.add(s, (c) => c.call('XINFO', 'GROUPS', s));
  const r1 = await p1.exec();
  const [sec, us] = r1[0][1] as [string, string];
  const now = Number(sec) * 1000 + Math.floor(Number(us) / 1000);
  const p2 = new SlotPipeline(client);
  const asked: number[] = [];
  streams.forEach((s, i) => {
    const [err, reply] = r1[i + 1];
    if (err) return; // no stream yet: nothing waits
    asked.push(i);
    p2.add(s, (c) => c.xrange(s, lastDelivered(reply), '+', 'COUNT', 1));
  });
  const out = new Map<string, number>(names.map((n) => [n, 0]));
  if (asked.length === 0) return out;
  const r2 = await p2.exec();
  asked.forEach((i, j) => {
    const [err, entries] = r2[j];
    const first = err ? undefined : (entries as [string, string[]][])[0];
    if (first) out.set(names[i], Math.max(0, now - readyAt(first[0], first[1])));
  });
  return out;
}
