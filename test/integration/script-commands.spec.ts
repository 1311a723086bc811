// The typed script wrappers (lib/core/redis/commands/) against a real Redis: each named result.
import type { Redis } from 'ioredis';
import { forwardScript } from '../../lib/core/redis/commands/queue.js';
import {
  declareSchedulesScript,
  fenceSchedulesScript,
  fireScript,
  heartbeatScript,
  registerSchedulesScript,
  scheduleAdminScript,
  type FireTrigger,
} from '../../lib/core/redis/commands/schedule.js';
import { openConnection } from '../../lib/core/redis/connection.js';
import { QueueKeys, SchedulerKeys, shardKeysFor } from '../../lib/core/redis/keys.js';
import { advanceDueScript, markDueScript, takeDueScript } from '../../lib/core/redis/commands/shard-due.js';
import { FIRE_MODE, META, entryFields, newMeta, type FireMode } from '../../lib/core/redis/protocol.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { decodeStored } from '../../lib/core/scheduler/stored-form.js';

let ns: string;
let client: Redis;
beforeEach(() => {
  ns = newNamespace('cmd');
  client = openConnection(redisUrl()).client as Redis;
});
afterEach(async () => {
  client.disconnect();
  await deleteNamespace(ns);
});

function trigger(schedule: string, triggerAt: number, mode: FireMode, generation = 0): FireTrigger {
  const meta = newMeta(0, 0, triggerAt);
  meta[META.schedule] = schedule;
  meta[META.triggerAt] = triggerAt;
  if (mode === FIRE_MODE.skipOverlap) meta[META.overlapSkip] = 1;
  return { schedule, triggerAt, type: 'job', payload: 'null', meta: JSON.stringify(meta), dedupTtlMs: 60_000, mode, generation };
}

test('fireScript names each trigger result: enqueued, duplicate, stale, early, advanced, skipped', async () => {
  const keys = new QueueKeys(ns, 'q');
  const now = 1_000_000_000_000;
  const first = await fireScript(client, keys, now, 0, [
    trigger('a', now - 2000, FIRE_MODE.allowOverlap),
    trigger('b', now + 5000, FIRE_MODE.allowOverlap),
  ]);
  expect(first).toEqual({ results: ['enqueued', 'early'], now });
  const again = await fireScript(client, keys, now, 0, [
    trigger('a', now - 2000, FIRE_MODE.allowOverlap), // at lastFired
    trigger('a', now - 1000, FIRE_MODE.advanceOnly),
    trigger('c', now, FIRE_MODE.skipOverlap),
  ]);
  expect(again.results).toEqual(['stale', 'advanced', 'enqueued']);
  // with lastFired gone: c's previous task still holds the overlap key, and c's trigger at `now` has fired before
  await client.del(keys.lastFired);
  const third = await fireScript(client, keys, now, 0, [
    trigger('c', now - 1000, FIRE_MODE.skipOverlap),
    trigger('c', now, FIRE_MODE.skipOverlap),
  ]);
  expect(third.results).toEqual(['skipped', 'duplicate']);
  const entries = (await client.xrange(keys.stream, '-', '+')) as [string, string[]][];
  expect(entries.map(([, f]) => f.filter((_, i) => i % 2 === 0))).toEqual([
    ['id', 'type', 'payload', 'meta'],
    ['id', 'type', 'payload', 'meta'],
  ]);
  expect(entries[1][1].slice(0, 6)).toEqual(entryFields(`c:${now / 1000}`, 'job', 'null', '').slice(0, 6));
});

