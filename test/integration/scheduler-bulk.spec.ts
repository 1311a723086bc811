// The bulk runtime API of the Scheduler (addSchedules, upsertSchedules, removeSchedules) against a
// real Redis: visible and fired, unchanged = no write, changed = new generation and fenced, existing
// names untouched, validation before any write, missing names and the guard on live code schedules.
import type { Redis } from 'ioredis';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { ChronosStateError, DuplicateScheduleError, InvalidOptionsError, InvalidScheduleError } from '../../lib/core/runtime/errors.js';
import { EventBus, type ChronosEvent } from '../../lib/core/runtime/events.js';
import { fireScript, type FireTrigger } from '../../lib/core/redis/commands/schedule.js';
import { openConnection } from '../../lib/core/redis/connection.js';
import { GlobalKeys, QueueKeys, SchedulerKeys } from '../../lib/core/redis/keys.js';
import {
  allDefinitions,
  labelMembers,
  registryKey,
  registryNames,
  registrySize,
  shardVersions,
  storedJson,
  versionOf,
} from '../helpers/registry.js';
import { FIRE_MODE, META, newMeta } from '../../lib/core/redis/protocol.js';
import type { ScheduleDefinition } from '../../lib/core/scheduler/definition.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, waitFor, within } from '../helpers/wait.js';
import { ns, client, started, logger, scheduler, digests, stored } from '../helpers/scheduler-bulk.js';
import { closeMonitor, openMonitor } from '../helpers/monitor.js';

/** A trigger of schedule `name` planned under `generation`, for fire.lua. */
function trigger(name: string, generation: number, triggerAt: number): FireTrigger {
  const meta = newMeta(0, 0, triggerAt);
  meta[META.schedule] = name;
  meta[META.triggerAt] = triggerAt;
  return {
    schedule: name,
    triggerAt,
    type: name,
    payload: 'null',
    meta: JSON.stringify(meta),
    dedupTtlMs: 60_000,
    mode: FIRE_MODE.allowOverlap,
    generation,
  };
}

test('addSchedules: 1,000 schedules visible at once; the every-second ones are fired by the leader and run', async () => {
  const w = new ChronosServer({ connection: redisUrl(), namespace: ns, logger });
  started.push({ stop: () => w.shutdown() });
  const fast = ['tick.0', 'tick.1', 'tick.2'];
  const ran = new Map<string, { id: string; triggerAt?: number }>();
  const allRan = deferred();
  w.handle('tick', (t) => {
    ran.set(t.schedule!, { id: t.id, triggerAt: t.triggerAt });
    if (fast.every((n) => ran.has(n))) allRan.resolve();
  });
  await w.start();
  const s = scheduler();
  await s.start();
  const defs = [...digests(997), ...fast.map((name) => ({ name, spec: { every: 1000 }, type: 'tick' }))];
  expect(await s.addSchedules(defs)).toEqual({ added: 1000, existing: [] });
  expect(await registrySize(client, ns)).toBe(1000);
  const d = await stored('digest.1');
  expect(d).toMatchObject({ expression: '0 3 * * *', timeZone: 'Europe/Paris', queue: 'digests', runtime: true, payload: '{"tenant":1}' });
  expect(d.generation).toBeGreaterThan(0);
  expect(d.registeredAt).toBe(d.changedAt);
  expect(await client.smembers(`${ns}:{${ns}:global}:queues`)).toEqual(expect.arrayContaining(['default', 'digests']));
  await within(allRan.promise, 15_000, 'a task of each every-second schedule to run');
  for (const name of fast) {
    const r = ran.get(name)!;
    expect(r.triggerAt! % 1000).toBe(0);
    expect(r.id).toBe(`${name}:${r.triggerAt! / 1000}`);
  }
});

