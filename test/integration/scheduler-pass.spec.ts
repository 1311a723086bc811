// A leader's shards due at one instant tick in one pass (scheduler/shard-pass.ts, issue 22 target 4):
// every-second schedules spread over the 16 shards are fired by one fire.lua call per queue, not one
// per shard, and each of their triggers once. Seen with MONITOR on the shared Redis (this namespace's
// keys only).
import { SHARD_COUNT } from '../../lib/core/redis/protocol.js';
import { shardOf } from '../../lib/core/redis/keys.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { EventBus } from '../../lib/core/runtime/events.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';
import { closeMonitor, openMonitor } from '../helpers/monitor.js';

let ns: string;
beforeEach(() => {
  ns = newNamespace('pass');
});
afterEach(async () => {
  await deleteNamespace(ns);
});

/** A fire.lua call as MONITOR shows it: EVALSHA sha 6 <6 keys> <5 args> then 3 values per trigger. */
function fireTriggers(args: string[]): { name: string; triggerAt: number }[] | undefined {
  if (!/^evalsha$/i.test(args[0]) || args[2] !== '6' || !args[3].endsWith(':stream') || !args[4].endsWith(':last-fired')) return undefined;
  const out: { name: string; triggerAt: number }[] = [];
  for (let i = 14; i + 2 < args.length; i += 3) out.push({ name: args[i], triggerAt: Number(args[i + 1].split(' ')[0]) });
  return out;
}

test('48 every-second schedules over the 16 shards: one fire.lua call per second carries the triggers of them all, each once', async () => {
  const names = Array.from({ length: 48 }, (_, i) => `s${i}`);
  expect(new Set(names.map(shardOf)).size).toBe(SHARD_COUNT); // every shard holds some
  const events = new EventBus();
  const fired = new Map<number, string[]>();
  events.subscribe((e) => {
    if (e.type === 'schedule.fired') fired.set(e.triggerAt, [...(fired.get(e.triggerAt) ?? []), e.schedule]);
  });
  const s = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 2000, logger: recordingLogger(), events });
  for (const name of names) s.register({ name, spec: '@every 1s' });
  const monitor = await openMonitor(redisUrl());
  const calls: { name: string; triggerAt: number }[][] = [];
  try {
    monitor.on('monitor', (_time: string, args: string[]) => {
      const t = args.some((a) => a.includes(ns)) ? fireTriggers(args) : undefined;
      if (t) calls.push(t);
    });
    await s.start();
    // two whole seconds after the first one all 48 fired in (the start-up's ticks may be split)
    await waitFor(() => {
      const full = [...fired.entries()].filter(([, n]) => n.length === names.length).map(([t]) => t);
      return full.length >= 3;
    }, 'three seconds of 48 triggers each');
  } finally {
    await s.stop();
    closeMonitor(monitor);
  }
  const instants = [...fired.keys()].sort((a, b) => a - b);
  const first = instants.find((t) => fired.get(t)!.length === names.length)!;
  const later = instants.filter((t) => t > first && fired.get(t)!.length === names.length);
  expect(later.length).toBeGreaterThanOrEqual(2);
  for (const t of later) {
    const carrying = calls.filter((c) => c.some((x) => x.triggerAt === t));
    // one call with the 48 triggers of the instant (before: one call per shard, 16 of 2–5 triggers)
    expect(carrying.map((c) => c.filter((x) => x.triggerAt === t).length)).toEqual([names.length]);
    expect(new Set(fired.get(t)).size).toBe(names.length);
  }
});