test('fireScript refuses a trigger planned under an older generation (fenced); an accepted one raises the fence', async () => {
  const keys = new QueueKeys(ns, 'q');
  const now = 1_000_000_000_000;
  expect(
    await fenceSchedulesScript(client, keys, [
      ['a', 5],
      ['b', 3],
    ]),
  ).toEqual({ raised: 2, rewound: [] });
  expect(await fenceSchedulesScript(client, keys, [['a', 4]])).toEqual({ raised: 0, rewound: [] }); // never lowered
  const r = await fireScript(client, keys, now, 0, [
    trigger('a', now - 3000, FIRE_MODE.allowOverlap, 4),
    trigger('a', now - 2000, FIRE_MODE.advanceOnly, 4),
    trigger('a', now - 1000, FIRE_MODE.allowOverlap, 5),
    trigger('b', now, FIRE_MODE.allowOverlap, 7),
    trigger('b', now, FIRE_MODE.allowOverlap, 6),
  ]);
  expect(r.results).toEqual(['fenced', 'fenced', 'enqueued', 'enqueued', 'fenced']);
  expect(await client.hgetall(keys.generation)).toEqual({ a: '5', b: '7' });
  expect(await client.hget(keys.lastFired, 'a')).toBe(String(now - 1000)); // a fenced trigger changes nothing
  expect(await client.xlen(keys.stream)).toBe(2);
});

test("fireScript refuses a whole call Redis runs at or after the caller's lease end (unleased): nothing written; before it, the call fires", async () => {
  const keys = new QueueKeys(ns, 'q');
  const now = 1_000_000_000_000;
  // a leader paused between its lease check and its call: the call lands when its lease has ended in Redis
  const late = await fireScript(
    client,
    keys,
    now,
    0,
    [trigger('a', now - 1000, FIRE_MODE.allowOverlap), trigger('b', now, FIRE_MODE.skipOverlap)],
    'B',
    100,
    now,
  );
  expect(late).toEqual({ results: ['unleased', 'unleased'], now });
  expect(await client.keys(`${keys.base}*`)).toEqual([]); // no task, dedup key, lastFired, overlap marker or history
  const inTime = await fireScript(client, keys, now, 0, [trigger('a', now - 1000, FIRE_MODE.allowOverlap)], 'B', 100, now + 1);
  expect(inTime.results).toEqual(['enqueued']);
  expect(await client.hget(keys.lastFired, 'a')).toBe(String(now - 1000));
});

test('fenceSchedulesScript retracts a task waiting ahead of its instant (task, dedup key, maxRuns count, lastFired); never one whose instant passed', async () => {
  const keys = new QueueKeys(ns, 'q');
  const [sec] = await client.time();
  const now = Number(sec) * 1000;
  const ahead = { ...trigger('ahead', now + 10_000, FIRE_MODE.allowOverlap, 1), dueAt: now + 10_000, maxRuns: 5 };
  const jittered = { ...trigger('jittered', now - 1000, FIRE_MODE.allowOverlap, 1), dueAt: now + 30_000 }; // its nominal instant passed
  await client.lpush(keys.history('ahead'), '{}'); // a history to record into (fire.lua writes one only with a history flag)
  const fired = await fireScript(client, keys, undefined, 20_000, [ahead, jittered]);
  expect(fired.results).toEqual(['enqueued', 'enqueued']);
  const aheadId = `ahead:${(now + 10_000) / 1000}`;
  expect(await client.zscore(keys.scheduled, aheadId)).toBe(String(now + 10_000));
  expect(await client.hget(keys.runs('ahead'), 'n')).toBe('1');

  const r = await fenceSchedulesScript(
    client,
    keys,
    [
      ['ahead', 2],
      ['jittered', 2],
    ],
    'ops',
  );
  expect(r).toEqual({ raised: 2, rewound: ['ahead'] });
  expect(await client.zscore(keys.scheduled, aheadId)).toBeNull();
  expect(await client.hget(keys.tasks, aheadId)).toBeNull();
  expect(await client.exists(keys.dedup(aheadId))).toBe(0);
  expect(await client.hget(keys.runs('ahead'), 'n')).toBe('0');
  const lastFired = Number(await client.hget(keys.lastFired, 'ahead'));
  expect(lastFired).toBeGreaterThanOrEqual(now);
  expect(lastFired).toBeLessThan(now + 10_000);
  const [record] = await client.lrange(keys.history('ahead'), 0, 0);
  expect(JSON.parse(record)).toEqual({ triggerAt: now + 10_000, at: lastFired, outcome: 'retracted', taskId: aheadId, by: 'ops' });
  // the jittered trigger fired at its nominal instant, before the change: it stays, as does its lastFired
  expect(await client.zscore(keys.scheduled, `jittered:${(now - 1000) / 1000}`)).toBe(String(now + 30_000));
  expect(await client.hget(keys.lastFired, 'jittered')).toBe(String(now - 1000));
  // a fence that raises nothing retracts nothing
  expect(await fenceSchedulesScript(client, keys, [['ahead', 2]])).toEqual({ raised: 0, rewound: [] });
});

