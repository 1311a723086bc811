// A scheduler instance whose round trips to Redis are longer than half its lease (here 1.4 s of a
// 2 s leaderTtl's 1.8 s) cannot fire within its leases: each renewal comes back with less of the
// lease left than a call takes, it flaps between leading and not, and its fire calls are abandoned
// at the lease's end (LeaseBound). Before, its renewals still reached Redis and kept its shards from
// the healthy instance: none of their triggers fired (past the TTL, they were taken only between its
// calls, up to 10 s late). Now it stands aside (shards.lua `standAside`): the healthy instance takes
// every shard and fires each trigger once; when the link is fast again the slow one campaigns again.
// Real processes; the slow one talks to Redis through a TcpProxy with added latency.
import { jest } from '@jest/globals';
import { shardOf } from '../../lib/core/redis/keys.js';
import { SHARD_COUNT } from '../../lib/core/redis/protocol.js';
import { Fleet, nextAligned, perTrigger, waitTriggers } from '../helpers/fleet.js';
import { redisUrl } from '../helpers/redis.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(120_000);

// one schedule per shard
const names: string[] = [];
for (let i = 0, seen = new Set<number>(); seen.size < SHARD_COUNT; i++) {
  const n = `slow-${i}`;
  if (seen.has(shardOf(n))) continue;
  seen.add(shardOf(n));
  names.push(n);
}

let proxy: TcpProxy;
let fleet: Fleet;
beforeEach(async () => {
  const u = new URL(redisUrl());
  proxy = await TcpProxy.start({ host: u.hostname, port: Number(u.port || 6379) });
  fleet = new Fleet(
    names.map((name) => ({ name, spec: '@every 1s' })),
    { LEADER_TTL_MS: 2000, WORKER: 0 },
  );
});
afterEach(async () => {
  await fleet.close();
  await proxy.close();
});

// a 1.4 s round trip: more than half of 2000 − 200 ms (its renewals come back, too late to fire); 2 s: more than all
// of it (they miss their deadline, and still renew in Redis)
test.each([700, 1000])(
  'a leader too slow to fire within its lease stands aside (%i ms each way): the healthy instance fires its shards, each trigger once',
  async (oneWayMs) => {
    const slow = await fleet.start('SLOW', { REDIS_URL: proxy.url, RECORD_URL: redisUrl() });
    const fast = await fleet.start('FAST');
    const led = await fleet.waitBalanced();
    expect(led.get(slow)?.size).toBe(SHARD_COUNT / 2);

    proxy.latency(oneWayMs);
    await waitFor(() => fleet.ledBy().get(fast)?.size === SHARD_COUNT, 'FAST to lead every shard', 30_000);
    const from = nextAligned(Date.now(), 1000);
    const to = from + 5000;
    // every trigger of every shard in a window after the hand-over: fired, once, by FAST
    for (const name of names) await waitTriggers(fleet, name, from, to, { phase: 'fired' });
    const recs = (await fleet.records()).filter(
      (r) => r.phase === 'fired' && (r.triggerAt as number) >= from && (r.triggerAt as number) <= to,
    );
    for (const name of names) expect([...perTrigger(recs, name, 'fired').values()].filter((n) => n !== 1)).toEqual([]);
    expect(new Set(recs.map((r) => r.instance))).toEqual(new Set(['FAST']));
    expect(recs.filter((r) => r.caughtUp).map((r) => `${r.schedule as string}@${r.triggerAt as number}`)).toEqual([]); // none fired late
    expect(slow.output).toMatch(/Standing aside from the shard leases/);

    // the link is fast again: it campaigns again and the fleet shares the shards
    proxy.latency(0);
    await waitFor(() => fleet.ledBy().get(slow)?.size === SHARD_COUNT / 2, 'SLOW to lead its share again', 30_000);
    expect(slow.output).toMatch(/Campaigning for shard leases again/);
  },
);
