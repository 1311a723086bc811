// Issue 15, target 5 (the Redis side of many schedules): registering thousands of schedules is chunked
// (no register-schedules call carries more than REGISTER_CHUNK definitions, no SADD more than 1,000 names,
// and no whole-set read of the declarations), instances declaring the same names share one names set,
// liveness and orphaned stay right when a declaring instance goes and comes back, and the Inspector
// lists every schedule with its fields. On a private Redis, whose SLOWLOG records every command.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueKeys, SchedulerKeys } from '../../lib/core/redis/keys.js';
import { expandedSource } from '../../lib/core/redis/scripts.js';
import { FENCE_CHUNK, REGISTER_CHUNK } from '../../lib/core/scheduler/registry.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';
import { storedJson } from '../helpers/registry.js';

const N = 5_000;
const ZONES = ['UTC', 'Europe/Berlin', 'Asia/Kolkata'];
const EXTRA = Array.from({ length: 10 }, (_, i) => `b.only.${i}`);

let redis: PrivateRedis;
let admin: Redis;
const closers: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  redis = await PrivateRedis.start();
  admin = new Redis(redis.url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  admin.disconnect();
  await redis.kill();
});

function instance(id: string, extra: string[], eligible: boolean, logger = recordingLogger(), payload?: unknown) {
  // heartbeat 2 s: a declaration lives 6 s without one, so a loaded machine stalling this process a few seconds does not expire them
  const s = new Scheduler({ connection: redis.url, instanceId: id, heartbeatInterval: 2000, leaderTtl: 1000, eligible, logger });
  for (let i = 0; i < N; i++) {
    const cron = i % 2 === 1;
    s.register({
      name: `s${i}`,
      spec: cron ? `${i % 60} 3 * * *` : '@every 1h',
      timeZone: cron ? ZONES[i % 3] : undefined,
      queue: `q${i % 3}`,
      payload,
    });
  }
  for (const name of extra) s.register({ name, spec: '@daily' });
  closers.push(() => s.stop());
  return s;
}

/** Total argument count of a SLOWLOG entry (Redis keeps 32 and says how many more). */
function argCount(args: string[]): number {
  const more = /^\.\.\. \((\d+) more arguments\)$/.exec(args[args.length - 1] ?? '');
  return more ? args.length - 1 + Number(more[1]) : args.length;
}