test('upsertSchedules: definitions stored with their fingerprint are left out after a read, before any script call; the others are written', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  await s.addSchedules(digests(300));
  // every command Redis runs on this namespace's keys (MONITOR: the shared Redis, filtered), up to a marker
  const seen: string[][] = [];
  // a connection of its own (test/helpers/monitor.ts), closed below: one left open kept Jest's process alive
  const monitor = await openMonitor(redisUrl());
  try {
    monitor.on('monitor', (_time: string, args: string[]) => args.some((a) => a.includes(ns)) && seen.push(args));
    const commandsDuring = async (marker: string, act: () => Promise<unknown>) => {
      await act();
      await client.get(`${ns}:${marker}`);
      await waitFor(() => seen.some((a) => a[1] === `${ns}:${marker}`), `the marker ${marker}`);
      return seen.splice(0).filter((a) => a[1] !== `${ns}:${marker}`);
    };
    const unchanged = await commandsDuring('m1', async () =>
      expect(await s.upsertSchedules(digests(300))).toEqual({ added: 0, changed: 0, unchanged: 300 }),
    );
    // put-schedules calls (its mode argument; the scheduler's own scripts, a heartbeat, may run meanwhile)
    const putCalls = (cmds: string[][]) => cmds.filter((a) => /^eval/i.test(a[0]) && a[3]?.endsWith(':schedules') && a.includes('upsert'));
    expect(putCalls(unchanged)).toEqual([]);
    expect(unchanged.filter((a) => a[0].toLowerCase() === 'hmget').length).toBeGreaterThan(0);
    const next = digests(300).map((d, i) => (i === 7 ? { ...d, payload: { tenant: 7, v: 2 } } : d));
    const one = await commandsDuring('m2', async () =>
      expect(await s.upsertSchedules(next)).toEqual({ added: 0, changed: 1, unchanged: 299 }),
    );
    // the changed one alone is sent to put-schedules: one call, its name only among the chunk's
    const puts = putCalls(one);
    expect(puts).toHaveLength(1);
    expect(puts[0].filter((a) => /^digest\.\d+$/.test(a))).toEqual(['digest.7']);
    expect((await stored('digest.7')).payload).toBe('{"tenant":7,"v":2}');
  } finally {
    closeMonitor(monitor);
  }
});

test('upsertSchedules: an unchanged definition writes nothing (no generation, no notice); a changed one keeps its pause, is fenced', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  const k = new SchedulerKeys(ns);
  expect(await s.upsertSchedules(digests(300))).toEqual({ added: 300, changed: 0, unchanged: 0 });
  await s.pauseSchedule('digest.7');
  await s.pauseSchedule('digest.8');
  await s.resumeSchedule('digest.8');
  const before = await allDefinitions(client, ns);
  const version = await shardVersions(client, ns);
  const notices: string[] = [];
  const sub = openConnection(redisUrl()).client as Redis;
  try {
    sub.on('message', (_channel: string, message: string) => notices.push(message));
    await sub.subscribe(k.changesChannel);
    /** Every notice before a marker published now (Redis delivers in the order it ran the commands). */
    const noticesBefore = async (marker: string) => {
      await client.publish(k.changesChannel, marker);
      await waitFor(() => notices.includes(marker), `the marker ${marker}`);
      return notices.splice(0).filter((m) => m !== marker);
    };
    expect(await s.upsertSchedules(digests(300))).toEqual({ added: 0, changed: 0, unchanged: 300 });
    expect(await shardVersions(client, ns)).toBe(version);
    expect(await allDefinitions(client, ns)).toEqual(before);
    expect(await noticesBefore('m1')).toEqual([]);

    // 7 and 8 change their payload, 9 moves to another queue, 300 is new, the rest is unchanged
    const next = digests(301).map((d, i) =>
      i === 7 || i === 8 ? { ...d, payload: { tenant: i, v: 2 } } : i === 9 ? { ...d, queue: 'digests-eu' } : d,
    );
    const old7 = await stored('digest.7');
    const old8 = await stored('digest.8');
    const old9 = await stored('digest.9');
    expect(await s.upsertSchedules(next)).toEqual({ added: 1, changed: 3, unchanged: 297 });
    expect(await noticesBefore('m2')).toHaveLength(1); // one notice for the call
    const new7 = await stored('digest.7');
    expect(new7.generation).toBeGreaterThan(old7.generation!);
    expect(new7).toMatchObject({ paused: true, registeredAt: old7.registeredAt, changedAt: old7.changedAt, payload: '{"tenant":7,"v":2}' });
    expect(await stored('digest.8')).toMatchObject({ resumedAt: old8.resumedAt, registeredAt: old8.registeredAt });
    expect((await stored('digest.8')).paused).not.toBe(true);
    expect(old8.resumedAt).toBeGreaterThan(0);
    expect((await stored('digest.9')).changedAt).toBeGreaterThanOrEqual(old9.changedAt!); // a new queue: its timing restarts
    expect(await storedJson(client, ns, 'digest.10')).toBe(before['digest.10']);
    // fenced in the queue each targeted: a trigger planned under the old generation is refused, one under the new taken
    const q = new QueueKeys(ns, 'digests');
    expect(Number(await client.hget(q.generation, 'digest.7'))).toBe(new7.generation);
    expect(Number(await client.hget(q.generation, 'digest.9'))).toBe((await stored('digest.9')).generation);
    const now = await redisNow();
    const r = await fireScript(client, q, undefined, 0, [
      trigger('digest.7', old7.generation!, now - 2000),
      trigger('digest.9', old9.generation!, now - 2000),
      trigger('digest.7', new7.generation!, now - 1000),
    ]);
    expect(r.results).toEqual(['fenced', 'fenced', 'enqueued']);
  } finally {
    sub.disconnect();
  }
});

