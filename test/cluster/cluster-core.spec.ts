// The core scenarios on a real 3-master Redis Cluster (started and stopped here, loopback only):
// enqueue/process/retry/dead, delayed tasks, a worker on 3 queues on 3 masters (weights and strict
// priority), a fleet-wide concurrency limit, groups with a group limit, the Inspector listing, recovery after a SIGKILL, a 3-process scheduler failover, the
// overlap policies buffer-one and cancel-previous across processes, and fan-out from the Nest face. Run with `npm run test:cluster`.
import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { scanAll } from '../../lib/core/redis/cluster.js';
import { GlobalKeys, QueueKeys } from '../../lib/core/redis/keys.js';
import type { Task } from '../../lib/core/queue/task.js';
import { InspectorService, TaskHandler, ChronosClient as NestClient, type ChronosEvent } from '../../lib/index.js';
import { killAllChildren, startChild, type Child } from '../helpers/children.js';
import { Fleet, expectOnceEach, nextAligned } from '../helpers/fleet.js';
import { createChronosTestApp } from '../helpers/nest-app.js';
import { countBy, readRecords } from '../helpers/records.js';
import { RedisCluster, queuesOnEachMaster } from '../helpers/redis-cluster.js';
import { newNamespace, redisUrl } from '../helpers/redis.js';
import { deferred, recordingLogger, waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

let cluster: RedisCluster;
let ns: string;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  cluster = await RedisCluster.start({ masters: 3 });
});
afterAll(async () => {
  await cluster?.stop();
});
beforeEach(() => {
  ns = newNamespace('cl');
});
afterEach(async () => {
  await killAllChildren();
  for (const c of closers.splice(0).reverse()) await c();
});

const conn = () => ({ cluster: cluster.seeds });

function client(): QueueClient {
  const c = new QueueClient({ connection: conn(), namespace: ns });
  closers.push(() => c.close());
  return c;
}

function server(options: ConstructorParameters<typeof ChronosServer>[0] = {}): ChronosServer {
  const s = new ChronosServer({ connection: conn(), namespace: ns, logger: recordingLogger(), ...options });
  closers.push(() => s.shutdown());
  return s;
}

test('the global keys share one slot, apart from the queues and the scheduler', () => {
  const g = new GlobalKeys(ns);
  const masters = new Set([g.queues, g.paused, g.servers, g.server('x')].map((k) => cluster.masterOf(k).port));
  expect(masters.size).toBe(1);
});

test('enqueue → process; a failing task retries, then dies; a delayed task waits for its time', async () => {
  const s = server({ forwardInterval: 50 });
  const ok = deferred<Task>();
  const attempts: number[] = [];
  s.handle('ok', (t) => ok.resolve(t));
  s.handle(
    'fails',
    (t) => {
      attempts.push(t.retried);
      throw new Error('boom');
    },
    { backoff: () => 50 },
  );
  const later = deferred<number>();
  s.handle('later', () => later.resolve(Date.now()));
  await s.start();
  const c = client();
  const { id } = await c.enqueue('ok', { a: 1 });
  expect((await ok.promise).id).toBe(id);
  const dead = await c.enqueue('fails', null, { maxRetry: 2 });
  const k = new QueueKeys(ns, 'default');
  await waitFor(async () => (await c.redis.zscore(k.dead, dead.id)) !== null, 'the failing task to be dead');
  expect(attempts).toEqual([0, 1, 2]);
  const t0 = Date.now();
  expect((await c.enqueue('later', {}, { delay: 500 })).state).toBe('scheduled');
  expect((await later.promise) - t0).toBeGreaterThanOrEqual(495);
});

test('a worker on 3 queues that hash to 3 different masters: all served, strict priority holds, blocking reads wake up', async () => {
  const [hi, mid, lo] = queuesOnEachMaster(cluster, ns);
  expect(new Set([hi, mid, lo].map((q) => cluster.masterOf(new QueueKeys(ns, q).stream).port)).size).toBe(3);
  const c = client();
  await c.enqueueBulk(
    [lo, mid, hi].flatMap((queue) => Array.from({ length: 5 }, (_, i) => ({ type: 'job', payload: { queue, i }, options: { queue } }))),
  );
  const order: string[] = [];
  const s = server({ queues: { [hi]: 3, [mid]: 2, [lo]: 1 }, strictPriority: true, concurrency: 1, blockTimeout: 500 });
  s.handle<{ queue: string }>('job', (t) => void order.push(t.queue));
  await s.start();
  await waitFor(() => order.length === 15, 'the 15 backlog tasks');
  expect(order).toEqual([...Array(5).fill(hi), ...Array(5).fill(mid), ...Array(5).fill(lo)]);
  // idle now: every queue has a blocking read in flight on its own connection; each wakes on a new task
  for (const queue of [lo, mid, hi]) {
    await c.enqueue('job', { queue }, { queue });
    await waitFor(() => order.filter((q) => q === queue).length === 6, `the new task of ${queue}`);
  }
  // weighted (not strict): a backlog in all three is served by all three
  await s.shutdown();
  const w = server({ queues: { [hi]: 6, [mid]: 3, [lo]: 1 }, concurrency: 2 });
  const seen = new Map<string, number>();
  w.handle<{ queue: string }>('wjob', (t) => void seen.set(t.queue, (seen.get(t.queue) ?? 0) + 1));
  await c.enqueueBulk(
    [lo, mid, hi].flatMap((queue) => Array.from({ length: 20 }, () => ({ type: 'wjob', payload: { queue }, options: { queue } }))),
  );
  await w.start();
  await waitFor(() => [...seen.values()].reduce((a, b) => a + b, 0) === 60, 'the 60 weighted tasks');
});