test('5,000 schedules from 3 instances: chunked registration, one shared names set, right liveness, every schedule listed', async () => {
  await admin.config('SET', 'slowlog-log-slower-than', '0');
  await admin.config('SET', 'slowlog-max-len', '500000');
  await admin.call('SLOWLOG', 'RESET');
  const logger = recordingLogger();
  const a = instance('a', [], true, logger);
  const b = instance('b', EXTRA, false);
  const c = instance('c', [], false);
  await Promise.all([a.start(), b.start(), c.start()]);
  await waitFor(() => a.isLeader, 'a to lead');

  const entries = (await admin.call('SLOWLOG', 'GET', '500000')) as [number, number, number, string[]][];
  await admin.config('SET', 'slowlog-log-slower-than', '10000');
  const register = createHash('sha1').update(expandedSource('register-schedules')).digest('hex');
  let registerCalls = 0;
  const wholeReads: string[] = [];
  const overChunk: number[] = [];
  const bigSadds: number[] = [];
  for (const [, , , args] of entries) {
    const cmd = args[0].toLowerCase();
    if (['sunion', 'smembers', 'keys'].includes(cmd)) wholeReads.push(args.slice(0, 2).join(' ')); // whole-set reads of the declarations
    if ((cmd === 'evalsha' && args[1] === register) || (cmd === 'eval' && /register-schedules/.test(args[1]))) {
      registerCalls++;
      // EVALSHA sha numkeys schedules version prefix nowMs missingOnly, then name, fp, json per definition
      if (argCount(args) > 8 + 3 * REGISTER_CHUNK) overChunk.push(argCount(args));
    }
    if (cmd === 'sadd' && args[1].includes(':names-building:') && argCount(args) > 2 + 1000) bigSadds.push(argCount(args));
  }
  expect({ wholeReads, overChunk, bigSadds }).toEqual({ wholeReads: [], overChunk: [], bigSadds: [] });
  expect(registerCalls).toBeGreaterThanOrEqual(3 * Math.ceil(N / REGISTER_CHUNK));

  // a and c declare the same names: one set; b its own
  const keys = new SchedulerKeys('chronos');
  const [da, db, dc] = await admin.mget(keys.declaration('a'), keys.declaration('b'), keys.declaration('c'));
  expect(da).toBe(dc);
  expect(db).not.toBe(da);
  expect(await admin.scard(keys.names(da!))).toBe(N);
  expect(await admin.scard(keys.names(db!))).toBe(N + EXTRA.length);
  expect((await admin.scan('0', 'MATCH', '*:names-building:*', 'COUNT', 10_000))[1]).toEqual([]);

  const inspector = new Inspector({ connection: redis.url, livenessWindow: 3000 });
  closers.push(() => inspector.close());
  const all = await inspector.schedules();
  expect(all).toHaveLength(N + EXTRA.length);
  const byName = new Map(all.map((s) => [s.name, s]));
  const s7 = byName.get('s7')!;
  expect(s7).toMatchObject({ expression: '7 3 * * *', timeZone: ZONES[1], queue: 'q1', origin: 'code', orphaned: false, paused: false });
  expect(s7.declaredBy.map((d) => d.instance).sort()).toEqual(['a', 'b', 'c']);
  expect(s7.next).toHaveLength(5);
  expect(byName.get('s8')).toMatchObject({ expression: '@every 1h', timeZone: 'UTC', queue: 'q2' });
  expect(byName.get('b.only.3')!.declaredBy.map((d) => d.instance)).toEqual(['b']);

  // b goes: its own schedules are orphaned (for the leader and the Inspector), the shared ones stay live
  await b.stop();
  await waitFor(
    () => EXTRA.every((n) => logger.lines.some((l) => l.message.includes(`orphaned`) && l.message.endsWith(`schedule=${n})`))),
    'the leader to log b.only.* orphaned',
  );
  expect(logger.lines.filter((l) => /orphaned/.test(l.message) && /schedule=s\d/.test(l.message))).toEqual([]);
  await waitFor(async () => (await inspector.schedule('b.only.0')).orphaned, 'b.only.0 to be orphaned in the Inspector', 10_000);
  const after = await inspector.schedules();
  expect(
    after
      .filter((s) => s.orphaned)
      .map((s) => s.name)
      .sort(),
  ).toEqual([...EXTRA].sort());

  // b comes back (a new process, the same names): the leader reads b's names set again
  const b2 = instance('b', EXTRA, false);
  await b2.start();
  await waitFor(
    () => logger.lines.some((l) => /declared again/.test(l.message) && l.message.endsWith('schedule=b.only.9)')),
    'b.only.9 declared again',
  );
  expect((await inspector.schedule('b.only.9')).orphaned).toBe(false);

  // a new version of the app changes every definition (a new payload): each replaced one is fenced in
  // its queue's slot, in calls of at most FENCE_CHUNK schedules
  await admin.call('SLOWLOG', 'RESET');
  await admin.config('SET', 'slowlog-log-slower-than', '0');
  const d = instance('d', [], false, recordingLogger(), { v: 2 });
  await d.start();
  const fenceEntries = (await admin.call('SLOWLOG', 'GET', '500000')) as [number, number, number, string[]][];
  await admin.config('SET', 'slowlog-log-slower-than', '10000');
  const fence = createHash('sha1').update(expandedSource('fence-schedules')).digest('hex');
  const fenceCalls = fenceEntries.filter(
    ([, , , args]) => args[0].toLowerCase().startsWith('eval') && (args[1] === fence || /fence-schedules/.test(args[1])),
  );
  expect(fenceCalls.length).toBeGreaterThanOrEqual(Math.ceil(N / FENCE_CHUNK));
  // EVALSHA sha numkeys, its 5 keys and `by`, then a schedule and its generation per pair
  expect(fenceCalls.map(([, , , args]) => argCount(args)).filter((n) => n > 9 + 2 * FENCE_CHUNK)).toEqual([]);
  expect(await admin.hlen(new QueueKeys('chronos', 'q0').generation)).toBe(Math.ceil(N / 3));
  expect(JSON.parse((await storedJson(admin, 'chronos', 's0'))!).payload).toBe(JSON.stringify({ v: 2 }));
}, 60_000);
