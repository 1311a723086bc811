import { Redis } from 'ioredis';

/** The error ioredis emits for a MONITOR line it takes for a reply to no command (see {@link openMonitor}). */
const QUEUE_STATE = /Command queue state error/;

/**
 * A MONITOR connection to `url`, resolved once it is monitoring. ioredis sets its "monitoring" status
 * in a promise continuation after MONITOR's OK, and parses the rest of the same socket read first: a
 * line that came with the OK (the shared Redis always has other specs' traffic) is taken for a reply
 * to no command and emitted as "Command queue state error". `Redis#monitor()` rejected with the first
 * and a second one was an unhandled error, failing a spec whose assertions held (CI, once). Those lines
 * predate the tap and are ignored; any other error still surfaces. (Measured: 20 taps opened beside a
 * loop of SETs: 485 such lines ignored; `Redis#monitor()` crashed the process on the first.)
 */
export async function openMonitor(url: string): Promise<Redis> {
  const monitor = new Redis(url, { monitor: true, lazyConnect: true, maxRetriesPerRequest: null });
  monitor.on('error', (err: Error) => {
    if (!QUEUE_STATE.test(err.message)) throw err;
  });
  // not events.once: it rejects on the first 'error', which here is one of those lines
  const monitoring = new Promise<void>((resolve) => monitor.once('monitoring', () => resolve()));
  await monitor.connect();
  await monitoring;
  return monitor;
}

/** Ends a MONITOR connection: its listeners go first, so lines still in flight are dropped. */
export function closeMonitor(monitor: Redis): void {
  monitor.removeAllListeners('monitor');
  monitor.disconnect();
}
