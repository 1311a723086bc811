// The liveness scripts against a real Redis (lib/core/redis/commands/recovery.ts): reclaim-consumer.lua
// takes one consumer's entries at once (requeued with the crash counted, poison, lost) and nobody
// else's; presence.lua reports overdue servers and those without a subscriber on their channel, and a
// tick that finds one silent asks for its confirming tick sooner than the period; redis-run.lua
// records since when a Redis process has been answering the servers.
import type { Redis } from 'ioredis';
import { openConnection, duplicateConnection } from '../../lib/core/redis/connection.js';
import { CONSUMER_GROUP, GlobalKeys, QueueKeys } from '../../lib/core/redis/keys.js';
import { decodeDays } from '../../lib/core/admin/history.js';
import { engineTime } from '../../lib/core/runtime/time.js';
import { META, entryFields, newMeta } from '../../lib/core/redis/protocol.js';
import { presenceScript, reclaimConsumerScript, redisRunScript } from '../../lib/core/redis/commands/recovery.js';
import { Liveness } from '../../lib/core/recovery/liveness.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

let ns: string;
let client: Redis;
beforeEach(() => {
  ns = newNamespace('livescript');
  client = openConnection(redisUrl()).client as Redis;
});
afterEach(async () => {
  client.disconnect();
  await deleteNamespace(ns);
});

/** Adds a task to the stream and has `consumer` read it (pending for it). */
async function pendingFor(keys: QueueKeys, consumer: string, id: string, crashes = 0): Promise<string> {
  const meta = { ...newMeta(3, 0, Date.now()), [META.crashes]: crashes };
  await client.xadd(keys.stream, '*', ...entryFields(id, 'job', '{}', JSON.stringify(meta)));
  const reply = (await client.call('XREADGROUP', 'GROUP', CONSUMER_GROUP, consumer, 'COUNT', 1, 'STREAMS', keys.stream, '>')) as [
    string,
    [string, string[]][],
  ][];
  return reply[0][1][0][0];
}

const reclaim = (keys: QueueKeys, from: string, count = 100) =>
  reclaimConsumerScript(client, keys, { consumer: 'me', from, count, maxDeliveries: 2, counterTtlMs: 60_000 });