test('fenceSchedulesScript: a trigger refused ahead of its instant as exhausted (lastFired advanced past it) is planned again after a change (trial 6)', async () => {
  const keys = new QueueKeys(ns, 'q');
  const [sec] = await client.time();
  const now = Number(sec) * 1000;
  await client.hset(keys.runs('mr'), 'max', 1, 'n', 1); // its one run is used up
  const t = { ...trigger('mr', now + 10_000, FIRE_MODE.allowOverlap, 1), dueAt: now + 10_000, maxRuns: 1 };
  expect((await fireScript(client, keys, undefined, 20_000, [t])).results).toEqual(['exhausted']);
  expect(await client.hget(keys.lastFired, 'mr')).toBe(String(now + 10_000));
  // maxRuns raised (a new generation): lastFired goes back before the instant, nothing else is touched
  expect(await fenceSchedulesScript(client, keys, [['mr', 2]])).toEqual({ raised: 1, rewound: ['mr'] });
  expect(Number(await client.hget(keys.lastFired, 'mr'))).toBeLessThan(now + 10_000);
  expect(await client.hgetall(keys.runs('mr'))).toEqual({ max: '1', n: '1' });
  const again = { ...t, generation: 2, maxRuns: 3 };
  expect((await fireScript(client, keys, undefined, 20_000, [again])).results).toEqual(['enqueued']);
});

test("fireScript: a later trigger of one schedule in the same call sees the earlier one's lastFired; delayed tasks of one call are all written, even when a later trigger is malformed", async () => {
  const keys = new QueueKeys(ns, 'q');
  const now = 1_000_000_000_000;
  const again = await fireScript(client, keys, now, 0, [
    trigger('a', now - 1000, FIRE_MODE.allowOverlap),
    trigger('a', now - 1000, FIRE_MODE.allowOverlap), // at the lastFired the first one wrote: stale, not a dedup hit
    trigger('a', now - 2000, FIRE_MODE.advanceOnly),
  ]);
  expect(again.results).toEqual(['enqueued', 'stale', 'stale']);
  expect(await client.hget(keys.lastFired, 'a')).toBe(String(now - 1000));
  const delayed = [
    { ...trigger('d1', now, FIRE_MODE.allowOverlap), dueAt: now + 4000 },
    { ...trigger('d2', now, FIRE_MODE.allowOverlap), dueAt: now + 3000 },
  ];
  const [d1, d2] = [`d1:${now / 1000}`, `d2:${now / 1000}`];
  // a malformed third trigger: the script refuses it, and the two before it are written whole
  const bad = { ...trigger('x', now, FIRE_MODE.allowOverlap), mode: 'a b' as FireMode };
  await expect(fireScript(client, keys, now, 0, [...delayed, bad])).rejects.toThrow(/malformed trigger fields/);
  expect(await client.zrange(keys.scheduled, 0, -1, 'WITHSCORES')).toEqual([d2, String(now + 3000), d1, String(now + 4000)]);
  expect(Object.keys(await client.hgetall(keys.tasks)).sort()).toEqual([d1, d2]);
  expect(await client.hmget(keys.lastFired, 'd1', 'd2')).toEqual([String(now), String(now)]);
  expect(await client.get(keys.dedup(d1))).toBe(d1);
  expect(await client.xlen(keys.stream)).toBe(1);
});

