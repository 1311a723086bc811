// Experiment (not part of `npm run bench`): fleet-wide queue limits (issue 21), Chronos beside BullMQ,
// 3 workers of c=50 in one process on the same Redis:
// - conc:   concurrency 5, 300 tasks of 100 ms (ideal 50/s); peak running and tasks/s from the first start;
// - rate:   rate 100 per 1000 ms, 400 empty tasks (ideal: 100 per window, the first window at the start);
// - nobind: 10,000 empty tasks with a concurrency limit far above the load, beside no limit at all.
//   node dist/bench/experiments/queue-limits.js [--redis-url redis://127.0.0.1:6379] [--only chronos|bullmq] [--modes conc,rate,nobind,none]
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { QueueClient, ChronosServer } from '../../lib/core/index.js';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
};
const url = arg('redis-url', process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const only = arg('only', 'chronos,bullmq').split(',');
const quiet = { log: () => {}, warn: () => {}, error: (m: string) => console.error(m), debug: () => {} };
type Mode = 'conc' | 'rate' | 'nobind' | 'none';
const SIZES: Record<Mode, number> = { conc: 300, rate: 400, nobind: 10_000, none: 10_000 };

interface Result {
  contender: string;
  mode: Mode;
  tasks: number;
  seconds: number;
  perSecond: number;
  peak: number;
}

function meter(n: number) {
  let running = 0;
  let peak = 0;
  let done = 0;
  let first = 0;
  let finished!: () => void;
  const all = new Promise<void>((r) => (finished = r));
  return {
    all,
    async run(sleepMs: number) {
      first ||= performance.now();
      peak = Math.max(peak, ++running);
      if (sleepMs > 0) await new Promise((r) => setTimeout(r, sleepMs));
      running--;
      if (++done === n) finished();
    },
    result: (contender: string, mode: Mode): Result => {
      const seconds = (performance.now() - first) / 1000;
      return { contender, mode, tasks: n, seconds: +seconds.toFixed(2), perSecond: +(n / seconds).toFixed(1), peak };
    },
  };
}

async function chronos(mode: Mode): Promise<Result> {
  const ns = `xlim-${Math.random().toString(36).slice(2, 8)}`;
  const client = new QueueClient({ connection: url, namespace: ns });
  if (mode === 'conc') await client.setQueueLimits('default', { concurrency: 5 });
  if (mode === 'rate') await client.setQueueLimits('default', { rate: { max: 100, duration: 1000 } });
  if (mode === 'nobind') await client.setQueueLimits('default', { concurrency: 1_000_000 });
  const n = SIZES[mode];
  const m = meter(n);
  const servers = [0, 1, 2].map(() => new ChronosServer({ connection: url, namespace: ns, concurrency: 50, logger: quiet }));
  for (const s of servers) s.handle('t', () => m.run(mode === 'conc' ? 100 : 0));
  await client.enqueueBulk(Array.from({ length: n }, () => ({ type: 't', payload: {} })));
  for (const s of servers) await s.start();
  await m.all;
  const r = m.result('chronos', mode);
  for (const s of servers) await s.shutdown();
  await unlink(client.redis as Redis, `${ns}:*`);
  await client.close();
  return r;
}

async function bullmq(mode: Mode): Promise<Result> {
  const prefix = `xlimb-${Math.random().toString(36).slice(2, 8)}`;
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const queue = new Queue('q', { connection, prefix });
  if (mode === 'conc') await queue.setGlobalConcurrency(5);
  if (mode === 'nobind') await queue.setGlobalConcurrency(1_000_000);
  const n = SIZES[mode];
  const m = meter(n);
  await queue.addBulk(Array.from({ length: n }, () => ({ name: 't', data: {} })));
  const limiter = mode === 'rate' ? { max: 100, duration: 1000 } : undefined;
  const workers = [0, 1, 2].map(
    () =>
      new Worker('q', () => m.run(mode === 'conc' ? 100 : 0), {
        connection: new Redis(url, { maxRetriesPerRequest: null }),
        prefix,
        concurrency: 50,
        limiter,
      }),
  );
  await m.all;
  const r = m.result('bullmq', mode);
  await Promise.all(workers.map((w) => w.close()));
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  return r;
}

async function unlink(redis: Redis, match: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

const results: Result[] = [];
for (const mode of arg('modes', 'conc,rate,nobind,none').split(',') as Mode[]) {
  if (only.includes('chronos')) results.push(await chronos(mode));
  if (only.includes('bullmq')) results.push(await bullmq(mode));
}
console.table(results);
process.exit(0);
