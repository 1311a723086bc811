// The chaos fleet's load: enqueues FLEET.tasksPerSecond tasks per second, and FLEET.limitedPerSecond
// to the limited queue (its limits set at start) round-robin over its groups (open loop: a send never
// waits for an earlier reply, so a Redis restart piles enqueues up in ioredis's queue instead of
// slowing the rate) from `go` to `end`. Each acknowledged enqueue is recorded as `enq` with the
// task id, each rejected one as `enqfail`. Config (BENCH_CONFIG): ProducerConfig.
// IPC: → ready; ← go; ← end → ended { acked, failed } once every enqueue has settled.
import { QueueClient } from '../../lib/core/index.js';
import { childConfig, next, onExit, send } from '../lib/ipc.js';
import { nowMs, sleep } from '../lib/time.js';
import { FLEET, recorder, type ProducerConfig } from './common.js';

const cfg = childConfig<ProducerConfig>();
const rec = recorder(cfg.recordsUrl);
const client = new QueueClient({ connection: cfg.url, namespace: cfg.namespace });
const i = 'producer';
let running = true;
let sent = 0;
let acked = 0;
let failed = 0;
const inflight = new Set<Promise<void>>();

function enqueue(n: number, limited = false): void {
  const p = (
    limited
      ? client.enqueue(FLEET.limitedType, { n }, { queue: FLEET.limitedQueue, group: `g${n % FLEET.limitedGroups}` })
      : client.enqueue(FLEET.taskType, { n }, { queue: FLEET.taskQueue })
  )
    .then(
      async (r) => {
        acked++;
        await rec.write({ k: 'enq', id: r.id, n, t: nowMs(), i });
      },
      async (err: Error) => {
        failed++;
        await rec.write({ k: 'enqfail', n, t: nowMs(), i, err: err.message });
      },
    )
    .finally(() => inflight.delete(p));
  inflight.add(p);
}

onExit(async () => {
  running = false;
  await client.close();
  await rec.close();
});

await client.setQueueLimits(FLEET.limitedQueue, FLEET.limits);
send({ type: 'ready' });
await next('go');
const t0 = nowMs();
const endSignal = next('end').then(() => void (running = false));
let sentLimited = 0;
while (running) {
  const due = Math.floor(((nowMs() - t0) * FLEET.tasksPerSecond) / 1000);
  while (sent < due) enqueue(sent++);
  const dueLimited = Math.floor(((nowMs() - t0) * FLEET.limitedPerSecond) / 1000);
  while (sentLimited < dueLimited) enqueue(sentLimited++, true);
  await sleep(5);
}
await endSignal;
while (inflight.size > 0) await Promise.race([...inflight]);
send({ type: 'ended', acked, failed, sent });
