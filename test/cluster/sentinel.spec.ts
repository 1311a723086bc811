// Sentinel (1 primary, 1 replica, 3 sentinels, started here on loopback): the primary is SIGKILLed
// under load (2 `@every 1s` schedules, 100 tasks/s). Chronos reconnects to the promoted replica
// without a restart, a leader is elected again, no trigger is enqueued twice; missing triggers and
// lost tasks are counted and must lie in the failover gap / the replication window before the kill.
import { jest } from '@jest/globals';
import { QueueClient } from '../../lib/core/queue/client.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { EventBus, type ChronosEvent } from '../../lib/core/runtime/events.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { spawnSync } from 'node:child_process';
import { alignedTriggers } from '../helpers/fleet.js';
import { RedisSentinel } from '../helpers/redis-cluster.js';
import { newNamespace } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

jest.setTimeout(120_000);

let sentinel: RedisSentinel;
beforeAll(async () => {
  sentinel = await RedisSentinel.start({ replicas: 1, sentinels: 3, downAfterMs: 1000, failoverTimeoutMs: 3000 });
});
afterAll(async () => {
  await sentinel?.stop();
});

const LEADER_TTL = 2000;

const cli = (port: number, ...args: string[]) => spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).stdout;

// before, a client stayed on the old primary, which answers as a primary for about 10 s after a
// SENTINEL FAILOVER: what it took meanwhile was dropped when it resynced from the new one
test('SENTINEL FAILOVER: the client follows the new primary at once; an enqueue after the switch is kept', async () => {
  const ns = newNamespace('senf');
  const client = new QueueClient({ connection: sentinel.connection, namespace: ns });
  try {
    await client.enqueue('before', null, { queue: 'q' });
    const oldPort = sentinel.primaryPort();
    let reconnected = false;
    client.redis.once('ready', () => (reconnected = true));
    expect(cli(sentinel.sentinels[0].port, 'SENTINEL', 'FAILOVER', sentinel.name).trim()).toBe('OK');
    await waitFor(() => sentinel.primaryPort() !== oldPort, 'the sentinels to name the new primary');
    await waitFor(() => reconnected, 'the client to reconnect to the new primary');
    const { id } = await client.enqueue('after', null, { queue: 'q' });
    // the old primary becomes a replica of the new one and resyncs from it
    await waitFor(
      () => /role:slave[\s\S]*master_link_status:up/.test(cli(oldPort, 'INFO', 'replication')),
      'the old primary to resync as a replica',
      30_000,
      200,
    );
    const direct = RedisSentinel.direct(sentinel.primaryPort());
    try {
      const ids = (await direct.xrange(new QueueKeys(ns, 'q').stream, '-', '+')).map(([, f]) => f[f.indexOf('id') + 1]);
      expect(ids).toContain(id);
    } finally {
      direct.disconnect();
    }
  } finally {
    await client.close();
  }
});

