// A fire.lua call the lease's end abandons is not cancelled: it lands in Redis later. Its outcome used
// to be dropped with the call, and with it every follow-up: no `schedule.fired` for those triggers
// (trial 44: 179 tasks ran with no event on any replica), no due-time index of a jittered trigger's
// delayed task, no cancel notice of a `cancel-previous` trigger, no end of its fire spans. Here the
// connection goes silent as the fire is sent (a proxy holds the bytes): the lease runs out by the
// local clock and in Redis, the call is abandoned, then the proxy delivers it. Landing after the
// lease's end in Redis, when another instance may lead the shard, it enqueues nothing (fire.lua
// leaseUntil; before, it enqueued its trigger on the strength of the lost lease); its trigger is fired
// by the next lease, with every follow-up. (A call that lands before the lease's end in Redis fires
// and is followed up as any other: firing-settle.ts followUp.)
import { Redis } from 'ioredis';
import { EventBus, type ChronosEvent } from '../../lib/core/runtime/events.js';
import { GlobalKeys, SchedulerKeys } from '../../lib/core/redis/keys.js';
import { FIRE_RESULT } from '../../lib/core/redis/protocol.js';
import { readShardLeases } from '../../lib/core/leadership/shards.js';
import { defineScripts, scriptCommand } from '../../lib/core/redis/scripts.js';
import { jitterShiftMs } from '../../lib/core/scheduler/schedule-bounds.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

const PERIOD = 10_000;
const JITTER = 9000;
const HELD_MS = 2500;

test("an abandoned fire that lands after the lease's end in Redis enqueues nothing; its trigger is fired by the next lease, reported and its delayed task's due time indexed", async () => {
  const ns = newNamespace('fire-late');
  const u = new URL(redisUrl());
  const proxy = await TcpProxy.start({ host: u.hostname, port: Number(u.port || 6379) });
  const client = new Redis(proxy.url);
  const direct = new Redis(redisUrl());
  const events = new EventBus();
  const fired: Extract<ChronosEvent, { type: 'schedule.fired' }>[] = [];
  events.subscribe((e) => e.type === 'schedule.fired' && fired.push(e));
  // a schedule whose next two triggers start well after the held call lands (their jitter shift ≥ 6 s)
  const first = Math.ceil((Date.now() + 2000) / PERIOD) * PERIOD;
  let name = '';
  for (let i = 0; !name; i++) {
    const n = `late-${i}`;
    if ([first, first + PERIOD].every((t) => jitterShiftMs(n, t, JITTER) >= 6000)) name = n;
  }
  // the first fire call of this client is sent into a silent connection, delivered HELD_MS later
  defineScripts(client);
  const command = scriptCommand('fire');
  const target = client as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const send = target[command].bind(client);
  let held = false;
  let heldTrigger = NaN;
  let heldReply: Promise<unknown> | undefined;
  let leaseEnds: number[] = [];
  target[command] = (...a: unknown[]) => {
    if (held) return send(...a);
    held = true;
    heldTrigger = Number(String(a[13]).split(' ')[0]); // numkeys, 6 keys, 5 arguments, then name and fields
    proxy.blackhole();
    setTimeout(() => {
      // the shard leases as Redis holds them just before the held bytes are delivered
      void readShardLeases(direct, new SchedulerKeys(ns)).then((l) => {
        leaseEnds = l.map((e) => e.expiresAt);
        proxy.heal();
      });
    }, HELD_MS);
    heldReply = send(...a);
    return heldReply;
  };
  const logger = recordingLogger();
  const s = new Scheduler({ connection: client, namespace: ns, leaderTtl: 1000, events, logger });
  try {
    await s.start();
    await s.addSchedule({ name, spec: `@every ${PERIOD / 1000}s`, jitter: JITTER });
    await waitFor(() => held, 'the first fire call', 3 * PERIOD);
    await waitFor(
      () => fired.some((e) => e.triggerAt === heldTrigger),
      'schedule.fired for the trigger the held call enqueued',
      3 * PERIOD,
    );
    // Redis ran the held call after every lease it could have fired under had ended: it changed nothing
    const reply = (await heldReply) as number[];
    expect(leaseEnds.length).toBeGreaterThan(0);
    expect(Math.max(...leaseEnds)).toBeLessThanOrEqual(reply.at(-1)!);
    expect(reply.slice(0, -1)).toEqual([FIRE_RESULT.unleased]);
    const triggerAt = heldTrigger;
    expect(fired.find((e) => e.triggerAt === heldTrigger)).toMatchObject({ schedule: name, taskId: `${name}:${triggerAt / 1000}` });
    // its task waits in the scheduled set until its shifted instant; the queue's due time says when
    const dueAt = triggerAt + jitterShiftMs(name, triggerAt, JITTER);
    // (written after the event: the index write follows the settling)
    const score = () => direct.zscore(new GlobalKeys(ns).due, 'default');
    await waitFor(async () => (await score()) !== null, "the queue's due time indexed", PERIOD);
    expect(Number(await score())).toBeLessThanOrEqual(dueAt);
    // the call was abandoned: the lease ran out while it was held
    expect(logger.lines.map((l) => l.message).join('\n')).toMatch(/lease expired/i);
  } finally {
    await s.stop();
    client.disconnect();
    direct.disconnect();
    await proxy.close();
    await deleteNamespace(ns);
  }
}, 60_000);