async function redisNow(): Promise<number> {
  const [sec, us] = await client.time();
  return Number(sec) * 1000 + Math.floor(Number(us) / 1000);
}

test('upsertSchedules over a stored form without registeredAt or changedAt (an older writer) stores valid JSON', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  await s.addSchedule({ name: 'old', spec: '@every 1h' });
  const { registeredAt, changedAt, ...bare } = await stored('old');
  expect(registeredAt).toBe(changedAt);
  await client.hset(registryKey(ns, 'old'), 'old', JSON.stringify({ ...bare, paused: true }));
  expect(await s.upsertSchedules([{ name: 'old', spec: '@every 2h' }])).toEqual({ added: 0, changed: 1, unchanged: 0 });
  const now = await stored('old');
  expect(now).toMatchObject({ expression: '@every 2h', paused: true, generation: await versionOf(client, ns, 'old') });
  expect(now.registeredAt).toBeUndefined();
  expect(now.changedAt).toBeGreaterThan(0); // a new spec: its timing starts now
});

test('addSchedules leaves an existing name untouched and reports it', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  await s.addSchedule({ name: 'a', spec: '@every 1h' });
  const a = await storedJson(client, ns, 'a');
  const version = await versionOf(client, ns, 'b');
  expect(
    await s.addSchedules([
      { name: 'a', spec: '@every 5m' },
      { name: 'b', spec: '@every 5m' },
    ]),
  ).toEqual({ added: 1, existing: ['a'] });
  expect(await storedJson(client, ns, 'a')).toBe(a);
  expect((await stored('b')).generation).toBe(await versionOf(client, ns, 'b'));
  expect(await versionOf(client, ns, 'b')).toBeGreaterThan(version);
  expect(await s.addSchedules([{ name: 'a', spec: '@every 5m' }])).toEqual({ added: 0, existing: ['a'] });
  expect(await s.addSchedules([])).toEqual({ added: 0, existing: [] });
});

