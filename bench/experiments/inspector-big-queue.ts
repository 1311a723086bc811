// Experiment (not part of `npm run bench`): the Inspector over a 100,000-task queue while another
// process PINGs Redis every 10 ms. Target (issue 10): no PING takes over 50 ms — every read is
// bounded per call (cursors, COUNT/LIMIT, O(1) counters), every bulk act works in batches of 200.
// Starts its own private Redis (or uses --redis-url's, then only its own namespace is touched).
//   node dist/bench/experiments/inspector-big-queue.js [--tasks 100000] [--scheduled 100000] [--redis-url redis://…]
import { Redis } from 'ioredis';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { exercise, seedBigQueue, startPinger } from '../../test/fixtures/big-queue.js';
import { BenchRedis } from '../lib/redis.js';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const urlArg = process.argv.indexOf('--redis-url');
const tasks = arg('tasks', 100_000);
const scheduled = arg('scheduled', 100_000);
const bench = await BenchRedis.open(urlArg >= 0 ? process.argv[urlArg + 1] : undefined);
const ns = `inspector-big-${process.pid}`;
const redis = new Redis(bench.url);
const inspector = new Inspector({ connection: bench.url, namespace: ns });
try {
  const t0 = performance.now();
  await seedBigQueue(redis, ns, 'big', tasks, 1000, scheduled);
  const seedMs = Math.round(performance.now() - t0);
  console.log(`seeded ${tasks} pending (1000 of them active) and ${scheduled} scheduled tasks in ${seedMs} ms (Redis ${bench.version})`);
  const pinger = await startPinger(bench.url);
  const took = await exercise(inspector, 'big', tasks);
  const pings = await pinger.stop();
  console.table(Object.entries(took).map(([step, ms]) => ({ step, ms })));
  const worst = `p99 ${pings.p99Ms.toFixed(1)} ms, worst ${pings.maxMs.toFixed(1)} ms, over 50 ms: ${pings.over50}`;
  console.log(`PING every 10 ms from another process: ${pings.count} pings, ${worst}`);
  console.log(pings.maxMs <= 50 ? 'target met: no PING over 50 ms' : `target MISSED: worst PING ${pings.maxMs.toFixed(1)} ms > 50 ms`);
  process.exitCode = pings.maxMs <= 50 ? 0 : 1;
} finally {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${ns}:*`, 'COUNT', 1000);
    if (keys.length) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
  await inspector.close();
  redis.disconnect();
  await bench.close();
}
