// Experiment (not part of `npm run bench`): the overlap policies of issue 25 item 4, on one Redis, a
// Scheduler and a ChronosServer (c=4) in this process (the latencies are a script, a blocking read
// and a pub/sub message, whichever process they cross):
// - buffer-one hand-off: an `@every 1s` schedule whose handler runs 2.5 s, so every trigger overlaps;
//   from the handler's end (just before it resolves) to the start of the trigger buffered behind it
//   (ack batch -> ack.lua starts it -> the worker's blocking read returns it);
// - cancel-previous: an `@every 1s` schedule whose handler waits for its signal; from the superseding
//   trigger's instant to the abort seen by the previous handler (fire at the instant -> the leader's
//   notice -> the worker aborts), and from the fire's `schedule.fired` event to the abort.
//   node dist/bench/experiments/overlap.js [--n 20] [--redis-url URL (default: a private redis-server)]
import { ChronosServer, EventBus, Scheduler, type Task } from '../../lib/core/index.js';
import { BenchRedis } from '../lib/redis.js';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
};
const redis = await BenchRedis.open(process.argv.includes('--redis-url') ? arg('redis-url', '') : undefined);
const url = redis.url;
const N = Number(arg('n', '20'));
const quiet = { log: () => {}, warn: () => {}, error: (m: string) => console.error(m), debug: () => {} };

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return +s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))].toFixed(1);
}

async function run(overlap: 'buffer-one' | 'cancel-previous'): Promise<Record<string, unknown>> {
  const ns = `xovl-${Math.random().toString(36).slice(2, 8)}`;
  const events = new EventBus();
  const scheduler = new Scheduler({ connection: url, namespace: ns, events, logger: quiet });
  const server = new ChronosServer({ connection: url, namespace: ns, events, concurrency: 4, logger: quiet });
  scheduler.register({ name: 'job', spec: '@every 1s', overlap });
  const ends = new Map<string, number>(); // task id -> when its handler ended (wall ms)
  const handoffs: number[] = [];
  const fromInstant: number[] = [];
  const fromFired: number[] = [];
  const fired = new Map<string, number>();
  let prev: string | undefined;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  events.subscribe((e) => {
    if (e.type === 'schedule.fired') fired.set(e.taskId, performance.timeOrigin + performance.now());
  });
  server.handle('job', async (task: Task) => {
    const start = performance.timeOrigin + performance.now();
    if (overlap === 'buffer-one') {
      if (prev !== undefined && ends.has(prev)) handoffs.push(start - ends.get(prev)!);
      prev = task.id;
      if (handoffs.length >= N) done();
      await new Promise((r) => setTimeout(r, 2500));
      ends.set(task.id, performance.timeOrigin + performance.now());
      return;
    }
    await new Promise<void>((resolve) =>
      task.signal.addEventListener('abort', () => {
        const at = performance.timeOrigin + performance.now();
        const reason = task.signal.reason as { name?: string; supersededBy?: string };
        if (reason?.name !== 'TaskSupersededError') return resolve(); // the shutdown at the end
        const by = reason.supersededBy ?? '';
        const instant = Number(by.slice(by.lastIndexOf(':') + 1)) * 1000;
        fromInstant.push(at - instant);
        if (fired.has(by)) fromFired.push(at - fired.get(by)!);
        if (fromInstant.length >= N) done();
        resolve();
      }),
    );
  });
  await server.start();
  await scheduler.start();
  await finished;
  await scheduler.stop();
  await server.shutdown();
  await redis.clean(ns);
  if (overlap === 'buffer-one') return { overlap, n: handoffs.length, handoffP50Ms: pct(handoffs, 50), handoffP99Ms: pct(handoffs, 99) };
  return {
    overlap,
    n: fromInstant.length,
    abortAfterInstantP50Ms: pct(fromInstant, 50),
    abortAfterInstantP99Ms: pct(fromInstant, 99),
    abortAfterFiredP50Ms: pct(fromFired, 50),
    abortAfterFiredP99Ms: pct(fromFired, 99),
  };
}

console.log(JSON.stringify(await run('buffer-one')));
console.log(JSON.stringify(await run('cancel-previous')));
await redis.close();
process.exit(0);
