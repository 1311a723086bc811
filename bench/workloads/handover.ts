// Workload 7: three Chronos scheduler processes; the leader is SIGTERMed or SIGKILLed 50 ms before it
// would enqueue the next trigger (500 ms ahead of its instant); measured: signal → that trigger
// enqueued by the new leader, and how long before (−) or after its instant that was. BullMQ has no leader
// election (its schedulers are driven by whichever worker runs the previous job): n/a.
import { BenchChild } from '../lib/children.js';
import type { ChildMessage } from '../lib/protocol.js';
import { nowMs, sleep, sleepUntil } from '../lib/time.js';
import { fmt, prefixFor, type Ctx, type RunRecord, type WorkloadResult } from './common.js';

interface Fired {
  instance: string;
  triggerAt: number;
  t: number;
}

export async function handoverWorkload(ctx: Ctx, signal: 'SIGTERM' | 'SIGKILL'): Promise<WorkloadResult> {
  const leaderTtl = ctx.quick ? 2_000 : 5_000;
  const runs: RunRecord[] = [];
  const id = signal === 'SIGTERM' ? 'w7-term' : 'w7-kill';
  for (let round = 1; round <= ctx.rounds; round++) {
    const prefix = prefixFor(ctx, `${id}-r${round}`);
    const nodes: BenchChild[] = [];
    const fired: Fired[] = [];
    const acquired: { instance: string; t: number }[] = [];
    try {
      const names = ['a', 'b', 'c'];
      const started = await Promise.all(
        names.map((name) =>
          BenchChild.start(
            'fire-node',
            `${id}-${name}-r${round}`,
            {
              role: 'chronos-scheduler',
              url: ctx.redis.url,
              prefix,
              schedules: 1,
              concurrency: 1,
              reportEvents: true,
              name,
              leaderTtl: ctx.quick ? leaderTtl : undefined,
            },
            { cpuProfDir: ctx.cpuProfDir },
          ),
        ),
      );
      started.forEach((child, i) => {
        nodes.push(child);
        child.listen((m: ChildMessage) => {
          if (m.type === 'fired') fired.push({ instance: names[i], triggerAt: m.triggerAt as number, t: m.t as number });
          if (m.type === 'leader' && m.acquired) acquired.push({ instance: names[i], t: m.t as number });
        });
      });
      const until = async (pred: () => boolean, timeoutMs: number, what: string) => {
        const end = nowMs() + timeoutMs;
        while (!pred()) {
          if (nowMs() > end) throw new Error(`${id}: timed out waiting for ${what}`);
          await sleep(10);
        }
      };
      await until(() => fired.length >= 2, leaderTtl * 3 + 10_000, 'the first leader to fire twice');
      const leader = fired[fired.length - 1].instance;
      // Chronos enqueues an @every 1s trigger half a period (500 ms) ahead of its instant: the leader
      // gets the signal 50 ms before it would enqueue `due`, so `due` is the new leader's to enqueue
      const LEAD_MS = 500;
      const due = Math.ceil((nowMs() + 300 + LEAD_MS) / 1000) * 1000;
      await sleepUntil(due - LEAD_MS - 50);
      const killedAt = nowMs();
      nodes[names.indexOf(leader)].kill(signal);
      await until(() => fired.some((f) => f.instance !== leader && f.t >= killedAt), leaderTtl + 15_000, 'the new leader to fire');
      const first = fired.filter((f) => f.instance !== leader && f.t >= killedAt).sort((a, b) => a.t - b.t)[0];
      if (first.triggerAt !== due) throw new Error(`${id}: the new leader's first trigger is ${first.triggerAt}, expected ${due}`);
      const newLeader = first.instance;
      const took = acquired.find((a) => a.instance === newLeader && a.t >= killedAt);
      // two more triggers, then check that every trigger fired exactly once
      const last = Math.max(...fired.map((f) => f.triggerAt));
      await until(() => fired.some((f) => f.triggerAt >= last + 2000), 10_000, 'two more triggers');
      const triggers = fired.map((f) => f.triggerAt).sort((x, y) => x - y);
      let lost = 0;
      let duplicates = 0;
      for (let i = 1; i < triggers.length; i++) {
        if (triggers[i] === triggers[i - 1]) duplicates++;
        else lost += Math.max(0, Math.round((triggers[i] - triggers[i - 1]) / 1000) - 1);
      }
      const metrics = {
        handoverSec: (first.t - killedAt) / 1000,
        /** how late the new leader's first trigger was enqueued after its instant (negative: ahead of it, as planned) */
        latenessSec: (first.t - first.triggerAt) / 1000,
        acquireSec: took ? (took.t - killedAt) / 1000 : NaN,
        lostTriggers: lost,
        duplicateTriggers: duplicates,
      };
      runs.push({ round, contender: 'chronos', metrics });
      ctx.log(
        `  ${id} round ${round}/${ctx.rounds}: ${signal} → new leader in ${fmt(metrics.acquireSec, 3)} s, next trigger enqueued ${fmt(metrics.handoverSec, 3)} s after the signal (lost ${lost}, duplicates ${duplicates})`,
      );
    } finally {
      for (const n of nodes) n.kill('SIGKILL');
      await Promise.all(nodes.map((n) => n.exited));
      await ctx.redis.clean(prefix);
    }
  }
  return {
    id,
    title: `7. hand-over: leader ${signal}ed (3 scheduler processes)`,
    params: { processes: 3, leaderTtlMs: leaderTtl, signalBeforeTriggerMs: 50 },
    settings: {
      chronos: `3 × Scheduler { leaderTtl: ${leaderTtl}${ctx.quick ? '' : ' (default)'} }, one schedule '@every 1s'; the leader gets ${signal} 50 ms before it would enqueue the next trigger (500 ms ahead of its instant)`,
      bullmq:
        "n/a: BullMQ has no leader election — a job scheduler's next job is created by whichever worker processes the current one, so there is no leader to hand over",
    },
    contenders: ['chronos'],
    runs,
    rows: [
      {
        label: `leader ${signal}: signal → next trigger enqueued`,
        metric: 'handoverSec',
        unit: 's',
        higherIsBetter: false,
        a: 'chronos',
        decimals: 3,
      },
      { label: `leader ${signal}: signal → new leader`, metric: 'acquireSec', unit: 's', higherIsBetter: false, a: 'chronos', decimals: 3 },
    ],
  };
}