test('a bad definition or a name given twice is refused before anything is written, naming it and its index', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  const defs = [...digests(600), { name: 'broken', spec: '61 * * * *' }];
  const err = (await s.upsertSchedules(defs).catch((e: unknown) => e)) as InvalidScheduleError;
  expect(err).toBeInstanceOf(InvalidScheduleError);
  expect(err).toMatchObject({ schedule: 'broken', index: 600, value: '61 * * * *' });
  expect(err.message).toMatch(/"broken" \(definition \[600\] of the call\)/);
  const badName = (await s
    .addSchedules([
      { name: 'ok', spec: '@every 1s' },
      { name: 'no spaces', spec: '@every 1s' },
    ])
    .catch((e: unknown) => e)) as InvalidScheduleError;
  expect(badName).toBeInstanceOf(InvalidScheduleError);
  expect(badName.index).toBe(1);
  expect(badName.message).toMatch(/no spaces/);
  const twice = await s.addSchedules([...digests(3), { name: 'digest.1', spec: '@every 1s' }]).catch((e: unknown) => e);
  expect(twice).toBeInstanceOf(DuplicateScheduleError);
  expect([(twice as Error).message, (twice as DuplicateScheduleError).indexes]).toEqual([
    'A schedule named "digest.1" is given twice in one call to addSchedules: at [1] and [3]',
    [1, 3],
  ]);
  await expect(s.removeSchedules(['x', 'y', 'x'])).rejects.toThrow(
    'A schedule named "x" is given twice in one call to removeSchedules: at [0] and [2]',
  );
  // a removal's array holds names, and its error says so (trial 44: "definition [1] of the call")
  await expect(s.removeSchedules(['x', 'a b'])).rejects.toThrow(/^Invalid schedule "a b" \(name \[1\] of the call\): name: expected/);
  // a lone UTF-16 surrogate anywhere would be stored, then undecodable by the registry scripts (trial 7:
  // 41 of 41 stored, the bad one then neither removable nor changeable): refused before any write, naming where
  const lone = [
    [{ type: 'x\ud800' }, /type: expected well-formed Unicode/],
    [{ group: '\udc00g' }, /group: expected well-formed Unicode/],
    [{ labels: { tenant: 'a\ud800' } }, /labels.tenant: expected well-formed Unicode/],
    [{ payload: { to: ['ok', 'b\udbff'] } }, /payload.to\[1\]: expected well-formed Unicode/],
  ] as const;
  for (const [bad, problem] of lone) {
    const e = (await s.upsertSchedules([...digests(40), { name: 'bad', spec: '@every 1h', ...bad }]).catch((x: unknown) => x)) as Error;
    expect(e).toBeInstanceOf(InvalidScheduleError);
    expect([e.message, (e as InvalidScheduleError).index]).toEqual([expect.stringMatching(problem), 40]);
  }
  await expect(s.addSchedule({ name: 'c1', spec: '@every 1h', labels: { k: 'next\u0085line' } })).rejects.toThrow(/labels.k: expected/);
  // a type no handler can be registered for and no enqueue takes (over 200 characters) was stored, and
  // each trigger's task then found no handler: refused as an enqueue's type is
  const long = 't'.repeat(201);
  for (const call of [
    () => s.addSchedule({ name: 'c2', spec: '@every 1h', type: long }),
    () => s.upsertSchedules([{ name: 'c2', spec: '@every 1h', type: long }]),
  ]) {
    await expect(call()).rejects.toThrow(`type: expected a non-empty string of at most 200 characters without lone surrogates`);
  }
  // a hole in a sparse array is a missing definition at its index (trial 16: a TypeError "reading 'body'" from the write path)
  const sparse: ScheduleDefinition[] = digests(3);
  sparse[4] = { name: 'after.hole', spec: '@every 1h' };
  for (const call of [() => s.upsertSchedules(sparse), () => s.addSchedules(sparse)]) {
    const e = (await call().catch((x: unknown) => x)) as InvalidScheduleError;
    expect([e instanceof InvalidScheduleError, e.index, e.message]).toEqual([
      true,
      3,
      'Invalid schedule definition [3] of the call: expected a schedule definition object { name, spec, … }, got undefined',
    ]);
  }
  const sparseNames = ['digest.0'];
  sparseNames[2] = 'digest.1';
  await expect(s.removeSchedules(sparseNames)).rejects.toMatchObject({ name: 'InvalidScheduleError', index: 1 });
  expect([await registrySize(client, ns), await shardVersions(client, ns)]).toEqual([0, ','.repeat(15)]);
  await s.addSchedule({ name: 'emoji', spec: '@every 1h', type: 'wave \u{1f44b}', payload: { s: '\u{1f600}' } }); // a pair is fine
  expect(await stored('emoji')).toMatchObject({ type: 'wave \u{1f44b}', payload: '{"s":"\u{1f600}"}' });
});