test('fireScript: the task id and keys are built from name and instant; a payload with raw newlines and a type with spaces arrive whole', async () => {
  const keys = new QueueKeys(ns, 'q');
  const now = 1_000_000_000_000;
  const t = trigger('nightly.eu:1', now - 1500, FIRE_MODE.skipOverlap);
  const r = await fireScript(client, keys, now, 0, [{ ...t, type: 'a job\ttype', payload: '{\n  "to": "x y",\n  "n": [1, 2]\n}' }]);
  expect(r.results).toEqual(['enqueued']);
  const id = `nightly.eu:1:${Math.floor((now - 1500) / 1000)}`;
  expect(await client.get(keys.dedup(id))).toBe(id);
  expect(await client.get(keys.overlap('nightly.eu:1'))).toBe(id);
  const [[, fields]] = (await client.xrange(keys.stream, '-', '+')) as [string, string[]][];
  expect(fields.filter((_, i) => i % 2 === 0)).toEqual(['id', 'type', 'payload', 'meta']);
  expect(fields[1]).toBe(id);
  expect(fields[3]).toBe('a job\ttype');
  expect(JSON.parse(fields[5])).toEqual({ to: 'x y', n: [1, 2] });
  expect(fields[5]).not.toContain('\n');
  expect(fields[7]).toBe(t.meta);
});

test('forwardScript: nothing waiting is nextDueAt undefined; a due task moves', async () => {
  const keys = new QueueKeys(ns, 'q');
  const empty = await forwardScript(client, keys, 100);
  expect(empty.moved).toBe(0);
  expect(empty.nextDueAt).toBeUndefined();
  expect(empty.redisNow).toBeGreaterThan(0);
  await client.hset(keys.tasks, 'x', JSON.stringify(['x', 'job', 'null', JSON.stringify(newMeta(0, 0, 1))]));
  await client.zadd(keys.scheduled, 1, 'x');
  await client.hset(keys.tasks, 'later', JSON.stringify(['later', 'job', 'null', JSON.stringify(newMeta(0, 0, 1))]));
  await client.zadd(keys.retry, 9e15, 'later');
  const moved = await forwardScript(client, keys, 100);
  expect(moved).toMatchObject({ moved: 1, nextDueAt: 9e15 });
  expect(await client.xlen(keys.stream)).toBe(1);
});

