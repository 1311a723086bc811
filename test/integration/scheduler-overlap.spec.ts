// The overlap policies buffer-one and cancel-previous across real processes: a leader that runs no
// handler and two worker processes (test/fixtures/scheduler-node.ts, GATE=1: a handler runs until the
// test releases it, or until its signal aborts). buffer-one: one trigger waits behind the live task
// and starts when it ends, whichever way (success, dead, an operator's cancel, its worker SIGKILLed
// and the task finished elsewhere, the leader dead meanwhile); further ones are skipped and counted.
// cancel-previous: the next trigger aborts the running task's signal on whichever worker runs it, by
// the leader's notice or, when that is lost, by the worker's claim renewal.
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { fireScript, type FireTrigger } from '../../lib/core/redis/commands/schedule.js';
import { openConnection } from '../../lib/core/redis/connection.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { FIRE_MODE, META, OVERLAP_MODE, newMeta } from '../../lib/core/redis/protocol.js';
import type { ScheduleDefinition } from '../../lib/core/scheduler/definition.js';
import { killAllChildren, startChild } from '../helpers/children.js';
import { cliRunner } from '../helpers/cli.js';
import { Fleet } from '../helpers/fleet.js';
import type { Rec } from '../helpers/records.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

jest.setTimeout(120_000);

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

/** Waits for the first record that passes `pred`. */
function record(f: Fleet, pred: (r: Rec) => boolean, what: string, timeoutMs = 20_000): Promise<Rec> {
  return waitFor(async () => (await f.records()).find(pred), { what, timeoutMs });
}

const release = (f: Fleet, id: string, how: 'ok' | 'fail') => f.redis.set(`${f.ns}:release:${id}`, how);
const ENDS = new Set(['done', 'failed', 'aborted']);

