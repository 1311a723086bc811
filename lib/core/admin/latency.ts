import { CONSUMER_GROUP } from '../redis/keys.js';
import { ENTRY_FIELDS, META } from '../redis/protocol.js';

/**
 * The exclusive XRANGE start after the Chronos group's `last-delivered-id` in an `XINFO GROUPS`
 * reply (`(<id>`), or `-` when the group does not exist yet (nothing was delivered).
 */
export function afterLastDelivered(reply: unknown): string {
  if (!Array.isArray(reply)) return '-';
  for (const g of reply as unknown[][]) {
    const fields = g as (string | number)[];
    const at = (k: string) => fields[fields.indexOf(k) + 1];
    if (at('name') === CONSUMER_GROUP) return `(${String(at('last-delivered-id'))}`;
  }
  return '-';
}

/**
 * When a stream entry became ready to run, epoch ms: its id's time (enqueued, or moved in when
 * due, retried or put back), or its trigger instant when later (a trigger task enqueued ahead).
 * This is the one definition of "waiting since" behind a queue's latency.
 */
export function readyAt(entryId: string, fields: string[]): number {
  const added = Number(entryId.slice(0, entryId.indexOf('-')));
  const i = fields.indexOf(ENTRY_FIELDS[3]);
  if (i < 0 || i % 2 !== 0) return added;
  try {
    const tr = (JSON.parse(fields[i + 1]) as Record<string, unknown>)[META.triggerAt];
    return typeof tr === 'number' ? Math.max(added, tr) : added;
  } catch {
    return added;
  }
}
