/**
 * A connection Chronos owns stays open until Chronos closes it. ioredis can end a client by itself
 * (status `end`, every later command rejected with "Connection is closed.", no reconnect ever): a
 * Sentinel client's failover detector (`failoverDetector`, which Chronos turns on: SENTINEL_OPTIONS)
 * disconnects its connector when the sentinels announce `+switch-master`, and when that lands while
 * the client is reconnecting (asking a sentinel for the primary, after the old primary died), the
 * connect in flight fails with "Connection is closed." and ioredis ends the client. Seen in trial 45:
 * the primary SIGKILLed under 3 replicas, one replica's every connection ended (its worker and
 * scheduler stopped for good, the others took it for dead) and another's blocking connection (it
 * fetched no task again), while the process lived on.
 */
import type { Redis } from 'ioredis';
import type { RedisClient } from './types.js';

/** The first wait before a connection that ended by itself is opened again, ms; doubled per try, at most {@link REOPEN_MAX_MS}. */
export const REOPEN_FIRST_MS = 50;
/** The longest wait between two tries to open a connection that ended by itself, ms. */
export const REOPEN_MAX_MS = 2000;

const closing = new WeakSet<object>();

/**
 * Opens `client` again whenever it ends without a `quit()` or `disconnect()` (without `reconnect`)
 * of its own: each such call marks it as closed on purpose, so a close by Chronos (or by the code that
 * holds a duplicate) is left closed. A re-opened client resubscribes to its channels (ioredis keeps
 * the subscriptions of its last ready connection). Not for a Cluster client, which reconnects its
 * nodes itself. Call it once, on a client Chronos owns.
 */
export function reopenWhenEnded(client: RedisClient): void {
  if ((client as { isCluster?: boolean }).isCluster) return;
  const r = client as Redis;
  const quit = r.quit.bind(r) as (...a: unknown[]) => Promise<'OK'>;
  const disconnect = r.disconnect.bind(r);
  r.quit = ((...a: unknown[]) => {
    closing.add(r);
    return quit(...a);
  }) as Redis['quit'];
  r.disconnect = (reconnect?: boolean) => {
    if (!reconnect) closing.add(r);
    disconnect(reconnect);
  };
  let tries = 0;
  r.on('ready', () => (tries = 0));
  r.on('end', () => {
    if (closing.has(r)) return;
    const wait = Math.min(REOPEN_MAX_MS, REOPEN_FIRST_MS * 2 ** tries++);
    setTimeout(() => {
      if (closing.has(r) || r.status !== 'end') return;
      // a failure ends it again, and this listener tries once more
      r.connect().catch(() => undefined);
    }, wait).unref();
  });
}
