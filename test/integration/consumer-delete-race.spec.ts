// Deleting the consumers of gone servers (Consumer.deleteGoneConsumers) never drops pending entries:
// XGROUP DELCONSUMER deletes a consumer's pending entries with it, and the check (XINFO: idle over an
// hour, nothing pending) used to be one call and the delete another. A consumer that read entries in
// between (a worker resuming a queue paused for over an hour) lost them from the pending entries list
// while its handlers ran: had that worker died, nothing would have recovered them (review 46).
import type { Redis } from 'ioredis';
import { Consumer } from '../../lib/core/fetch/consumer.js';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { connect, deleteNamespace, newNamespace } from '../helpers/redis.js';

const IDLE_MS = 50;
let ns: string;
let redis: Redis;
let other: Redis;
let stream: string;
beforeEach(async () => {
  ns = newNamespace('delcons');
  redis = connect();
  other = connect();
  stream = new QueueKeys(ns, 'q').stream;
  await redis.xgroup('CREATE', stream, CONSUMER_GROUP, '$', 'MKSTREAM');
  for (const c of ['resuming', 'gone']) await redis.call('XGROUP', 'CREATECONSUMER', stream, CONSUMER_GROUP, c);
  // both idle past the threshold, by Redis's own clock (PTTL of a key set with PX counts it)
  await redis.set(`${ns}:wait`, '1', 'PX', IDLE_MS * 3);
  while ((await redis.pttl(`${ns}:wait`)) > 0) await new Promise((r) => setImmediate(r));
});
afterEach(async () => {
  redis.disconnect();
  other.disconnect();
  await deleteNamespace(ns);
});

test('a consumer that reads entries after the XINFO is kept with them; a gone one is deleted', async () => {
  // between the XINFO and the delete: 'resuming' reads an entry (the worker's fetch after a resume)
  const call = redis.call.bind(redis) as (...a: unknown[]) => Promise<unknown>;
  let read = false;
  (redis as unknown as { call: (...a: unknown[]) => Promise<unknown> }).call = async (...args: unknown[]) => {
    const reply = await call(...args);
    if (String(args[0]).toUpperCase() === 'XINFO' && !read) {
      read = true;
      await other.xadd(stream, '*', 'id', 't1');
      await other.xreadgroup('GROUP', CONSUMER_GROUP, 'resuming', 'COUNT', 1, 'STREAMS', stream, '>');
    }
    return reply;
  };
  const deleted = await new Consumer({ client: redis, name: 'me' }).deleteGoneConsumers(stream, IDLE_MS);
  expect(read).toBe(true);
  expect(deleted).toEqual(['gone']);
  const pending = (await other.xpending(stream, CONSUMER_GROUP, '-', '+', 10)) as [string, string, number, number][];
  expect(pending.map(([, consumer]) => consumer)).toEqual(['resuming']);
  const names = ((await other.call('XINFO', 'CONSUMERS', stream, CONSUMER_GROUP)) as unknown[][]).map((row) => row[1]);
  expect(names).toEqual(['resuming']);
});
