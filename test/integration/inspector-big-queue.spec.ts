// Every Inspector read and a bulk act over a 100,000-task queue, while another process PINGs Redis
// every 10 ms: no read may hold Redis long (no O(N) command on a big key in one call). The bound
// asserted here is generous (250 ms, a loaded shared machine); the exact 50 ms target is measured
// by bench/experiments/inspector-big-queue.ts.
import { Inspector } from '../../lib/core/admin/inspector.js';
import { exercise, seedBigQueue, startPinger } from '../fixtures/big-queue.js';
import { connect, deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

const N = 100_000;

test('a 100,000-task queue: every read and a bulk act stay bounded per call (a PINGing client is never held up)', async () => {
  const ns = newNamespace('big');
  const redis = connect();
  const inspector = new Inspector({ connection: redisUrl(), namespace: ns });
  try {
    await seedBigQueue(redis, ns, 'big', N, 1000, 20_000);
    const pinger = await startPinger(redisUrl());
    const took = await exercise(inspector, 'big', N);
    const pings = await pinger.stop();
    console.log(`inspector over ${N} tasks: ${JSON.stringify(took)}; PING every 10 ms: ${JSON.stringify(pings)}`);
    const q = await inspector.queue('big');
    expect(q).toMatchObject({ active: 1000, scheduled: 0, pending: N - 1000 });
    expect(pings.count).toBeGreaterThan(10);
    expect(pings.maxMs).toBeLessThan(250);
  } finally {
    await inspector.close();
    redis.disconnect();
    await deleteNamespace(ns);
  }
}, 180_000);
