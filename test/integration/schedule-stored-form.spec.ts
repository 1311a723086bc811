// Issue 25 (memory): with `compactSchedules: true` a stored schedule definition is written in the compact form
// (stored-form.ts); by default in the full form, which every earlier version reads.
// Definitions the previous version stored in the full form — in Redis during a rolling deploy —
// must still be read (leader, Inspector, scripts), and an unchanged one must stay a no-op when
// declared or upserted again (its fingerprint is the same in both forms). They are written here
// raw, as that version's code wrote them: JSON.stringify of the whole registry form.
import type { Redis } from 'ioredis';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { openConnection } from '../../lib/core/redis/connection.js';
import { QueueKeys, shardKeysFor } from '../../lib/core/redis/keys.js';
import { type ScheduleDefinition } from '../../lib/core/scheduler/definition.js';
import { toStored } from '../../lib/core/scheduler/definition-check.js';
import { Scheduler, type SchedulerOptions } from '../../lib/core/scheduler/scheduler.js';
import { decodeStored } from '../../lib/core/scheduler/stored-form.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { labelMembers, registryKey, shardVersions, storedJson } from '../helpers/registry.js';
import { deferred, recordingLogger, within } from '../helpers/wait.js';

let ns: string;
let client: Redis;
const started: { stop(): Promise<void> }[] = [];
const logger = recordingLogger();
beforeEach(() => {
  ns = newNamespace('form');
  client = openConnection(redisUrl()).client as Redis;
});
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
  client.disconnect();
  await deleteNamespace(ns);
});

function scheduler(options: SchedulerOptions = {}): Scheduler {
  const s = new Scheduler({
    connection: redisUrl(),
    namespace: ns,
    leaderTtl: 1000,
    heartbeatInterval: 200,
    logger,
    compactSchedules: true,
    ...options,
  });
  started.push(s);
  return s;
}

/** Stores `def` in the full form, as the version before the compact form did (registry state included). */
async function storeFull(def: ScheduleDefinition, runtime: boolean, state: Record<string, unknown>): Promise<string> {
  const { stored } = toStored(def, 'UTC', runtime);
  const json = JSON.stringify({ ...stored, ...state });
  await client.hset(registryKey(ns, def.name), def.name, json);
  await client.zadd(shardKeysFor(ns, def.name).nameIndex, 0, def.name);
  return json;
}

const at = 1_796_000_000_000;
const defs: ScheduleDefinition[] = [
  { name: 'full.plain', spec: '0 3 * * *' },
  {
    name: 'full.rich',
    spec: '5 3 1 * *',
    timeZone: 'Asia/Kolkata',
    queue: 'digests',
    payload: { a: 1 },
    maxRetry: 3,
    labels: { plan: 'pro' },
  },
];

test('an unchanged definition stored in the full form stays as it is when upserted or declared again (same fingerprint: no write, no generation)', async () => {
  const full = new Map<string, string>();
  for (const d of defs) full.set(d.name, await storeFull(d, true, { registeredAt: at, changedAt: at + 5, generation: at + 7 }));
  await storeFull({ name: 'code.nightly', spec: '0 1 * * *' }, false, { registeredAt: at, changedAt: at, generation: at });
  const version = await shardVersions(client, ns);
  const s = scheduler({ eligible: false });
  s.register({ name: 'code.nightly', spec: '0 1 * * *' });
  await s.start();
  expect(await s.upsertSchedules(defs)).toEqual({ added: 0, changed: 0, unchanged: 2 });
  expect(await s.addSchedules(defs)).toEqual({ added: 0, existing: ['full.plain', 'full.rich'] });
  expect(await shardVersions(client, ns)).toBe(version);
  for (const d of defs) expect(await storedJson(client, ns, d.name)).toBe(full.get(d.name));
  expect(JSON.parse((await storedJson(client, ns, 'code.nightly'))!)).toMatchObject({ name: 'code.nightly', generation: at });
});

test('a changed definition replacing a full one is stored compact, keeping its registration, pause and timing; label-only keeps the generation', async () => {
  const base = defs[1];
  await storeFull(base, true, { registeredAt: at, changedAt: at + 5, generation: at + 7, paused: true, resumedAt: at + 3 });
  const s = scheduler({ eligible: false });
  await s.start();
  // labels only: the same generation, no fence, compact now
  expect(await s.upsertSchedules([{ ...base, labels: { plan: 'team' } }])).toEqual({ added: 0, changed: 1, unchanged: 0 });
  const raw = (await storedJson(client, ns, base.name))!;
  expect(JSON.parse(raw)).not.toHaveProperty('name');
  expect(decodeStored(base.name, raw)).toMatchObject({
    queue: 'digests',
    maxRetry: 3,
    catchUpCap: 100,
    paused: true,
    resumedAt: at + 3,
    registeredAt: at,
    changedAt: at + 5,
    generation: at + 7,
  });
  expect(await labelMembers(client, ns, 'plan', 'team')).toEqual([base.name]);
  expect(await client.hexists(new QueueKeys(ns, 'digests').generation, base.name)).toBe(0);
  // a new payload: a new generation, fenced in its queue; the timing (and changedAt) unchanged
  expect(await s.upsertSchedules([{ ...base, labels: { plan: 'team' }, payload: { a: 2 } }])).toMatchObject({ changed: 1 });
  const next = decodeStored(base.name, (await storedJson(client, ns, base.name))!);
  expect(next).toMatchObject({ payload: '{"a":2}', paused: true, registeredAt: at, changedAt: at + 5 });
  expect(next.generation).toBeGreaterThan(at + 7);
  expect(Number(await client.hget(new QueueKeys(ns, 'digests').generation, base.name))).toBe(next.generation);
});

