// A worker process of bench/experiments/queue-limits.ts: a ChronosServer or a BullMQ Worker on one
// queue, concurrency c, a handler that sleeps payload.ms; it notes each handler start and end (epoch ms
// with sub-ms resolution: performance.timeOrigin + performance.now(), one clock for every process of
// the machine and its Redis) with the task's group and the payload's `at` (the parent's enqueue instant).
// Messages: parent → { go } starts it, { stop } sends { records } and exits; child → { ready }.
// argv: lib (chronos|bullmq) url ns concurrency
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { ChronosServer } from '../../lib/core/index.js';

const [lib, url, ns, conc] = process.argv.slice(2);
const concurrency = Number(conc);
const quiet = { log: () => {}, warn: () => {}, error: (m: string) => console.error(m), debug: () => {} };
const now = () => performance.timeOrigin + performance.now();
/** start, end, group index (-1: none), enqueue instant (0: not noted), hand-out order (Chronos: the stream entry id as ms·10⁴ + seq; else 0): flat, 5 numbers per task */
const records: number[] = [];
const groupIds = new Map<string, number>();
const groupIndex = (g: string | undefined) => {
  if (g === undefined) return -1;
  let i = groupIds.get(g);
  if (i === undefined) groupIds.set(g, (i = groupIds.size));
  return i;
};

async function run(payload: { ms?: number; at?: number } | null, group: string | undefined, order = 0): Promise<void> {
  const start = now();
  if (payload?.ms) await new Promise((r) => setTimeout(r, payload.ms));
  records.push(start, now(), groupIndex(group), payload?.at ?? 0, order);
}

/** The hand-out order of a Chronos task: its stream entry id (appended at the hand-out), read off the engine's run (internal). */
function handOutOrder(task: object): number {
  const id = (task as { entry?: { entryId?: string } }).entry?.entryId;
  if (!id) return 0;
  const [ms, seq] = id.split('-').map(Number);
  return ms * 10_000 + seq;
}

let stop: () => Promise<void>;
let start: () => Promise<void>;
if (lib === 'chronos') {
  const server = new ChronosServer({ connection: url, namespace: ns, concurrency, logger: quiet });
  server.handle<{ ms?: number; at?: number }>('t', (t) => run(t.payload, t.group, handOutOrder(t)));
  start = () => server.start();
  stop = () => server.shutdown();
} else {
  let worker: Worker | undefined;
  start = async () => {
    worker = new Worker('q', (job) => run(job.data as { ms?: number }, undefined), {
      connection: new Redis(url, { maxRetriesPerRequest: null }),
      prefix: ns,
      concurrency,
      limiter: process.env.LIMITER ? (JSON.parse(process.env.LIMITER) as { max: number; duration: number }) : undefined,
    });
  };
  stop = async () => void (await worker?.close());
}

process.on('message', (m: { go?: true; stop?: true }) => {
  if (m.go) void start();
  if (m.stop)
    void (async () => {
      await stop();
      process.send!({ records, groups: [...groupIds.keys()] }, () => process.exit(0));
    })();
});
process.send!({ ready: true });