test('a definition an earlier version stored with a lone surrogate can still be replaced, paused and removed (trial 7: neither)', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  await s.addSchedules([
    { name: 'bad.1', spec: '@every 1h', labels: { tenant: 'a' } },
    { name: 'bad.2', spec: '@every 1h' },
    { name: 'bad.3', spec: '@every 1h' },
  ]);
  // as JSON.stringify wrote one before the check: the lone surrogate escaped, which cjson refuses
  for (const name of ['bad.1', 'bad.2', 'bad.3']) {
    const json = (await storedJson(client, ns, name))!;
    await client.hset(registryKey(ns, name), name, json.replace(/}$/, ',"group":"g\\ud800"}'));
  }
  await s.pauseSchedule('bad.2');
  expect(await stored('bad.2')).toMatchObject({ paused: true });
  await s.upsertSchedules([{ name: 'bad.3', spec: '@every 2h' }]);
  expect(await stored('bad.3')).toMatchObject({ expression: '@every 2h' });
  expect(await s.removeSchedules(['bad.1', 'bad.2'])).toEqual({ removed: 2, missing: [] });
  expect(await registryNames(client, ns)).toEqual(['bad.3']);
  expect(await labelMembers(client, ns, 'tenant', 'a')).toEqual([]); // its labels read too, and unindexed
});

test('removeSchedules: removed and fenced, missing names reported, one operator.acted; live code schedules refuse the call', async () => {
  const events = new EventBus();
  const acted: Extract<ChronosEvent, { type: 'operator.acted' }>[] = [];
  events.subscribe((e) => e.type === 'operator.acted' && acted.push(e));
  const s = scheduler({ eligible: false, events });
  s.register({ name: 'code.job', spec: '@every 60s' });
  await s.start();
  const k = new SchedulerKeys(ns);
  await s.addSchedules(digests(600));
  await s.pauseSchedule('digest.3');
  acted.length = 0;
  const old3 = await stored('digest.3');
  // a schedule this live instance declares in code: the whole call is refused, nothing removed
  await expect(s.removeSchedules(['digest.1', 'code.job'])).rejects.toThrow(ChronosStateError);
  await expect(s.removeSchedules(['digest.1', 'code.job'])).rejects.toThrow(/"code.job" \(.*\).*nothing was removed/);
  expect(await storedJson(client, ns, 'digest.1')).not.toBeNull();

  const names = [...digests(600).map((d) => d.name), 'nope.1', 'nope.2'];
  expect(await s.removeSchedules(names)).toEqual({ removed: 600, missing: ['nope.1', 'nope.2'] });
  expect(await registryNames(client, ns)).toEqual(['code.job']);
  expect(await client.hexists(k.pauseNotes, 'digest.3')).toBe(0);
  const fence = Number(await client.hget(new QueueKeys(ns, 'digests').generation, 'digest.3'));
  expect(fence).toBeGreaterThan(old3.generation!);
  expect(acted).toEqual([expect.objectContaining({ action: 'schedule.remove', actor: `app:${s.instanceId}`, count: 600 })]);
  expect(await s.removeSchedules(['digest.3'])).toEqual({ removed: 0, missing: ['digest.3'] });
  expect(acted).toHaveLength(1); // nothing removed: no act
});

