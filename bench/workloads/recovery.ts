// Workload 6: a worker process is SIGKILLed with tasks in flight; a second worker recovers them
// (Chronos: found dead by its liveness and reclaimed at once; BullMQ: its locks expire, then the
// stalled checker moves the jobs back).
// Timer-bound (seconds of waiting, almost no load), so every round and both libraries run at the
// same time, each in its own namespace/prefix.
import { BenchChild } from '../lib/children.js';
import type { ChildMessage } from '../lib/protocol.js';
import { nowMs } from '../lib/time.js';
import { fill, fmt, prefixFor, type Ctx, type RunRecord, type WorkloadResult, pick } from './common.js';

const TASKS = 20;

export async function recoveryWorkload(ctx: Ctx): Promise<WorkloadResult> {
  const settings: { chronos: Record<string, number>; bullmq: Record<string, number> } = ctx.quick
    ? { chronos: { visibilityTimeout: 2_000, recoverInterval: 500 }, bullmq: { lockDuration: 2_000, stalledInterval: 500 } }
    : { chronos: {}, bullmq: {} };
  const visibilityMs = ctx.quick ? 2_000 : 30_000;
  const runs: RunRecord[] = [];
  const one = async (lib: 'chronos' | 'bullmq', round: number): Promise<void> => {
    const prefix = prefixFor(ctx, `w6-r${round}-${lib}`);
    const base = { lib, url: ctx.redis.url, prefix, concurrency: TASKS, settings: settings[lib] };
    const opts = { cpuProfDir: ctx.cpuProfDir, readyTimeoutMs: 60_000 };
    let victim: BenchChild | undefined;
    let survivor: BenchChild | undefined;
    try {
      victim = await BenchChild.start('recovery-worker', `w6-victim-${lib}-r${round}`, { ...base, role: 'victim' }, opts);
      const started = new Set<number>();
      let allStarted!: () => void;
      const allStartedP = new Promise<void>((r) => (allStarted = r));
      victim.listen((m) => {
        if (m.type === 'started') started.add(m.n as number);
        if (started.size === TASKS) allStarted();
      });
      await fill(ctx, lib, prefix, TASKS);
      await victim.within(allStartedP, 60_000, `all ${TASKS} tasks started`);
      survivor = await BenchChild.start('recovery-worker', `w6-survivor-${lib}-r${round}`, { ...base, role: 'survivor' }, opts);
      const done = new Map<number, number>();
      let allDone!: () => void;
      const allDoneP = new Promise<void>((r) => (allDone = r));
      const onDone = (m: ChildMessage) => {
        if (m.type === 'done' && !done.has(m.n as number)) done.set(m.n as number, m.t as number);
        if (done.size === TASKS) allDone();
      };
      survivor.listen(onDone);
      // the kill lands at a random phase of the survivor's periodic checks (as a crash would), not just after its start
      await new Promise((r) => setTimeout(r, Math.random() * 1000));
      const killedAt = nowMs();
      victim.kill('SIGKILL');
      await survivor.within(allDoneP, visibilityMs + 180_000, `all ${TASKS} tasks done`);
      const times = [...done.values()];
      const metrics = {
        recoverySec: (Math.max(...times) - killedAt) / 1000,
        firstSec: (Math.min(...times) - killedAt) / 1000,
        tasks: done.size,
      };
      runs.push({ round, contender: lib, metrics });
    } finally {
      victim?.kill('SIGKILL');
      await survivor?.stop();
      await victim?.exited;
      await ctx.redis.clean(prefix);
    }
  };
  const libs = pick(ctx, ['chronos', 'bullmq']) as ('chronos' | 'bullmq')[];
  const rounds = Array.from({ length: ctx.rounds }, (_, i) => i + 1);
  await Promise.all(
    rounds.map(async (round) => {
      await Promise.all(libs.map((lib) => one(lib, round)));
      const line = libs.map((lib) => `${lib} ${fmt(runs.find((r) => r.round === round && r.contender === lib)!.metrics.recoverySec, 1)} s`);
      ctx.log(`  w6 round ${round}/${ctx.rounds}: all ${TASKS} tasks done after the SIGKILL: ${line.join('  ')}`);
    }),
  );
  const describe = (s: Record<string, number>, defaults: string) => (Object.keys(s).length ? JSON.stringify(s) : defaults);
  return {
    id: 'w6',
    title: `6. recovery: worker SIGKILLed with ${TASKS} tasks in flight`,
    params: { tasksInFlight: TASKS, visibilityMs },
    settings: {
      chronos: `victim and survivor ChronosServer { concurrency: ${TASKS} } ${describe(settings.chronos, '{ visibilityTimeout: 30000 (default), recoverInterval: 2000 (default) }')}`,
      bullmq: `victim and survivor Worker { concurrency: ${TASKS} } ${describe(settings.bullmq, '{ lockDuration: 30000 (default), stalledInterval: 30000 (default), maxStalledCount: 1 (default) }')}`,
    },
    contenders: libs,
    runs,
    rows: [
      {
        label: 'SIGKILLed worker: all its tasks done',
        metric: 'recoverySec',
        unit: 's after kill',
        higherIsBetter: false,
        a: 'chronos',
        b: 'bullmq',
        decimals: 1,
      },
    ],
    notes: [
      'The victim takes all the tasks (its handler never returns), then a survivor worker starts and the victim is SIGKILLed ' +
        "0–1 s later (a random phase of the survivor's periodic checks); time runs from the kill to the survivor finishing the last task.",
      'Rounds and both libraries run at the same time (separate namespaces): the workload is timer-bound, not load-bound.',
      'Chronos finds the victim dead by its liveness (its subscriber connection is gone from Redis: checked every 1 s, dead when ' +
        'absent in two checks in a row) and reclaims its pending entries at once; the visibility timeout stays for stopped or hung ' +
        'workers. BullMQ has no such signal: it waits for the job locks to expire (lockDuration) and its next stalled check ' +
        '(stalledInterval).',
    ],
  };
}