test('a fleet-wide concurrency limit on a cluster: 2 workers on 2 queues of 2 masters, the limited one never over 2', async () => {
  const [limited, free] = queuesOnEachMaster(cluster, ns);
  const c = client();
  await c.setQueueLimits(limited, { concurrency: 2 });
  let running = 0;
  let peak = 0;
  const done = new Map<string, number>();
  for (let i = 0; i < 2; i++) {
    const s = server({ queues: [limited, free], concurrency: 5, blockTimeout: 500 });
    s.handle<{ queue: string }>('lim', async (t) => {
      if (t.queue === limited) peak = Math.max(peak, ++running);
      // eslint-disable-next-line local/no-fixed-sleep -- the handler's duration itself is the point (runs must overlap for the limit to bind)
      await new Promise((r) => setTimeout(r, 30));
      if (t.queue === limited) running--;
      done.set(t.queue, (done.get(t.queue) ?? 0) + 1);
    });
    await s.start();
  }
  await c.enqueueBulk(
    [limited, free].flatMap((queue) => Array.from({ length: 12 }, () => ({ type: 'lim', payload: {}, options: { queue } }))),
  );
  await waitFor(() => done.get(limited) === 12 && done.get(free) === 12, 'every task of both queues');
  expect(peak).toBe(2);
});

test('groups on a cluster: two grouped queues on two masters, round-robin, one task per group at once, a retry back in its group', async () => {
  const queues = queuesOnEachMaster(cluster, ns).slice(0, 2);
  const c = client();
  for (const q of queues) await c.setQueueLimits(q, { groupConcurrency: 1 });
  const running = new Map<string, number>();
  let groupPeak = 0;
  const order = new Map<string, string[]>();
  const s = server({ queues, concurrency: 10, blockTimeout: 500, backoff: () => 20 });
  s.handle<{ fail?: boolean }>('g', async (t) => {
    const key = `${t.queue}|${t.group}`;
    running.set(key, (running.get(key) ?? 0) + 1);
    groupPeak = Math.max(groupPeak, running.get(key)!);
    order.set(t.queue, [...(order.get(t.queue) ?? []), t.group!]);
    // eslint-disable-next-line local/no-fixed-sleep -- the handler's duration itself is the point (runs of one group must overlap for the limit to bind)
    await new Promise((r) => setTimeout(r, 10));
    running.set(key, running.get(key)! - 1);
    if (t.payload?.fail && t.retried === 0) throw new Error('first attempt fails');
  });
  await s.start();
  await c.enqueueBulk(
    queues.flatMap((queue) =>
      ['a', 'b'].flatMap((group) =>
        Array.from({ length: 6 }, (_, i) => ({ type: 'g', payload: { fail: i === 0 }, options: { queue, group } })),
      ),
    ),
  );
  await waitFor(() => queues.every((q) => (order.get(q) ?? []).length === 14), 'every task of both queues, the 2 retries too');
  expect(groupPeak).toBe(1);
  for (const q of queues) {
    const seen = order.get(q)!;
    expect(seen.filter((g) => g === 'a')).toHaveLength(7);
    expect(new Set(seen.slice(0, 2))).toEqual(new Set(['a', 'b'])); // both groups served from the start
  }
});