test('buffer-one: the buffered trigger starts when the live task ends by success, dead, cancel, or on another worker after a SIGKILL; further ones are skipped', async () => {
  const def: ScheduleDefinition = { name: 'ovl.buf', spec: '@every 1s', overlap: 'buffer-one', maxRetry: 0 };
  const f = (fleet = new Fleet([def], { GATE: 1, VISIBILITY_MS: 2000 }, redisUrl(), 'ovlbuf'));
  const inspector = new Inspector({ connection: redisUrl(), namespace: f.ns });
  try {
    let leader = await f.start('L', { WORKER: 0 });
    const workers = [await f.start('W1', { SCHEDULER: 0 }), await f.start('W2', { SCHEDULER: 0 })];
    const started = (id: string, after = 0) => record(f, (r) => r.phase === 'start' && r.id === id && r.t >= after, `${id} to start`);
    /** The trigger buffered behind the task that started last: a fired record with buffered after `afterAt`. */
    const buffered = (afterAt: number) =>
      record(
        f,
        (r) => r.phase === 'fired' && r.buffered === true && (r.triggerAt as number) > afterAt,
        `a trigger buffered after ${afterAt}`,
      );

    const first = await record(f, (r) => r.phase === 'start', 'the first task to start');
    let live = first;
    const ends: string[] = [];
    let cancelledAt = { id: '', t: 0 };
    for (const how of ['success', 'dead', 'cancel', 'sigkill'] as const) {
      const next = await buffered(live.triggerAt as number);
      if (how === 'success') {
        // the Inspector and the CLI show the policy and the waiting trigger; the history says where it is
        const info = await inspector.schedule('ovl.buf');
        expect({ overlap: info.overlap, buffered: info.buffered }).toEqual({
          overlap: 'buffer-one',
          buffered: { taskId: next.id, triggerAt: next.triggerAt, behind: live.id },
        });
        const shown = await cliRunner(() => f.ns).chronos('schedule', 'show', 'ovl.buf');
        expect(shown.out).toMatch(/overlap\s+│ buffer-one/);
        expect(shown.out).toContain(`${next.id} (trigger `);
        const h = await inspector.scheduleHistory('ovl.buf', 100);
        expect(h.find((r) => r.taskId === next.id)).toMatchObject({ outcome: 'buffered', task: 'buffered' });
        expect(h.find((r) => r.taskId === live.id)).toMatchObject({ outcome: 'enqueued', task: 'active' });
      }
      await record(
        f,
        (r) => r.phase === 'skipped' && r.reason === 'overlap' && (r.triggerAt as number) > (next.triggerAt as number),
        'a further trigger skipped',
      );
      if (how === 'success') await release(f, live.id, 'ok');
      if (how === 'dead') await release(f, live.id, 'fail');
      if (how === 'cancel') {
        // the cancel ends the task's life in the queue at once (dead); its handler stops when it sees its signal
        cancelledAt = { id: live.id, t: Date.now() };
        await inspector.cancelTask(live.id, { actor: 'test' });
      }
      if (how === 'sigkill') {
        // its worker dies: the other one reclaims the task and runs it again; the leader dies too, so
        // the buffered trigger can only start from the script that ends the task
        const owner = workers.find((w) => w.name === live.instance)!;
        owner.kill('SIGKILL');
        leader.kill('SIGKILL');
        await Promise.all([owner.exited, leader.exited]);
        const again = await record(
          f,
          (r) => r.phase === 'start' && r.id === live.id && r.instance !== owner.name,
          `${live.id} to run again elsewhere`,
        );
        expect((await f.records()).some((r) => r.phase === 'start' && r.id === next.id)).toBe(false); // still waiting behind it
        await release(f, again.id, 'ok');
      }
      ends.push(how);
      live = await started(next.id);
      expect(live.triggerAt).toBe(next.triggerAt); // its own trigger instant and task id (= its dedup key)
      if (how === 'sigkill') expect(f.children.filter((c) => c.alive).map((c) => c.name)).toEqual([workers.find((w) => w.alive)!.name]);
    }
    expect(ends).toEqual(['success', 'dead', 'cancel', 'sigkill']);
    leader = await f.start('L2', { WORKER: 0 }); // a leader again, for the history below to be complete
    const recs = await f.records();
    // never two tasks of the schedule at once: each starts after the previous one ended
    const firstStart = new Map<string, number>();
    const lastEnd = new Map<string, number>();
    for (const r of recs) {
      if (r.phase === 'start' && !firstStart.has(r.id)) firstStart.set(r.id, r.t);
      if (ENDS.has(r.phase)) lastEnd.set(r.id, Math.max(lastEnd.get(r.id) ?? 0, r.t));
    }
    lastEnd.set(cancelledAt.id, cancelledAt.t);
    const order = [...firstStart].sort((a, b) => a[1] - b[1]).map(([id]) => id);
    for (let i = 1; i < order.length; i++) {
      const prev = order[i - 1];
      expect({ prev, endedBeforeNext: (lastEnd.get(prev) ?? Infinity) <= firstStart.get(order[i])! }).toEqual({
        prev,
        endedBeforeNext: true,
      });
    }
    // every trigger that was accepted (enqueued or buffered) started, except the one buffered last
    const accepted = recs.filter((r) => r.phase === 'fired').map((r) => r.id);
    const notStarted = accepted.filter((id) => !firstStart.has(id));
    expect(notStarted.length).toBeLessThanOrEqual(1);
    // the skipped ones were counted, one event each, and never ran
    const skipped = recs.filter((r) => r.phase === 'skipped' && r.reason === 'overlap');
    expect(skipped.length).toBeGreaterThanOrEqual(4);
    expect(skipped.every((r) => r.count === 1 && !firstStart.has(`ovl.buf:${(r.triggerAt as number) / 1000}`))).toBe(true);
    // the dead ways of ending are in the dead set: released to fail (non-retryable), cancelled
    const dead = (await inspector.tasks('default', 'dead')).map((t) => [t.id, t.reason]);
    expect(dead.sort()).toEqual(
      [
        [order[1], 'non-retryable'],
        [order[2], 'cancelled'],
      ].sort(),
    );
    const history = await inspector.scheduleHistory('ovl.buf', 100);
    expect(history.filter((h) => h.outcome === 'buffered').length).toBeGreaterThanOrEqual(4);
  } finally {
    await inspector.close();
  }
});