test('registry scripts: register counts changes, declare shares a names set, heartbeat sees a lost declaration, admin notFound', async () => {
  const keys = new SchedulerKeys(ns);
  const s1 = shardKeysFor(ns, 's1');
  const s2 = shardKeysFor(ns, 's2');
  const def = JSON.stringify({ fp: 'f1' });
  const reg = { nowMs: undefined, definitions: [['s1', 'f1', def] as const] };
  expect((await registerSchedulesScript(client, s1, reg)).changed).toBe(1);
  // a new schedule is marked "look at it now" in its shard's due index: −(Redis ms + 0.5), below every wake instant
  const marked = Number(await client.zscore(s1.due, 's1'));
  expect(marked).toBeLessThan(0);
  expect(-marked % 1).toBe(0.5);
  expect((await registerSchedulesScript(client, s1, reg)).changed).toBe(0);
  expect(Number(await client.zscore(s1.due, 's1'))).toBe(marked); // unchanged: not marked again
  // two instances declaring the same names: the first one's building set becomes the shared set, the second's is dropped
  const digest = '1.d';
  for (const id of ['i1', 'i2']) {
    await client.sadd(keys.namesBuilding(digest, id), 's1');
    expect((await declareSchedulesScript(client, keys, id, digest, 60_000, undefined)).status).toBe('declared');
    expect(await client.exists(keys.namesBuilding(digest, id))).toBe(0);
    expect(await client.get(keys.declaration(id))).toBe(digest);
  }
  expect(await client.smembers(keys.names(digest))).toEqual(['s1']);
  expect((await declareSchedulesScript(client, keys, 'i3', '2.gone', 60_000, undefined)).status).toBe('namesMissing');
  expect((await heartbeatScript(client, keys, 'i1', 60_000, digest)).status).toBe('ok');
  await client.del(keys.declaration('i1'));
  expect((await heartbeatScript(client, keys, 'i1', 60_000, digest)).status).toBe('declaredLost');
  await client.del(keys.names(digest));
  expect((await heartbeatScript(client, keys, 'i2', 60_000, digest)).status).toBe('declaredLost');
  expect((await heartbeatScript(client, keys, 'i4', 60_000, undefined)).status).toBe('ok'); // declares nothing
  const pause = await scheduleAdminScript(client, s1, keys, 'pause', 's1');
  expect(pause.status).toBe('done');
  expect(await client.zscore(s1.due, 's1')).toBeNull(); // paused: nothing to plan
  const paused = JSON.parse((await client.hget(s1.schedules, 's1'))!);
  expect(paused).toMatchObject({ fp: 'f1', paused: true, generation: pause.generation });
  // the version is a rising counter seeded from Redis time: every change takes a newer one
  expect(pause.generation).toBeGreaterThanOrEqual(pause.redisNow);
  const resume = await scheduleAdminScript(client, s1, keys, 'resume', 's1');
  expect(resume.generation).toBeGreaterThan(pause.generation);
  const resumed = decodeStored('s1', (await client.hget(s1.schedules, 's1'))!);
  expect(resumed).toMatchObject({ resumedAt: resume.redisNow });
  expect(resumed.paused).not.toBe(true);
  expect(Number(await client.zscore(s1.due, 's1'))).toBe(-(resume.redisNow + 0.5)); // resumed: look at it now
  // a resume of a schedule not paused changes nothing: no version taken, resumedAt kept (trial 26: it moved it)
  const again = await scheduleAdminScript(client, s1, keys, 'resume', 's1');
  expect([again.status, again.generation, again.previousQueue]).toEqual(['unchanged', resume.generation, resumed.queue]);
  expect(decodeStored('s1', (await client.hget(s1.schedules, 's1'))!)).toEqual(resumed);
  const nope = shardKeysFor(ns, 'nope');
  expect((await scheduleAdminScript(client, nope, keys, 'delete', 'nope')).status).toBe('notFound');
  // a new definition replacing a stored one: fenced in the queue it targeted; changedAt moves only with the timing
  const timed = (fp: string, expression: string, queue: string) => JSON.stringify({ fp, expression, timeZone: 'UTC', offsetMs: 0, queue });
  const reg2 = (fp: string, expression: string, queue: string) => ({
    ...reg,
    definitions: [['s2', fp, timed(fp, expression, queue)] as const],
  });
  const first = await registerSchedulesScript(client, s2, reg2('a', '@every 1s', 'q1'));
  expect(first.fences).toEqual([]);
  const stored = () => client.hget(s2.schedules, 's2').then((j) => decodeStored('s2', j!));
  const born = await stored();
  expect(born.changedAt).toBe(first.now);
  expect(born.registeredAt).toBe(first.now);
  const payloadOnly = await registerSchedulesScript(client, s2, { ...reg2('b', '@every 1s', 'q1') });
  expect(payloadOnly.fences).toEqual([{ schedule: 's2', queue: 'q1', generation: (await stored()).generation }]);
  expect((await stored()).changedAt).toBe(born.changedAt);
  const moved = await registerSchedulesScript(client, s2, reg2('c', '@every 2s', 'q2'));
  expect(moved.fences).toEqual([{ schedule: 's2', queue: 'q1', generation: (await stored()).generation }]);
  expect((await stored()).changedAt).toBe(moved.now);
  expect((await stored()).registeredAt).toBe(born.registeredAt);
  const removed = await scheduleAdminScript(client, s2, keys, 'delete', 's2');
  expect(removed).toMatchObject({ status: 'done', previousQueue: 'q2' });
  expect(await client.zscore(s2.due, 's2')).toBeNull();
  expect(removed.generation).toBeGreaterThan(moved.fences[0].generation);
});