test('the Inspector lists queues, counts and tasks across the masters; scanAll finds keys on every master', async () => {
  const queues = queuesOnEachMaster(cluster, ns, 'iq');
  const c = client();
  for (const queue of queues) await c.enqueueBulk(Array.from({ length: 3 }, () => ({ type: 't', payload: null, options: { queue } })));
  await c.enqueue('t', null, { queue: queues[0], delay: 60_000 });
  const ins = new Inspector({ connection: conn(), namespace: ns });
  closers.push(() => ins.close());
  await ins.pauseQueue(queues[1]);
  const infos = await ins.queues();
  expect(infos.map((q) => [q.name, q.pending, q.scheduled, q.paused])).toEqual(
    queues.sort().map((q) => [q, 3, q === queues[0] ? 1 : 0, q === queues[1]]),
  );
  expect((await ins.tasks(queues[2], 'pending')).length).toBe(3);
  expect(infos.every((q) => q.latencyMs >= 0)).toBe(true);
  const keys: string[] = [];
  for await (const batch of scanAll(c.redis, `${ns}:*`)) keys.push(...batch);
  const streams = new Set(keys.filter((k) => k.endsWith(':stream')));
  expect(streams.size).toBe(3);
  expect(new Set([...streams].map((k) => cluster.masterOf(k).port)).size).toBe(3);
});

test('a worker SIGKILLed while holding tasks: another worker finishes every one', async () => {
  const recordKey = `${ns}-records:calls`;
  const redis = new Redis(redisUrl());
  closers.push(async () => {
    await redis.del(recordKey);
    redis.disconnect();
  });
  const env = {
    REDIS_URL: redisUrl(),
    REDIS_CLUSTER: cluster.seedList,
    NS: ns,
    RECORD_KEY: recordKey,
    CONCURRENCY: 10,
    VISIBILITY_MS: 2000,
    RECOVER_MS: 200,
  };
  const w1 = await startChild('worker', 'W1', env);
  const c = client();
  const enqueued = await c.enqueueBulk(Array.from({ length: 10 }, (_, i) => ({ type: 'slow', payload: { ms: 60_000, i } })));
  await waitFor(async () => countBy(await readRecords(redis, recordKey), 'start').size === 10, 'W1 to start all 10');
  w1.kill('SIGKILL');
  await w1.exited;
  await startChild('worker', 'W2', { ...env, SLOW_CAP_MS: 20 });
  await waitFor(async () => countBy(await readRecords(redis, recordKey), 'done').size === 10, 'W2 to finish all 10', 20_000);
  const done = countBy(await readRecords(redis, recordKey), 'done');
  expect([...done.keys()].sort()).toEqual(enqueued.map((e) => e.id).sort());
});

// issue 20 fault 4: liveness by shard channels (SSUBSCRIBE + PUBSUB SHARDNUMSUB in presence.lua) on a cluster
describe('liveness on a cluster: a dead worker is told from a stopped one', () => {
  const VISIBILITY_MS = 30_000;
  let recordKey: string;
  let redis: Redis;
  let env: Record<string, string | number>;
  const records = async () => readRecords(redis, recordKey);
  beforeEach(() => {
    recordKey = `${ns}-records:calls`;
    redis = new Redis(redisUrl());
    const r = redis;
    const key = recordKey;
    closers.push(async () => {
      await r.del(key);
      r.disconnect();
    });
    env = {
      REDIS_URL: redisUrl(),
      REDIS_CLUSTER: cluster.seedList,
      NS: ns,
      RECORD_KEY: recordKey,
      CONCURRENCY: 10,
      VISIBILITY_MS,
      RECOVER_MS: 200,
    };
  });

  /** W1 holds 10 tasks of a minute each, and W2 (its 'slow' handler capped to 20 ms) runs beside it with nothing to do. */
  async function w1HoldsTen(): Promise<{ w1: Child; ids: string[] }> {
    const w1 = await startChild('worker', 'W1', env);
    const enqueued = await client().enqueueBulk(Array.from({ length: 10 }, (_, i) => ({ type: 'slow', payload: { ms: 60_000, i } })));
    await waitFor(async () => countBy(await records(), 'start').size === 10, 'W1 to start all 10');
    await startChild('worker', 'W2', { ...env, SLOW_CAP_MS: 20 });
    return { w1, ids: enqueued.map((e) => e.id).sort() };
  }

  test('a worker SIGKILLed while holding tasks: they run elsewhere well inside the visibility timeout', async () => {
    const { w1, ids } = await w1HoldsTen();
    const killedAt = performance.now();
    w1.kill('SIGKILL');
    await w1.exited;
    // before the fix nothing reclaimed them before the visibility timeout (30 s): the wait is bounded by half of it
    await waitFor(async () => countBy(await records(), 'done').size === 10, 'W2 to finish all 10', VISIBILITY_MS / 2);
    console.log(`cluster liveness: W1's 10 tasks done elsewhere ${Math.round(performance.now() - killedAt)} ms after its SIGKILL`);
    const done = await records();
    expect([...countBy(done, 'done').keys()].sort()).toEqual(ids);
    expect(done.filter((r) => r.phase === 'done').every((r) => r.instance === 'W2')).toBe(true);
  });

  test('a worker SIGSTOPped while holding tasks keeps them: it is overdue, not dead', async () => {
    const { w1 } = await w1HoldsTen();
    const live = new GlobalKeys(ns).live;
    w1.kill('SIGSTOP');
    closers.push(async () => w1.kill('SIGKILL'));
    const cl = cluster.connect();
    closers.push(async () => cl.disconnect());
    // W1's score passed (it stopped ticking), and W2 ticked twice more since: a dead W1 would have been reclaimed by now
    await waitFor(
      async () => {
        const [score, [s]] = await Promise.all([cl.zscore(live, 'W1'), cl.time()]);
        return score !== null && Number(s) * 1000 - Number(score) > 3 * 1000;
      },
      'W1 to be overdue by three liveness ticks',
      VISIBILITY_MS / 2,
    );
    const recs = await records();
    expect(recs.filter((r) => r.instance === 'W2')).toEqual([]);
    const pending = (await cl.xpending(new QueueKeys(ns, 'default').stream, 'chronos', '-', '+', 100, 'W1')) as unknown[];
    expect(pending).toHaveLength(10);
  });
});

