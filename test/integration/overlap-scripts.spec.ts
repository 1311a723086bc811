// The overlap policies buffer-one and cancel-previous in the scripts, against a real Redis: fire.lua
// buffers or supersedes, and every path that releases a task's overlap marker (ack, dead, delete of a
// pending or retry task) starts the trigger buffered behind it, in the same script; holds renew the
// buffer with the marker; a buffer whose marker vanished starts at the next fire; claim.lua reports a
// marker a newer trigger took.
import type { Redis } from 'ioredis';
import { deletePendingScript, deleteTasksScript } from '../../lib/core/redis/commands/admin.js';
import { ackScript, killScript, retryScript } from '../../lib/core/redis/commands/queue.js';
import { claimScript } from '../../lib/core/redis/commands/recovery.js';
import { fireScript, type FireTrigger } from '../../lib/core/redis/commands/schedule.js';
import { openConnection } from '../../lib/core/redis/connection.js';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { FIRE_MODE, MARKER_TTL, META, OVERLAP_MODE, newMeta, type FireMode, type TaskMeta } from '../../lib/core/redis/protocol.js';
import { decodeBuffered, decodeEntry, encodeStored, markerKeys, type StreamTask } from '../../lib/core/queue/codec.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

const NOW = 1_000_000_000_000;
const DEDUP_TTL_MS = 7_200_000;
let ns: string;
let client: Redis;
let keys: QueueKeys;
beforeEach(async () => {
  ns = newNamespace('ovl');
  client = openConnection(redisUrl()).client as Redis;
  keys = new QueueKeys(ns, 'q');
  await client.call('XGROUP', 'CREATE', keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM');
});
afterEach(async () => {
  client.disconnect();
  await deleteNamespace(ns);
});

/** A trigger of schedule `job` at NOW + `sec` s, with the meta fire-triggers.ts writes for `mode`. */
function trigger(sec: number, mode: FireMode): FireTrigger {
  const triggerAt = NOW + sec * 1000;
  const meta = newMeta(3, 0, triggerAt);
  meta[META.schedule] = 'job';
  meta[META.triggerAt] = triggerAt;
  if (mode !== FIRE_MODE.allowOverlap) meta[META.overlapSkip] = 1;
  if (mode === FIRE_MODE.bufferOne) meta[META.overlapMode] = OVERLAP_MODE.bufferOne;
  if (mode === FIRE_MODE.cancelPrevious) meta[META.overlapMode] = OVERLAP_MODE.cancelPrevious;
  return {
    schedule: 'job',
    triggerAt,
    type: 'job.type',
    payload: '{"n":1}',
    meta: JSON.stringify(meta),
    dedupTtlMs: DEDUP_TTL_MS,
    mode,
    generation: 0,
  };
}

async function fire(...triggers: FireTrigger[]): Promise<string[]> {
  return (await fireScript(client, keys, NOW + 3_600_000, 0, triggers)).results;
}

/** Hands the waiting entries to consumer `c` (XREADGROUP), decoded. */
async function fetch(c = 'w1'): Promise<StreamTask[]> {
  const reply = (await client.call('XREADGROUP', 'GROUP', CONSUMER_GROUP, c, 'COUNT', 10, 'STREAMS', keys.stream, '>')) as
    [string, [string, string[]][]][] | null;
  return (reply?.[0][1] ?? []).map(([id, fields]) => {
    const d = decodeEntry(id, fields);
    if (!d.ok) throw d.error;
    return d.task;
  });
}

async function streamIds(): Promise<string[]> {
  const entries = (await client.xrange(keys.stream, '-', '+')) as [string, string[]][];
  return entries.map(([, f]) => f[1]);
}

async function state(): Promise<{ marker: string | null; buffered: string | undefined; stream: string[] }> {
  const [marker, buffer] = await client.mget(keys.overlap('job'), keys.buffered('job'));
  return { marker, buffered: decodeBuffered(buffer)?.taskId, stream: await streamIds() };
}

const ack = (t: StreamTask) =>
  ackScript(client, keys, { plain: [], flagged: [[t.entryId, t.id, markerKeys(keys, t)]], counterTtlMs: 60_000 });

test('buffer-one at fire: the first trigger is enqueued, the next waits in the buffer behind it, a third is skipped', async () => {
  expect(await fire(trigger(0, FIRE_MODE.bufferOne), trigger(60, FIRE_MODE.bufferOne), trigger(120, FIRE_MODE.bufferOne))).toEqual([
    'enqueued',
    'buffered',
    'skipped',
  ]);
  expect(await state()).toEqual({ marker: 'job:1000000000', buffered: 'job:1000000060', stream: ['job:1000000000'] });
  // every trigger took its dedup key and moved lastFired: none fires again
  expect(await client.exists(keys.dedup('job:1000000060'), keys.dedup('job:1000000120'))).toBe(2);
  expect(await fire(trigger(60, FIRE_MODE.bufferOne))).toEqual(['stale']);
  const b = decodeBuffered(await client.get(keys.buffered('job')))!;
  expect(b).toMatchObject({ behind: 'job:1000000000', taskId: 'job:1000000060' });
  expect(b.meta[META.triggerAt]).toBe(NOW + 60_000);
  // the buffer outlives its marker by the trigger's dedup lifetime
  const [markerTtl, bufferTtl] = await Promise.all([client.pttl(keys.overlap('job')), client.pttl(keys.buffered('job'))]);
  expect(bufferTtl - markerTtl).toBeGreaterThan(DEDUP_TTL_MS - 1000);
  expect(bufferTtl - markerTtl).toBeLessThanOrEqual(DEDUP_TTL_MS);
});

test.each(['success (ack)', 'dead (kill)', 'a retry deleted by an operator', 'a pending task deleted by an operator', 'lost at ack'])(
  'buffer-one: the buffered trigger starts when the previous task ends by %s, with its own id, instant and payload',
  async (how) => {
    await fire(trigger(0, FIRE_MODE.bufferOne), trigger(60, FIRE_MODE.bufferOne));
    if (how === 'a pending task deleted by an operator') {
      const [[entryId, fields]] = (await client.xrange(keys.stream, '-', '+')) as [string, string[]][];
      const pending = {
        entryId,
        taskId: 'job:1000000000',
        markers: markerKeys(keys, { id: 'job:1000000000', meta: JSON.parse(fields[7]) as TaskMeta }),
      };
      const deleted = await deletePendingScript(client, keys, [pending]);
      expect(deleted).toEqual(['job:1000000000']);
    } else {
      const [t] = await fetch();
      if (how === 'success (ack)') expect((await ack(t)).acked).toBe(1);
      if (how === 'lost at ack') {
        // deleted while it ran and no longer pending (a recoverer reported it lost): the ack finds it gone and releases its markers
        await client.xack(keys.stream, CONSUMER_GROUP, t.entryId);
        await client.xdel(keys.stream, t.entryId);
        expect((await ack(t)).gone).toEqual([t.entryId]);
      }
      if (how === 'dead (kill)') {
        const stored = encodeStored(t);
        const killed = await killScript(client, keys, {
          entryId: t.entryId,
          taskId: t.id,
          stored,
          release: markerKeys(keys, t),
          maxDead: 100,
          maxDeadAgeMs: 60_000,
          counterTtlMs: 60_000,
        });
        expect(killed).toBeGreaterThan(0);
      }
      if (how === 'a retry deleted by an operator') {
        const retryAt = await retryScript(client, keys, {
          entryId: t.entryId,
          taskId: t.id,
          stored: encodeStored(t),
          delayMs: 60_000,
          markers: markerKeys(keys, t),
          counterTtlMs: 60_000,
        });
        expect(retryAt).toBeGreaterThan(0);
        // waiting for its retry it still holds the marker: the buffered trigger keeps waiting
        expect(await state()).toEqual({ marker: 'job:1000000000', buffered: 'job:1000000060', stream: [] });
        const set = { zset: keys.retry, hash: keys.tasks };
        expect(await deleteTasksScript(client, keys, set, [{ taskId: t.id, markers: markerKeys(keys, t) }])).toEqual([t.id]);
      }
    }
    expect(await state()).toEqual({ marker: 'job:1000000060', buffered: undefined, stream: ['job:1000000060'] });
    expect(await client.pttl(keys.overlap('job'))).toBeGreaterThan(MARKER_TTL.waitingMs - 60_000);
    const [next] = await fetch('w2');
    expect(next).toMatchObject({ id: 'job:1000000060', type: 'job.type', payload: '{"n":1}' });
    expect(next.meta[META.triggerAt]).toBe(NOW + 60_000);
    expect(markerKeys(keys, next)).toEqual([keys.overlap('job'), keys.buffered('job')]);
    // and the next trigger waits behind the started one
    expect(await fire(trigger(120, FIRE_MODE.bufferOne))).toEqual(['buffered']);
    expect(decodeBuffered(await client.get(keys.buffered('job')))?.behind).toBe('job:1000000060');
  },
);

test('buffer-one: a hold renews the buffer with the marker; a task that no longer holds the marker neither renews nor starts it', async () => {
  await fire(trigger(0, FIRE_MODE.bufferOne), trigger(60, FIRE_MODE.bufferOne));
  const [t] = await fetch();
  const r = await claimScript(client, keys, 'w1', 10_000, [{ entryId: t.entryId, taskId: t.id, markers: markerKeys(keys, t) }]);
  expect(r).toEqual({ claimed: [t.entryId], gone: [], taken: [], ended: [] });
  expect(await client.pttl(keys.overlap('job'))).toBeLessThanOrEqual(10_000);
  const bufferTtl = await client.pttl(keys.buffered('job'));
  expect(bufferTtl).toBeGreaterThan(10_000 + DEDUP_TTL_MS - 1000);
  expect(bufferTtl).toBeLessThanOrEqual(10_000 + DEDUP_TTL_MS);
  // the marker vanished without a release (its task lost, the TTL ran out): the next fire starts the buffered trigger first
  await client.del(keys.overlap('job'));
  expect(await fire(trigger(120, FIRE_MODE.bufferOne))).toEqual(['buffered']);
  expect(await state()).toEqual({ marker: 'job:1000000060', buffered: 'job:1000000120', stream: ['job:1000000000', 'job:1000000060'] });
  // the old task ends after all: it holds nothing, so nothing moves
  expect((await ack(t)).acked).toBe(1);
  expect(await state()).toEqual({ marker: 'job:1000000060', buffered: 'job:1000000120', stream: ['job:1000000060'] });
});

test('buffer-one: a task whose marker ran out while it waited (a paused queue, a backlog past MARKER_TTL) starts the trigger buffered behind it when it ends (trial 29: it waited for a next fire, none for an exhausted or ended schedule)', async () => {
  await fire(trigger(0, FIRE_MODE.bufferOne), trigger(60, FIRE_MODE.bufferOne));
  // the marker's TTL ran out before a worker took the task; its buffer outlives it by the trigger's dedup lifetime
  await client.del(keys.overlap('job'));
  const [t] = await fetch();
  expect((await ack(t)).acked).toBe(1);
  expect(await state()).toEqual({ marker: 'job:1000000060', buffered: undefined, stream: ['job:1000000060'] });
  // but not when another task took the marker meanwhile (it ran out, then a trigger fired under skip took it)
  const [started] = await fetch('w2');
  expect(await fire(trigger(120, FIRE_MODE.bufferOne))).toEqual(['buffered']);
  await client.set(keys.overlap('job'), 'other:1');
  expect((await ack(started)).acked).toBe(1);
  expect(await state()).toEqual({ marker: 'other:1', buffered: 'job:1000000120', stream: [] });
});

test('cancel-previous: the next trigger is enqueued and takes the marker; the superseded task releases nothing; its claim reports the taker', async () => {
  expect(await fire(trigger(0, FIRE_MODE.cancelPrevious))).toEqual(['enqueued']);
  const [t1] = await fetch();
  expect(await fire(trigger(60, FIRE_MODE.cancelPrevious))).toEqual(['superseding']);
  expect(await state()).toEqual({ marker: 'job:1000000060', buffered: undefined, stream: ['job:1000000000', 'job:1000000060'] });
  const held = [{ entryId: t1.entryId, taskId: t1.id, markers: markerKeys(keys, t1) }];
  expect((await claimScript(client, keys, 'w1', 10_000, held)).taken).toEqual([{ entryId: t1.entryId, holder: 'job:1000000060' }]);
  expect((await ack(t1)).acked).toBe(1);
  expect(await state()).toEqual({ marker: 'job:1000000060', buffered: undefined, stream: ['job:1000000060'] });
  // with no live task, the next trigger is a plain enqueue
  const [t2] = await fetch();
  await ack(t2);
  expect(await fire(trigger(120, FIRE_MODE.cancelPrevious))).toEqual(['enqueued']);
});

test('a trigger buffered behind a task fired under skip (the policy changed to buffer-one meanwhile) starts when that task ends', async () => {
  expect(await fire(trigger(0, FIRE_MODE.skipOverlap), trigger(60, FIRE_MODE.bufferOne))).toEqual(['enqueued', 'buffered']);
  const [t] = await fetch();
  expect(markerKeys(keys, t)).toEqual([keys.overlap('job'), keys.buffered('job')]);
  await ack(t);
  expect(await state()).toEqual({ marker: 'job:1000000060', buffered: undefined, stream: ['job:1000000060'] });
});

test('ack.lua: plain entries and a flagged task in one batch: each acked and deleted, the flagged one released, a plain one no longer pending reported gone', async () => {
  expect(await fire(trigger(0, FIRE_MODE.bufferOne), trigger(60, FIRE_MODE.bufferOne))).toEqual(['enqueued', 'buffered']);
  const plainIds: string[] = [];
  for (let i = 0; i < 3; i++)
    plainIds.push((await client.xadd(keys.stream, '*', 'id', `p${i}`, 'type', 't', 'payload', '1', 'meta', '{}'))!);
  const fetched = await fetch();
  const flagged = fetched.find((t) => t.id === 'job:1000000000')!;
  expect(fetched.map((t) => t.entryId).sort()).toEqual([flagged.entryId, ...plainIds].sort());
  // acked and deleted meanwhile (say, by an operator): not pending any more, so not counted, and gone
  await client.xack(keys.stream, CONSUMER_GROUP, plainIds[1]);
  await client.xdel(keys.stream, plainIds[1]);
  const out = await ackScript(client, keys, {
    plain: plainIds,
    flagged: [[flagged.entryId, flagged.id, markerKeys(keys, flagged)]],
    counterTtlMs: 60_000,
  });
  expect(out).toEqual({ acked: 3, reclaimed: [], gone: [plainIds[1]] });
  expect(await client.xpending(keys.stream, CONSUMER_GROUP)).toEqual([0, null, null, null]);
  // the flagged task's marker went to the trigger buffered behind it, which is now the only entry
  expect(await state()).toEqual({ marker: 'job:1000000060', buffered: undefined, stream: ['job:1000000060'] });
});
