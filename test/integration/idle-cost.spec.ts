// The idle cost of a worker server (issue 22 target 3): what an idle server on one queue sends to
// Redis over a window, by command, against the bounds its design sets. On a private redis-server, so
// that INFO commandstats counts this server's commands only (inner calls of scripts included).
import { Redis } from 'ioredis';
import { DEFAULTS } from '../../lib/core/runtime/defaults.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { recordingLogger } from '../helpers/wait.js';

let redis: PrivateRedis;
let admin: Redis;
beforeAll(async () => {
  redis = await PrivateRedis.start();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  admin.disconnect();
  await redis.kill();
});

/** Calls per command (lower case) so far, from INFO commandstats. */
async function calls(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const m of String(await admin.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out.set(m[1], Number(m[2]));
  return out;
}

test('an idle server prunes the servers rows once a minute, not at every beat, and reads the paused set as a fallback only', async () => {
  const s = new ChronosServer({ connection: redis.url, namespace: 'idle-cost', queues: ['q'], logger: recordingLogger() });
  try {
    await s.start(); // its first beat pruned, and it read the paused and limited sets
    const before = await calls();
    // a window of two heartbeats and a second (longer than the fallback read's period of earlier versions)
    const windowMs = 2 * DEFAULTS.serverHeartbeatMs + 1000;
    // eslint-disable-next-line local/no-fixed-sleep -- the window of idle time itself is what is measured
    await new Promise((r) => setTimeout(r, windowMs));
    const after = await calls();
    const sent = (cmd: string) => (after.get(cmd) ?? 0) - (before.get(cmd) ?? 0);
    // the beats of the window wrote the info and the score (two beats, maybe a third at its edge) ...
    expect(sent('set')).toBeGreaterThanOrEqual(2);
    // ... and none pruned: the next pruning comes serverPruneMs after the first beat (before: one per beat)
    expect(DEFAULTS.serverPruneMs).toBeGreaterThan(windowMs);
    expect(sent('zremrangebyscore')).toBe(0);
    // the paused and limited sets are read again at a notice, a reconnect, or every pausedPollMs (before: 10 s, one read in the window)
    expect(DEFAULTS.pausedPollMs).toBeGreaterThan(windowMs);
    expect(sent('smembers')).toBe(0);
  } finally {
    await s.shutdown();
  }
});