test('a runtime write never takes over a schedule declared in code: upsertSchedules and addSchedule refuse it, naming it, unless forced', async () => {
  const s = scheduler({ eligible: false });
  s.register({ name: 'code.job', spec: '@every 60s', type: 'code' });
  await s.start();
  const code = await stored('code.job');
  const data = (type: string): ScheduleDefinition => ({ name: 'code.job', spec: '@every 2s', type });
  // upsert: the code schedule is left as declared, the other definition is written, and the call says which
  await expect(s.upsertSchedules([data('data'), ...digests(2)])).rejects.toThrow(ChronosStateError);
  await expect(s.upsertSchedules([data('data')])).rejects.toThrow(/1 schedule\(s\) are declared in code.*"code.job".*force: true/);
  expect(await stored('code.job')).toEqual(code);
  expect(await registryNames(client, ns)).toEqual(['code.job', 'digest.0', 'digest.1']);
  await expect(s.addSchedule(data('data'))).rejects.toThrow(/Schedule "code.job" is declared in code.*force: true/);
  expect(await stored('code.job')).toEqual(code);
  // nor is the queue of a refused definition listed (trial 29: "phantom" was, with nothing in it)
  await expect(s.upsertSchedules([{ ...data('data'), queue: 'phantom' }])).rejects.toThrow(ChronosStateError);
  expect(await client.smembers(new GlobalKeys(ns).queues)).not.toContain('phantom');
  // force replaces it, as asked
  expect(await s.upsertSchedules([data('forced')], { force: true })).toEqual({ added: 0, changed: 1, unchanged: 0 });
  expect(await stored('code.job')).toMatchObject({ runtime: true, type: 'forced', expression: '@every 2s' });
  await s.addSchedule(data('again'));
  expect(await stored('code.job')).toMatchObject({ runtime: true, type: 'again' }); // a runtime one now: replaced freely
});

test('a bulk call with names or options of the wrong type, or an unknown option, throws a typed error naming it; nothing is written (trial 23)', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  expect(await s.upsertSchedules(digests(2))).toEqual({ added: 2, changed: 0, unchanged: 0 });
  const before = await allDefinitions(client, ns);
  // before: "Cannot read properties of null (reading 'length')"
  for (const names of [null, undefined, 'digest.0'] as never[]) {
    const err = await s.removeSchedules(names).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidScheduleError);
    expect((err as Error).message).toMatch(/removeSchedules: expected an array of names/);
  }
  const calls: [string, (opts: never) => Promise<unknown>][] = [
    ['upsertSchedules', (o) => s.upsertSchedules(digests(3, { queue: 'other' }), o)],
    ['removeSchedules', (o) => s.removeSchedules(['digest.0'], o)],
    ['addSchedule', (o) => s.addSchedule({ name: 'digest.9', spec: '@daily' }, o)],
  ];
  for (const [call, run] of calls) {
    // before: "Cannot read properties of null (reading 'force')", and { forse: true } was taken as {}
    for (const [opts, problem] of [
      [null, 'expected an object { force?: boolean }, got null'],
      [[true], 'expected an object { force?: boolean }, got [true]'],
      [{ forse: true }, 'unknown option "forse"'],
      [{ force: 'yes' }, 'force: expected true or false, got "yes"'],
    ] as [never, string][]) {
      const err = await run(opts).catch((e: unknown) => e);
      expect([call, err instanceof InvalidOptionsError]).toEqual([call, true]);
      expect((err as Error).message).toBe(`Invalid ${call} options (1 problem):\n  - ${problem}`);
    }
  }
  expect(await allDefinitions(client, ns)).toEqual(before);
  expect(await s.removeSchedules(['digest.0'], undefined)).toEqual({ removed: 1, missing: [] });
  expect(await s.upsertSchedules(digests(2), { force: false })).toEqual({ added: 1, changed: 0, unchanged: 1 });
});

test('a schedule named "." or ".." that an earlier version stored can still be removed, by removeSchedule and removeSchedules', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  await s.addSchedule({ name: 'old', spec: '@every 1h' });
  const json = (await storedJson(client, ns, 'old'))!;
  for (const name of ['.', '..']) await client.hset(registryKey(ns, name), name, json); // accepted before trial 15
  await expect(s.addSchedule({ name: '..', spec: '@every 1h' })).rejects.toThrow(InvalidScheduleError); // no new one
  await s.removeSchedule('..');
  expect(await s.removeSchedules(['.', '..'])).toEqual({ removed: 1, missing: ['..'] }); // before: InvalidScheduleError for '.'
  expect(await registryNames(client, ns)).toEqual(['old']);
});