test('due index: take-due reads what came due with its definition; advance-due moves it only when no change marked it meanwhile', async () => {
  const k = shardKeysFor(ns, 'a');
  const b = 'b'; // stored in this shard's hash by the test itself (the scripts take the keys they are given)
  await client.hset(k.schedules, 'a', '{"fp":"x"}');
  await client.zadd(k.due, 1000, 'a', 3000, 'gone');
  const batch = await takeDueScript(client, k, 2000, 10);
  expect(batch.items).toEqual([{ name: 'a', score: '1000', json: Buffer.from('{"fp":"x"}') }]);
  expect(batch.next).toBe(3000);
  expect((await takeDueScript(client, k, 5000, 10)).items[1]).toEqual({ name: 'gone', score: '3000', json: undefined });
  // a leader's advance: set when unchanged
  expect(await advanceDueScript(client, k, [{ name: 'a', read: '1000', next: 9000 }])).toBe(0);
  expect(await client.zscore(k.due, 'a')).toBe('9000');
  // a change's mark between the read and the advance: the advance leaves it
  const read = (await takeDueScript(client, k, 9000, 10)).items[0];
  expect(await markDueScript(client, k, ['a'])).toBe(1);
  const mark = await client.zscore(k.due, 'a');
  expect(Number(mark)).toBeLessThan(0);
  expect(await advanceDueScript(client, k, [{ name: 'a', read: read.score, next: 20_000 }])).toBe(1);
  expect(await client.zscore(k.due, 'a')).toBe(mark);
  // taken out: a removal by the leader; a paused or missing schedule is not marked
  expect(await advanceDueScript(client, k, [{ name: 'gone', read: '3000', next: undefined }])).toBe(0);
  expect(await client.zscore(k.due, 'gone')).toBeNull();
  await client.hset(k.schedules, b, '{"fp":"y","paused":true}');
  expect(await markDueScript(client, k, [b, 'missing'])).toBe(0);
});

test('advance-due takes a batch of moves as the lines of one argument: each compared and moved, taken out, or left when marked', async () => {
  const k = shardKeysFor(ns, 'a');
  await client.zadd(k.due, 1000, 'a', -5, 'b', 1000.5, 'c', 2000, 'd:1');
  const moves = [
    { name: 'a', read: '1000', next: 61_000.7 }, // floored to a leader's integer score
    { name: 'b', read: '-4', next: 9000 }, // marked again since it was read: left
    { name: 'c', read: '1000.5', next: undefined }, // out of the index
    { name: 'd:1', read: '2000', next: 3000 },
  ];
  expect(await advanceDueScript(client, k, moves)).toBe(1);
  expect(await client.zrange(k.due, 0, -1, 'WITHSCORES')).toEqual(['b', '-5', 'd:1', '3000', 'a', '61000']);
});

test('advance-due refuses a malformed move, naming where, and writes nothing', async () => {
  const k = shardKeysFor(ns, 'a');
  await client.zadd(k.due, 1000, 'a');
  const { runScript } = await import('../../lib/core/redis/scripts.js');
  await expect(runScript(client, 'advance-due', [k.due], ['a 1000 9000\nb 1000\n'])).rejects.toThrow(
    /advance-due: malformed move at byte 13: "b 1000/,
  );
  await expect(runScript(client, 'advance-due', [k.due], ['a 1000 9000'])).rejects.toThrow(/malformed move at byte 1/);
  expect(await client.zscore(k.due, 'a')).toBe('1000');
});
