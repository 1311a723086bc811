// A hand-out whose reply is lost with its connection (Redis ran fetch-limited.lua, the worker never
// read the answer: a connection reset, a proxy or load balancer cutting it) must not keep the limit's
// slots while nothing runs. The entries Redis gave the worker are pending for it, a live consumer, so
// neither liveness nor anything but the visibility timeout brought them back: with `concurrency: 1`
// the whole queue stood still for the visibility timeout.
import { jest } from '@jest/globals';
import { CONSUMER_GROUP } from '../../lib/core/redis/keys.js';
import type { QueueLimitsUpdate } from '../../lib/core/queue/limits.js';
import { openConnection } from '../../lib/core/redis/connection.js';
import { fetchLimitedScript } from '../../lib/core/redis/commands/limits.js';
import { startWorker, useWorkerRig } from '../helpers/worker-rig.js';
import { countBy, readRecords } from '../helpers/records.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(60_000);

const rig = useWorkerRig('lostreply');
let proxy: TcpProxy;
beforeEach(async () => {
  const u = new URL(redisUrl());
  proxy = await TcpProxy.start({ host: u.hostname, port: Number(u.port || 6379) });
});
afterEach(() => proxy.close());

const VISIBILITY_MS = 60_000; // beyond the test's patience: only the fix may start the task handed out

test.each([
  ['concurrency: 1', { concurrency: 1 }, undefined],
  ['groupConcurrency: 1 (a grouped task)', { groupConcurrency: 1 }, 'tenant'],
] as [string, QueueLimitsUpdate, string | undefined][])(
  'under %s, a hand-out whose reply was lost with its connection is run by the worker it was given to, not held until the visibility timeout',
  async (_, limits, group) => {
    const { client, redis, keys } = rig;
    await client.setQueueLimits('default', limits);
    await startWorker(rig, 'W1', { CHRONOS_URL: proxy.url, CONCURRENCY: 1, VISIBILITY_MS, BLOCK_MS: 30_000 });
    const records = () => readRecords(redis, rig.recordKey);
    const a = await client.enqueue('slow', { ms: 800 }, { group });
    await waitFor(async () => countBy(await records(), 'start').has(a.id), 'A started');
    // the worker's one slot is A's: it fetches again when A ends, and that fetch hands B out
    const b = await client.enqueue('quick', {}, { group });
    proxy.dropReplies();
    const pending = async () => (await redis.call('XPENDING', keys.stream, CONSUMER_GROUP, '-', '+', 10)) as [string, string][];
    await waitFor(async () => {
      const rows = await pending();
      return rows.length === 1 && (await redis.xrange(keys.stream, rows[0][0], rows[0][0]))[0]?.[1].includes(b.id);
    }, 'B handed out to W1 (its reply dropped)');
    proxy.cut(); // the reply is lost with its connection; the worker reconnects
    await waitFor(async () => countBy(await records(), 'done').has(b.id), 'B run (before the visibility timeout)', 20_000);
    const recs = await records();
    expect(countBy(recs, 'start').get(b.id)).toBe(1);
    await waitFor(async () => (await pending()).length === 0, 'nothing pending');
    if (group) expect(await redis.scard(keys.groupRunning(group))).toBe(0);
  },
);

test('fetch-limited.lua repeated with its token returns the entries it handed out, still pending, and no more', async () => {
  const { client, redis, keys } = rig;
  const scripts = openConnection(redisUrl()).client;
  try {
    await client.setQueueLimits('default', { concurrency: 5 });
    for (let i = 0; i < 4; i++) await client.enqueue('quick', { i });
    await redis.xgroup('CREATE', keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM').catch(() => undefined);
    const first = await fetchLimitedScript(scripts, keys, 'c1', 2, 1000, 'tok1');
    expect(first.entries).toHaveLength(2);
    const again = await fetchLimitedScript(scripts, keys, 'c1', 2, 1000, 'tok1');
    expect(again.entries.map((e) => e[0])).toEqual(first.entries.map((e) => e[0]));
    expect(((await redis.call('XPENDING', keys.stream, CONSUMER_GROUP)) as [number])[0]).toBe(2);
    // another consumer's fetch with that token is its own; a new token hands out the next tasks
    expect((await fetchLimitedScript(scripts, keys, 'c2', 1, 1000, 'tok1')).entries).toHaveLength(1);
    const next = await fetchLimitedScript(scripts, keys, 'c1', 5, 1000, 'tok2');
    expect(next.entries).toHaveLength(1);
    // once those entries are no longer pending (acked), the token's fetch is a fetch as any other
    await redis.xack(keys.stream, CONSUMER_GROUP, ...next.entries.map((e) => e[0]));
    expect((await fetchLimitedScript(scripts, keys, 'c1', 5, 1000, 'tok2')).entries).toHaveLength(0);
  } finally {
    scripts.disconnect();
  }
});
