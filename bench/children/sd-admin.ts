// Workload 13, runtime schedule writes from one process (issue 25): N digests (bench/lib/schedules-data.ts) by
//   single — `Scheduler.addSchedule`, `inflight` calls in flight (namespace <prefix>-single);
//   bulk   — one `Scheduler.addSchedules(N)` (namespace <prefix>), then `upsertSchedules` of the same N (unchanged);
//   bullmq — `Queue.upsertJobScheduler` of the first `bullmqSchedules`, `inflight` in flight (a cron in the zone, the same payload; prefix <prefix>-bull).
// Each rate is schedules ÷ the wall time of the calls (validation included); the used_memory delta of each add ÷ N,
// and after the bulk add its MEMORY USAGE per structure ÷ N (bulkBytes_<structure>: schedules, label:*, due, index:names).
// The bulk namespace is left in place (the leader of the next step loads it); the others are the parent's to clean.
// Config: { url, prefix, schedules, inflight, labels, bullmqSchedules, phases }. IPC: → ready ; ← go → done { <phase>Rate, <phase>Bytes, bulkBytes_<structure>, … }.
import { Redis } from 'ioredis';
import { bullConnection } from '../lib/common.js';
import { childConfig, next, onExit, send } from '../lib/ipc.js';
import { keyBreakdown } from '../lib/key-bytes.js';
import { digest } from '../lib/schedules-data.js';
import { nowMs } from '../lib/time.js';

interface Config {
  url: string;
  prefix: string;
  schedules: number;
  inflight: number;
  labels: boolean;
  /** BullMQ's count (its upsertJobScheduler is slow enough that N would take minutes). */
  bullmqSchedules: number;
  phases: ('single' | 'bulk' | 'bullmq')[];
}

const cfg = childConfig<Config>();
const { Scheduler } = await import('../../lib/core/index.js');
const { Queue } = await import('bullmq');
const admin = new Redis(cfg.url);
onExit(() => admin.quit());
const quiet = { log() {}, warn() {}, error() {} };
const used = async () => Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))![1]);
const n = cfg.schedules;
const defs = Array.from({ length: n }, (_, i) => digest(i, cfg.labels));
const out: Record<string, number> = {};

/** Runs `f` with `inflight` lanes over 0 … n − 1. */
async function lanes(f: (i: number) => Promise<unknown>, count = n): Promise<void> {
  let i = 0;
  const lane = async () => {
    while (i < count) await f(i++);
  };
  await Promise.all(Array.from({ length: cfg.inflight }, lane));
}

async function phase(name: string, f: () => Promise<unknown>, count = n): Promise<void> {
  const m0 = await used();
  const t0 = nowMs();
  await f();
  out[`${name}Rate`] = count / ((nowMs() - t0) / 1000);
  out[`${name}Bytes`] = ((await used()) - m0) / count;
}

send({ type: 'ready' });
await next('go');
for (const p of cfg.phases) {
  if (p === 'single') {
    const s = new Scheduler({
      connection: cfg.url,
      namespace: `${cfg.prefix}-single`,
      eligible: false,
      logger: quiet,
      compactSchedules: true,
    });
    await s.start();
    await phase('single', () => lanes((i) => s.addSchedule(defs[i])));
    await s.stop();
  } else if (p === 'bulk') {
    const s = new Scheduler({ connection: cfg.url, namespace: cfg.prefix, eligible: false, logger: quiet, compactSchedules: true });
    await s.start();
    await phase('bulk', async () => {
      const r = await s.addSchedules(defs);
      if (r.added !== n) throw new Error(`addSchedules added ${r.added} of ${n}`);
    });
    // where those bytes went (MEMORY USAGE per structure, bench/lib/key-bytes.ts): bulkBytes_<structure> per schedule
    for (const g of await keyBreakdown(admin, cfg.prefix)) if (g.bytes / n >= 1) out[`bulkBytes_${g.group}`] = g.bytes / n;
    const t0 = nowMs();
    const r = await s.upsertSchedules(defs);
    out.upsertRate = n / ((nowMs() - t0) / 1000);
    if (r.unchanged !== n) throw new Error(`upsertSchedules: ${r.unchanged} of ${n} unchanged`);
    await s.stop();
  } else {
    const queue = new Queue('digests', { connection: bullConnection(cfg.url), prefix: `${cfg.prefix}-bull` });
    await queue.waitUntilReady();
    await phase(
      'bullmq',
      () =>
        lanes((i) => {
          const d = defs[i];
          return queue.upsertJobScheduler(
            d.name,
            { pattern: d.spec as string, tz: d.timeZone },
            { name: d.type!, data: d.payload, opts: { removeOnComplete: true } },
          );
        }, cfg.bullmqSchedules),
      cfg.bullmqSchedules,
    );
    await queue.close();
  }
}
send({ type: 'done', ...out });