test("reclaim-consumer takes one consumer's entries at once: requeued with the crash counted, poison, lost; others' left", async () => {
  const keys = new QueueKeys(ns, 'q');
  await client.call('XGROUP', 'CREATE', keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM');
  await pendingFor(keys, 'dead', 'a');
  await pendingFor(keys, 'dead', 'p', 2); // a third crash: poison
  const gone = await pendingFor(keys, 'dead', 'g');
  const theirs = await pendingFor(keys, 'alive', 'b');
  await client.xdel(keys.stream, gone);
  const r = await reclaim(keys, 'dead');
  expect(r.requeued.map((t) => t.taskId)).toEqual(['a']);
  expect(JSON.parse(r.requeued[0].meta)[META.crashes]).toBe(1);
  expect(r.poison).toHaveLength(1);
  expect(JSON.parse(r.poison[0].stored)[0]).toBe('p');
  expect(r.lost).toEqual([gone]);
  expect(r.more).toBe(false);
  expect(decodeDays(await client.getBuffer(keys.counts), engineTime.now(), 1)[0][2]).toBe(1);
  // the poison task is the recoverer's now (to kill); the live consumer's entry is untouched
  const pel = (await client.call('XPENDING', keys.stream, CONSUMER_GROUP, '-', '+', 10)) as [string, string][];
  expect(pel.map(([, c]) => c).sort()).toEqual(['alive', 'me']);
  expect(pel.find(([, c]) => c === 'alive')![0]).toBe(theirs);
  expect(await client.zcard(keys.reclaimed)).toBe(2); // a and p: a late ack of theirs is told "reclaimed"
  expect((await reclaim(keys, 'dead')).requeued).toEqual([]);
});

test('reclaim-consumer says when more entries may be pending (count reached)', async () => {
  const keys = new QueueKeys(ns, 'q');
  await client.call('XGROUP', 'CREATE', keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM');
  for (const id of ['a', 'b', 'c']) await pendingFor(keys, 'dead', id);
  expect((await reclaim(keys, 'dead', 2)).more).toBe(true);
  const last = await reclaim(keys, 'dead', 2);
  expect(last.requeued.map((t) => t.taskId)).toEqual(['c']);
  expect(last.more).toBe(false);
});

test('presence: overdue servers and servers without a subscriber on their liveness channel; itself never', async () => {
  const g = new GlobalKeys(ns);
  const sub = duplicateConnection(client);
  try {
    await sub.subscribe(g.alive('up'));
    const tick = (serverId: string, staleAfterMs = 5000) =>
      presenceScript(client, g, { serverId, staleAfterMs, keepMs: 60_000, judge: true, register: true });
    expect((await tick('up')).others).toBe(0); // alone in the namespace: a lone server may hold a burst ahead (fetch/slots.ts)
    await tick('down');
    await client.zadd(g.live, Date.now() - 10_000, 'stopped'); // its last tick was long ago
    await client.zadd(g.live, Date.now() - 120_000, 'forgotten'); // past keepMs: dropped
    const r = await tick('me');
    expect(r.silent.sort()).toEqual(['down', 'stopped']);
    expect(r.overdue.map((o) => o.id)).toEqual(['stopped']);
    expect(r.overdue[0].overdueMs).toBeGreaterThanOrEqual(9000);
    expect(r.exactNowMs - r.nowMs).toBeGreaterThanOrEqual(0); // with Redis's microseconds: a sub-ms sample for the time source
    expect(r.exactNowMs - r.nowMs).toBeLessThan(1);
    expect(r.others).toBe(3); // up, down and the overdue one: only the forgotten one does not count
    expect(await client.zscore(g.live, 'forgotten')).toBeNull();
    const noJudge = await presenceScript(client, g, { serverId: 'me', staleAfterMs: 5000, keepMs: 60_000, judge: false, register: true });
    expect(noJudge.silent).toEqual([]);
  } finally {
    sub.disconnect();
  }
});

test('presence, sharded: shard-channel subscribers count (SSUBSCRIBE), plain ones do not; its own subscribers are reported', async () => {
  const g = new GlobalKeys(ns);
  const shard = duplicateConnection(client);
  const plain = duplicateConnection(client);
  try {
    await shard.ssubscribe(g.alive('up'), g.alive('me'));
    await plain.subscribe(g.alive('plain'));
    const tick = (serverId: string) =>
      presenceScript(client, g, { serverId, staleAfterMs: 5000, keepMs: 60_000, judge: 'sharded', register: true });
    for (const id of ['up', 'plain', 'down']) await tick(id);
    const r = await tick('me');
    expect(r.silent.sort()).toEqual(['down', 'plain']);
    expect(r.ownSubscribers).toBe(1);
    expect((await tick('down')).ownSubscribers).toBe(0);
  } finally {
    shard.disconnect();
    plain.disconnect();
  }
});

test('a presence tick that finds a channel silent asks for its confirming tick sooner than the period; that tick finds the server dead', async () => {
  const g = new GlobalKeys(ns);
  const quiet = { log() {}, warn() {}, error() {} };
  const live = new Liveness(client, g, 'me', { visibilityTimeout: 30_000, recoverInterval: 2000 }, quiet);
  try {
    await live.open(); // subscribes 'me' and ticks: nobody else is there
    expect(live.nextTickInMs()).toBe(live.tickMs);
    await client.zadd(g.live, Date.now() + 60_000, 'ghost'); // present, but no process holds its channel
    expect((await live.tick()).dead).toEqual([]); // silent once: not judged yet
    expect(live.nextTickInMs()).toBeLessThan(live.tickMs);
    const dead = await waitFor(async () => {
      const v = await live.tick();
      return v.dead.length > 0 ? v.dead : undefined;
    }, 'the confirming tick to find ghost dead');
    expect(dead).toEqual(['ghost']);
    live.handled('ghost');
    expect(live.nextTickInMs()).toBe(live.tickMs); // handled: back to the period
  } finally {
    await live.close();
  }
});

test("redis-run.lua: since when the Redis process has been answering the namespace's servers — Redis's start without a record, the record under the same process, now under another", async () => {
  const g = new GlobalKeys(ns);
  const run = (runId: string, uptimeMs: number) => redisRunScript(client, g, { runId, uptimeMs });
  const first = await run('aaa', 3_600_000); // no record (a new namespace): Redis's own start
  expect(first.nowMs - first.sinceMs).toBe(3_600_000);
  const again = await run('aaa', 10); // the same process: what was recorded, whatever the uptime says
  expect(again.sinceMs).toBe(first.sinceMs);
  const restarted = await run('bbb', 3_600_000); // another process (a restart, a failover): its first server, now
  expect(restarted.sinceMs).toBe(restarted.nowMs);
  expect(await client.get(g.redisRun)).toBe(`bbb ${restarted.sinceMs}`);
  expect((await run('bbb', 0)).sinceMs).toBe(restarted.sinceMs);
});