test('a compact definition in the default queue is fenced there when replaced or removed (its queue is left out)', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  const q = new QueueKeys(ns, 'default');
  await s.addSchedule({ name: 'a', spec: '@every 1h' });
  await s.addSchedules([{ name: 'b', spec: '@every 1h' }]);
  expect(JSON.parse((await storedJson(client, ns, 'a'))!)).not.toHaveProperty('queue');
  await s.addSchedule({ name: 'a', spec: '@every 2h', queue: 'other' });
  expect(Number(await client.hget(q.generation, 'a'))).toBeGreaterThan(0);
  expect(await s.removeSchedules(['b'])).toMatchObject({ removed: 1 });
  expect(Number(await client.hget(q.generation, 'b'))).toBeGreaterThan(0);
});

test('the leader fires a schedule stored in the full form and one stored compact alike; the Inspector reads both', async () => {
  const ran = new Map<string, { queue: string; maxRetry: number }>();
  const both = deferred();
  const w = new ChronosServer({ connection: redisUrl(), namespace: ns, logger, queues: ['default', 'digests'] });
  started.push({ stop: () => w.shutdown() });
  w.handle('tick', (t) => {
    ran.set(t.schedule!, { queue: t.queue, maxRetry: t.maxRetry });
    if (ran.size === 2) both.resolve();
  });
  await w.start();
  const tick = (name: string): ScheduleDefinition => ({ name, spec: { every: 1000 }, type: 'tick', queue: 'digests', maxRetry: 4 });
  await storeFull(tick('old.tick'), true, { registeredAt: Date.now(), changedAt: Date.now(), generation: 1 });
  await client.zadd(shardKeysFor(ns, 'old.tick').due, 0, 'old.tick');
  const s = scheduler();
  await s.start();
  await s.addSchedule(tick('new.tick'));
  await within(both.promise, 15_000, 'a task of each schedule to run');
  expect(ran.get('old.tick')).toEqual({ queue: 'digests', maxRetry: 4 });
  expect(ran.get('new.tick')).toEqual({ queue: 'digests', maxRetry: 4 });
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns, compactSchedules: true });
  started.push({ stop: () => inspector.close() });
  const [o, n] = [await inspector.schedule('old.tick'), await inspector.schedule('new.tick')];
  for (const i of [o, n])
    expect(i).toMatchObject({
      expression: '@every 1s',
      timeZone: 'UTC',
      queue: 'digests',
      type: 'tick',
      catchUp: 'all',
      runtime: true,
      paused: false,
    });
});

test('upsert: a stored definition in another key order (a script re-encoded it) whose prefix matches but holds a zone the new one leaves out has a new timing', async () => {
  const s = scheduler({ eligible: false });
  await s.start();
  // as a pause (schedule-admin.lua, cjson) may store it: the same first bytes as the JSON the bulk API sends for zone UTC
  const old = { registeredAt: at, changedAt: at + 5, generation: at + 7 };
  const text = `{"expression":"0 3 * * *","runtime":true,"timeZone":"Europe/Paris","fp":"0000000000000000","registeredAt":${at},"changedAt":${at + 5},"generation":${at + 7}}`;
  await client.hset(registryKey(ns, 'zone'), 'zone', text);
  expect(await s.upsertSchedules([{ name: 'zone', spec: '0 3 * * *' }])).toMatchObject({ changed: 1 });
  const now = decodeStored('zone', (await storedJson(client, ns, 'zone'))!);
  expect(now).toMatchObject({ timeZone: 'UTC', registeredAt: old.registeredAt });
  expect(now.changedAt).toBeGreaterThan(old.changedAt); // the zone changed: its timing starts now
});

test('by default every writer stores the full form, which an earlier version reads; compactSchedules on the Inspector or the scheduler writes compact', async () => {
  const full = scheduler({ eligible: false, compactSchedules: false });
  await full.start();
  await full.addSchedule({ name: 'one', spec: '@every 1h' });
  await full.addSchedules([{ name: 'bulk', spec: '@every 1h' }]);
  const plain = new Inspector({ connection: redisUrl(), namespace: ns });
  started.push({ stop: () => plain.close() });
  await plain.addSchedule({ name: 'by-inspector', spec: '@every 1h' });
  for (const name of ['one', 'bulk', 'by-inspector']) {
    // the full form: name first, every field present (as JSON.stringify of the registry form)
    expect(JSON.parse((await storedJson(client, ns, name))!)).toMatchObject({ name, queue: 'default', maxRetry: 25, catchUpCap: 100 });
  }
  const compact = new Inspector({ connection: redisUrl(), namespace: ns, compactSchedules: true });
  started.push({ stop: () => compact.close() });
  await compact.addSchedule({ name: 'by-inspector', spec: '@every 2h' });
  expect(JSON.parse((await storedJson(client, ns, 'by-inspector'))!)).not.toHaveProperty('name');
});