test('cancel-previous: each trigger aborts the running task on whichever worker runs it (the leader runs none), with a TaskSupersededError; none retried, none dead', async () => {
  const def: ScheduleDefinition = { name: 'ovl.cancel', spec: '@every 2s', overlap: 'cancel-previous' };
  // a long visibility timeout: claim renewals every 20 s, so the notices alone can abort within the waits
  const f = (fleet = new Fleet([def], { GATE: 1, VISIBILITY_MS: 60_000 }, redisUrl(), 'ovlcan'));
  await f.start('L', { WORKER: 0 });
  await f.start('W1', { SCHEDULER: 0 });
  await f.start('W2', { SCHEDULER: 0 });
  const aborted = await waitFor(
    async () => {
      const a = (await f.records()).filter((r) => r.phase === 'aborted');
      return a.length >= 3 ? a : undefined;
    },
    { what: 'three superseded runs', timeoutMs: 30_000 },
  );
  // each superseding task starts (its start may be recorded just after the abort)
  const recs = await waitFor(async () => {
    const r = await f.records();
    return aborted.every((a) => r.some((x) => x.phase === 'start' && x.id === a.supersededBy)) ? r : undefined;
  }, 'the superseding tasks to start');
  for (const a of aborted) {
    // the next trigger (or, after a late tick that fired two at once, the newest of them)
    const next = String(a.supersededBy);
    expect({ id: a.id, reason: a.reason, schedule: a.reasonSchedule }).toEqual({
      id: a.id,
      reason: 'TaskSupersededError',
      schedule: 'ovl.cancel',
    });
    expect(next).toMatch(/^ovl\.cancel:\d+$/);
    expect(Number(next.split(':')[1]) * 1000).toBeGreaterThan(a.triggerAt as number);
    expect(recs.some((r) => r.phase === 'superseded' && r.id === a.id && r.by === next && r.instance === a.instance)).toBe(true);
    expect(a.instance).not.toBe('L');
  }
  expect(recs.filter((r) => r.phase === 'start' && (r.retried as number) > 0)).toEqual([]); // never retried
  const keys = new QueueKeys(f.ns, 'default');
  expect(await f.redis.zcard(keys.dead)).toBe(0);
  expect(await f.redis.zcard(keys.retry)).toBe(0);
  // the trigger after the last superseded one holds the marker
  expect(await f.redis.get(keys.overlap('ovl.cancel'))).toMatch(/^ovl\.cancel:\d+$/);
});

test('cancel-previous without the notice (a leader that died after the fire): the worker finds the taken marker at its claim renewal and aborts the run', async () => {
  const ns = newNamespace('ovlclaim');
  const recordKey = `${ns}-records:calls`;
  const redis = new Redis(redisUrl());
  const client = openConnection(redisUrl()).client as Redis;
  const keys = new QueueKeys(ns, 'default');
  const trig = (triggerAt: number): FireTrigger => {
    const meta = newMeta(3, 0, triggerAt);
    Object.assign(meta, {
      [META.schedule]: 'ovl.quiet',
      [META.triggerAt]: triggerAt,
      [META.overlapSkip]: 1,
      [META.overlapMode]: OVERLAP_MODE.cancelPrevious,
    });
    return {
      schedule: 'ovl.quiet',
      triggerAt,
      type: 'ovl.quiet',
      payload: 'null',
      meta: JSON.stringify(meta),
      dedupTtlMs: 3_600_000,
      mode: FIRE_MODE.cancelPrevious,
      generation: 0,
    };
  };
  try {
    const def: ScheduleDefinition = { name: 'ovl.quiet', spec: '@every 1h' };
    const env = {
      REDIS_URL: redisUrl(),
      NS: ns,
      RECORD_KEY: recordKey,
      SCHEDULES: JSON.stringify([def]),
      SCHEDULER: 0,
      GATE: 1,
      VISIBILITY_MS: 900,
    };
    await startChild('scheduler-node', 'W1', env);
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 2000;
    expect((await fireScript(client, keys, undefined, 0, [trig(t0)])).results).toEqual(['enqueued']);
    await waitFor(
      async () => (await redis.lrange(recordKey, 0, -1)).some((s) => (JSON.parse(s) as Rec).phase === 'start'),
      'the first task to start',
    );
    // the next trigger, and no notice: as if its leader died right after fire.lua
    expect((await fireScript(client, keys, undefined, 0, [trig(t0 + 1000)])).results).toEqual(['superseding']);
    const a = await waitFor(
      async () => (await redis.lrange(recordKey, 0, -1)).map((s) => JSON.parse(s) as Rec).find((r) => r.phase === 'aborted'),
      { what: 'the run to be aborted at a claim renewal (every 300 ms)', timeoutMs: 10_000 },
    );
    expect(a).toMatchObject({ id: `ovl.quiet:${t0 / 1000}`, reason: 'TaskSupersededError', supersededBy: `ovl.quiet:${t0 / 1000 + 1}` });
    await waitFor(
      async () =>
        (await redis.lrange(recordKey, 0, -1)).some(
          (s) => (JSON.parse(s) as Rec).phase === 'start' && (JSON.parse(s) as Rec).id === `ovl.quiet:${t0 / 1000 + 1}`,
        ),
      'the superseding task to start',
    );
    expect(await redis.zcard(keys.dead)).toBe(0);
    expect(await redis.zcard(keys.retry)).toBe(0);
  } finally {
    await killAllChildren();
    client.disconnect();
    await redis.del(recordKey);
    redis.disconnect();
    await deleteNamespace(ns);
  }
});