test('3 scheduler processes: the leader is SIGKILLed, another takes over, each trigger runs once', async () => {
  const f = new Fleet([{ name: 'tick', spec: '@every 1s', queue: 'sched-q' }], { REDIS_CLUSTER: cluster.seedList, LEADER_TTL_MS: 1500 });
  closers.push(() => f.close());
  for (const n of ['A', 'B', 'C']) await f.start(n);
  const first = await f.waitLeader();
  const from = nextAligned(Date.now() + 1000, 1000);
  await waitFor(async () => (await f.records()).some((r) => r.phase === 'done' && (r.triggerAt as number) >= from), 'a first tick', 10_000);
  first.child.kill('SIGKILL');
  await f.waitLeader(first.t + 1, 15_000);
  await expectOnceEach(f, 'tick', from, nextAligned(Date.now() + 3000, 1000));
});

test('overlap on a cluster: a buffered trigger starts when the live task ends; cancel-previous aborts the run in the worker process', async () => {
  const defs = [
    { name: 'ovl.buf', spec: '@every 1s', queue: 'ovl-b', overlap: 'buffer-one' as const },
    { name: 'ovl.can', spec: '@every 1s', queue: 'ovl-c', overlap: 'cancel-previous' as const },
  ];
  const f = new Fleet(defs, { REDIS_CLUSTER: cluster.seedList, GATE: 1 });
  closers.push(() => f.close());
  await f.start('L', { WORKER: 0 });
  await f.start('W', { SCHEDULER: 0 });
  const find = (pred: (r: Awaited<ReturnType<typeof f.records>>[number]) => boolean, what: string) =>
    waitFor(async () => (await f.records()).find(pred), { what, timeoutMs: 20_000 });
  const first = await find((r) => r.phase === 'start' && r.schedule === 'ovl.buf', 'the first buffer-one task');
  const waiting = await find((r) => r.phase === 'fired' && r.buffered === true && r.schedule === 'ovl.buf', 'a buffered trigger');
  await f.redis.set(`${f.ns}:release:${first.id}`, 'ok');
  const next = await find((r) => r.phase === 'start' && r.id === waiting.id, 'the buffered trigger to start');
  expect(next.triggerAt).toBe(waiting.triggerAt);
  const aborted = await find((r) => r.phase === 'aborted' && r.schedule === 'ovl.can', 'a superseded run');
  expect(aborted).toMatchObject({ instance: 'W', reason: 'TaskSupersededError' });
  expect(Number(String(aborted.supersededBy).replace('ovl.can:', '')) * 1000).toBeGreaterThan(aborted.triggerAt as number);
});

test('fan-out from the Nest face on a cluster: each listener gets its own task', async () => {
  class Placed {
    static readonly type = 'placed';
    constructor(readonly id: string) {}
  }
  const calls: string[] = [];
  @Injectable()
  class Mailer {
    @TaskHandler(Placed)
    mail() {
      calls.push('mail');
    }
  }
  @Injectable()
  class Audit {
    @TaskHandler(Placed)
    audit() {
      calls.push('audit');
    }
  }
  const app = await createChronosTestApp({ providers: [Mailer, Audit], options: { connection: conn(), namespace: ns } });
  closers.push(() => app.close());
  const events: ChronosEvent[] = [];
  app.get(InspectorService).events$.subscribe((e) => events.push(e));
  await app.get(NestClient).enqueue(new Placed('p1'), { taskId: 'p-1' });
  const ok = (id: string) => events.some((e) => e.type === 'task.succeeded' && e.taskId === id);
  await waitFor(() => ok('p-1#Mailer.mail') && ok('p-1#Audit.audit'), 'both listeners done');
  expect(calls.sort()).toEqual(['audit', 'mail']);
});
