// A Redis stalled (SIGSTOP) past the visibility timeout, and a visibility-timeout sweep sent in the
// last moments of the stall (its server's own timers late: a stall of that process too). Redis serves
// the sockets that waited in the order their first bytes came, so when the sweeping server's socket
// had sent something early in the stall (its presence tick), its sweep ran before a live holder's claim
// renewal that waited in Redis as well, and, not late enough to be refused (recover.lua's lateness
// check), took the holder's running task: it would run twice. The multi-process case, where it was seen
// once in a loaded CI run, is queue-limit-redis-stall.spec.ts. Now a sweep call follows a reply of
// Redis (the queue's XPENDING summary), which Redis writes only after it ran every socket that waited.
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { ChronosServer } from '../../lib/core/worker/server.js';
import type { Recoverer } from '../../lib/core/recovery/recoverer.js';
import { openConnection } from '../../lib/core/redis/connection.js';
import { claimScript } from '../../lib/core/redis/commands/recovery.js';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { newNamespace } from '../helpers/redis.js';
import { recordingLogger } from '../helpers/wait.js';

jest.setTimeout(30_000);

const VISIBILITY_MS = 3000; // the sweep refuses calls Redis runs more than 500 ms late (a sixth of it)
const STALL_MS = 4000; // the holder's entry is idle past the timeout when Redis resumes
const SWEEP_BEFORE_END_MS = 200; // the sweep goes out this long before the stall ends: late by less than 500 ms

/** `ms` of the stall itself (what the test is about: no event to await). */
function stallFor(ms: number): Promise<void> {
  // eslint-disable-next-line local/no-fixed-sleep -- the stall's timeline itself is the point
  return new Promise((r) => setTimeout(r, ms));
}

test('a sweep sent just before a stalled Redis resumes runs after the claim renewal that waited in Redis: the live holder keeps its task', async () => {
  const redis = await PrivateRedis.start();
  const ns = newNamespace('order');
  const keys = new QueueKeys(ns, 'default');
  const setup = new Redis(redis.url);
  const holder = openConnection(redis.url).client; // the live holder's connection (claim.lua defined on it)
  const sweeperClient = new Redis(redis.url);
  const server = new ChronosServer({
    connection: sweeperClient,
    namespace: ns,
    visibilityTimeout: VISIBILITY_MS,
    recoverInterval: 60_000, // its own sweep job does not run: the test calls the sweep
    logger: recordingLogger(),
  });
  server.handle('job', async () => {});
  try {
    // the holder's running task: an entry pending for consumer "holder", its claim just renewed
    await setup.xgroup('CREATE', keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM');
    const entryId = (await setup.xadd(keys.stream, '*', 'id', 't-1', 'type', 'job', 'payload', '{}', 'meta', '{}'))!;
    await setup.xreadgroup('GROUP', CONSUMER_GROUP, 'holder', 'COUNT', 1, 'STREAMS', keys.stream, '>');
    await server.start(); // its fetch reads new entries only: the holder's stays the holder's
    const renew = () => claimScript(holder, keys, 'holder', 60_000, [{ entryId, taskId: 't-1', markers: [] }]);
    const sweep = () => (server as unknown as { recoverer: Recoverer }).recoverer.recover(true);
    // both have run before the stall (their scripts are in Redis's cache: no NOSCRIPT round trip after it)
    expect((await renew()).claimed).toEqual([entryId]);
    expect(await sweep()).toEqual([]);

    redis.pause();
    const early = sweeperClient.ping(); // the sweeping server's socket gets its first bytes early in the stall (as its presence tick's)
    await stallFor(1000);
    const renewal = renew(); // waits in Redis
    await stallFor(STALL_MS - 1000 - SWEEP_BEFORE_END_MS);
    const swept = sweep();
    await stallFor(SWEEP_BEFORE_END_MS);
    redis.resume();

    await early;
    expect(await swept).toEqual([]); // nothing taken (before: ['default'], the holder's entry requeued)
    expect((await renewal).claimed).toEqual([entryId]);
    const rows = (await setup.xpending(keys.stream, CONSUMER_GROUP, '-', '+', 10)) as [string, string, number, number][];
    expect(rows.map(([id, owner]) => [id, owner])).toEqual([[entryId, 'holder']]);
  } finally {
    redis.resume();
    await server.shutdown();
    holder.disconnect();
    sweeperClient.disconnect();
    setup.disconnect();
    await redis.kill();
  }
});