test('the primary is SIGKILLed under load: promotion, reconnect, a leader again, no trigger twice; losses only in the window', async () => {
  const ns = newNamespace('sen');
  const connection = { ...sentinel.connection, maxRetriesPerRequest: null };
  const events = new EventBus();
  const seen: (ChronosEvent & { at: number })[] = [];
  events.subscribe((e) => seen.push({ ...e, at: Date.now() }));
  const logger = recordingLogger();
  const schedulers = ['A', 'B'].map(
    (id) => new Scheduler({ connection, namespace: ns, instanceId: id, leaderTtl: LEADER_TTL, heartbeatInterval: 500, events, logger }),
  );
  for (const s of schedulers) {
    s.register({ name: 'one', spec: '@every 1s', queue: 'sched' });
    s.register({ name: 'two', spec: '@every 1s', queue: 'sched' });
  }
  const done = new Map<string, number>(); // task id → runs
  const triggersRun = new Map<string, number>(); // schedule@triggerAt → runs
  const server = new ChronosServer({
    connection,
    namespace: ns,
    queues: ['default', 'sched'],
    concurrency: 50,
    logger,
    events,
    visibilityTimeout: 3000,
    recoverInterval: 500,
    blockTimeout: 1000,
  });
  server.handle('load', (t) => void done.set(t.id, (done.get(t.id) ?? 0) + 1));
  for (const type of ['one', 'two']) {
    server.handle(
      type,
      (t) => void triggersRun.set(`${t.schedule}@${t.triggerAt}`, (triggersRun.get(`${t.schedule}@${t.triggerAt}`) ?? 0) + 1),
    );
  }
  const client = new QueueClient({ connection, namespace: ns });
  try {
    await server.start();
    for (const s of schedulers) await s.start();
    await waitFor(() => seen.some((e) => e.type === 'leader.acquired'), 'a first leader');
    const accepted = new Map<string, number>(); // task id → when its enqueue was acknowledged
    const sentAt = new Map<string, number>(); // task id → when its enqueue was sent
    let refused = 0;
    const load = setInterval(() => {
      const sent = Date.now();
      client.enqueue('load', null).then(
        (r) => {
          accepted.set(r.id, Date.now());
          sentAt.set(r.id, sent);
        },
        () => refused++,
      );
    }, 10);
    const from = Date.now();
    await new Promise((r) => setTimeout(r, 3000)); // load and fires run a while, so the kill lands mid-traffic
    const oldPort = sentinel.primaryPort();
    const killAt = Date.now();
    await [sentinel.primary, ...sentinel.replicas].find((n) => n.port === oldPort)!.kill(); // the primary now (the test above failed over)
    await waitFor(() => sentinel.primaryPort() !== oldPort, {
      what: 'the sentinels to promote the replica',
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    const promotedAt = Date.now();
    await waitFor(() => seen.some((e) => e.type === 'leader.acquired' && e.at > promotedAt) || leaderKeptAfter(seen, promotedAt), {
      what: 'a leader after the promotion',
      timeoutMs: LEADER_TTL + 20_000,
    });
    // when the first trigger after the promotion was fired: a leader is back on the new primary
    const { at: leaderBackAt } = await waitFor(() => seen.find((e) => e.type === 'schedule.fired' && e.at > promotedAt), {
      what: 'a trigger fired after the promotion',
      timeoutMs: LEADER_TTL + 20_000,
    });
    const before = accepted.size;
    await waitFor(() => accepted.size > before + 100, { what: 'enqueues to succeed again on the new primary', timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 3000)); // load and fires go on on the new primary: triggers after the failover count
    clearInterval(load);
    const to = Date.now() - 2000;
    // a task whose enqueue was sent after the kill returned was acknowledged by the new primary: it runs
    await waitFor(() => [...accepted.keys()].every((id) => done.has(id) || sentAt.get(id)! < killAt), {
      what: 'every task accepted after the kill to run',
      timeoutMs: 15_000,
    });
    // then nothing is left to run: whatever did not run is lost, not late
    const inspector = new Inspector({ connection, namespace: ns });
    try {
      await waitFor(
        async () => {
          const q = await inspector.queue('default');
          return q.pending + q.active + q.scheduled + q.retry === 0;
        },
        { what: 'the default queue to drain', timeoutMs: 15_000 },
      );
    } finally {
      await inspector.close();
    }
    const lost = [...accepted].filter(([id]) => !done.has(id));
    // only asynchronous replication loses an accepted task: its enqueue was sent before the kill
    for (const [id] of lost) expect(sentAt.get(id)).toBeLessThan(killAt);
    const fired = seen.filter((e) => e.type === 'schedule.fired') as unknown as { schedule: string; triggerAt: number }[];
    const firedCount = new Map<string, number>();
    for (const f of fired) firedCount.set(`${f.schedule}@${f.triggerAt}`, (firedCount.get(`${f.schedule}@${f.triggerAt}`) ?? 0) + 1);
    const expected = ['one', 'two'].flatMap((s) => alignedTriggers(from + 1000, to, 1000).map((t) => ({ s, t })));
    const missing = expected.filter(({ s, t }) => !triggersRun.has(`${s}@${t}`));
    const report = {
      killAt,
      promotedAfterMs: promotedAt - killAt,
      accepted: accepted.size,
      refused,
      lost: lost.length,
      lostAcceptedBeforeKillMs: lost.map(([, at]) => killAt - at),
      triggersExpected: expected.length,
      missingTriggers: missing.map(({ s, t }) => `${s}@${t - killAt}ms`),
      triggersFiredTwice: [...firedCount].filter(([, n]) => n > 1).map(([k]) => k),
      triggersRunTwice: [...triggersRun].filter(([, n]) => n > 1).map(([k]) => k),
      // issue 20 fault 7: a leader elected during the failover must not lose the lease a moment later
      // the most times one shard was taken after the kill (see cluster-failover.spec.ts)
      leadershipsAfterKill: Math.max(
        0,
        ...[...Array(16).keys()].map(
          (k) => seen.filter((e) => e.type === 'leader.acquired' && e.at >= killAt && e.shards.includes(k)).length,
        ),
      ),
      lossesAfterKill: seen.filter((e) => e.type === 'leader.lost' && e.at >= killAt).map((e) => (e as { reason?: string }).reason),
    };
    console.log(`sentinel failover: ${JSON.stringify(report)}`);
    expect(report.triggersFiredTwice).toEqual([]);
    expect(report.leadershipsAfterKill).toBeLessThanOrEqual(2); // per shard: taken once, then shared once at most (or none: the leases survived)
    // a lost task was acknowledged by the old primary shortly before it died (not yet replicated)
    for (const ago of report.lostAcceptedBeforeKillMs) expect(ago).toBeGreaterThanOrEqual(-50);
    // a missing trigger lies in the failover gap: from the kill (less one period: the trigger due
    // just before it may not have been fired yet) to the first fire by a leader on the new primary
    for (const { t } of missing) {
      expect(t).toBeGreaterThanOrEqual(killAt - 1000);
      expect(t).toBeLessThanOrEqual(leaderBackAt);
    }
  } finally {
    await server.shutdown();
    for (const s of schedulers) await s.stop();
    await client.close();
  }
});

function leaderKeptAfter(seen: (ChronosEvent & { at: number })[], t: number): boolean {
  return seen.some((e) => e.type === 'schedule.fired' && e.at > t + 500);
}
