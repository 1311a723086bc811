// recover.lua's lateness check (recovery/redis-stall.ts): a sweep call that Redis runs long after it
// was sent waited behind a stalled Redis, as may the claim renewals of the live holders of the entries
// it would take (their idle time counts the stall): it takes nothing. The multi-process case is
// queue-limit-redis-stall.spec.ts; this is the script alone, with a lateness given rather than waited for.
import type { Redis } from 'ioredis';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { recoverScript, type RecoverArgs } from '../../lib/core/redis/commands/recovery.js';
import { SCAN_START } from '../../lib/core/redis/protocol.js';
import { connect, deleteNamespace, newNamespace } from '../helpers/redis.js';

const VISIBILITY_MS = 30_000;
let redis: Redis;
let ns: string;
let keys: QueueKeys;
beforeEach(() => {
  redis = connect();
  ns = newNamespace('late');
  keys = new QueueKeys(ns, 'default');
});
afterEach(async () => {
  redis.disconnect();
  await deleteNamespace(ns);
});

/** Redis time now, epoch ms. */
async function redisNow(): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** Task `taskId` read by consumer `holder`, its entry idle past the visibility timeout (what a stall of Redis leaves). */
async function heldPastTimeout(taskId = 't-1'): Promise<string> {
  if (!(await redis.exists(keys.stream))) await redis.xgroup('CREATE', keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM');
  const entryId = (await redis.xadd(keys.stream, '*', 'id', taskId, 'type', 'job', 'payload', '{}', 'meta', '{}'))!;
  await redis.xreadgroup('GROUP', CONSUMER_GROUP, 'holder', 'COUNT', 10, 'STREAMS', keys.stream, '>');
  await redis.xclaim(keys.stream, CONSUMER_GROUP, 'holder', 0, entryId, 'IDLE', 2 * VISIBILITY_MS, 'JUSTID');
  return entryId;
}

const round = (late: RecoverArgs['late']): RecoverArgs => ({
  consumer: 'sweeper',
  minIdleMs: VISIBILITY_MS,
  count: 100,
  maxDeliveries: 5,
  counterTtlMs: 60_000,
  cursor: SCAN_START,
  late,
});

test('a sweep round that Redis runs past its lateness limit takes nothing: the entry stays with its holder, and says how late it ran', async () => {
  const entryId = await heldPastTimeout();
  const maxLateMs = 1000;
  const out = await recoverScript(redis, keys, round({ sentAtMs: (await redisNow()) - 3 * maxLateMs, maxLateMs }));
  expect(out.requeued).toEqual([]);
  expect(out.lateMs).toBeGreaterThan(maxLateMs);
  expect(out.cursor).toBe(SCAN_START);
  const [[id, owner, idleMs]] = (await redis.xpending(keys.stream, CONSUMER_GROUP, '-', '+', 10)) as [string, string, number][];
  expect([id, owner]).toEqual([entryId, 'holder']);
  expect(Number(idleMs)).toBeGreaterThan(VISIBILITY_MS); // not claimed: its idle time was not reset either
});

test('a sweep round that Redis runs in time (or unchecked) still takes an entry idle past the visibility timeout', async () => {
  await heldPastTimeout();
  const out = await recoverScript(redis, keys, round({ sentAtMs: await redisNow(), maxLateMs: 60_000 }));
  expect(out.lateMs).toBe(0);
  expect(out.requeued.map((t) => t.taskId)).toEqual(['t-1']);
  expect(await redis.xpending(keys.stream, CONSUMER_GROUP, '-', '+', 10)).toEqual([]);
  await heldPastTimeout('t-2');
  const unchecked = await recoverScript(redis, keys, round(undefined));
  expect(unchecked.lateMs).toBe(0);
  expect(unchecked.requeued.map((t) => t.taskId)).toEqual(['t-2']);
});
