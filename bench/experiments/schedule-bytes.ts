// Experiment (not part of `npm run bench`): where the Redis bytes of runtime schedules go (issue 25, ≤ 500 B per
// schedule). On a private redis-server, N per-tenant digests (workload 13's: a monthly cron in one of 5 zones, a
// small payload, 10 queues, two labels) added by one `Scheduler.addSchedules` (compact form unless --full), then
// optionally planned by a leader (--plan: every schedule's "look now" mark becomes its wake instant). Reports:
//   - the used_memory delta of the add (and after the plan) ÷ N, bytes;
//   - per structure (bench/lib/key-bytes.ts: the registry hashes, due, index:names, label:<k>=<v>, any other key
//     group): key count, entries, encoding, MEMORY USAGE … SAMPLES 0 summed ÷ N, bytes; the mean definition text length.
// `--fire`: the digests' spec is instead an every-1h spec all due a few seconds after the add, and a leader fires
// each once (the per-schedule keys a fire leaves: last-fired, history, …; the tasks' streams and dedup keys listed apart).
//   node dist/bench/experiments/schedule-bytes.js [--n 100000] [--full] [--plan | --fire] [--no-labels]
import { Scheduler } from '../../lib/core/index.js';
import { BenchRedis } from '../lib/redis.js';
import { keyBreakdown } from '../lib/key-bytes.js';
import { digest } from '../lib/schedules-data.js';
import { nowMs, sleep } from '../lib/time.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};
const n = Number(arg('n', '100000'));
const compact = !process.argv.includes('--full');
const fire = process.argv.includes('--fire');
const plan = fire || process.argv.includes('--plan');
const labels = !process.argv.includes('--no-labels');
const ns = 'bytes';
const redis = await BenchRedis.open(process.argv.includes('--redis-url') ? process.env.REDIS_URL : undefined);
const r = redis.client;
const quiet = { log() {}, warn() {}, error() {} };
const used = async () => Number(/^used_memory:(\d+)/m.exec(await r.info('memory'))![1]);

try {
  const instant = Math.ceil((Date.now() + 20_000 + n / 10) / 1000) * 1000;
  const defs = Array.from({ length: n }, (_, i) => {
    const d = digest(i, labels);
    return fire ? { ...d, spec: { every: 3_600_000, offset: instant % 3_600_000 } } : d;
  });
  const s = new Scheduler({ connection: redis.url, namespace: ns, eligible: false, logger: quiet, compactSchedules: compact });
  await s.start();
  const m0 = await used();
  const t0 = nowMs();
  const res = await s.addSchedules(defs);
  const addMs = nowMs() - t0;
  if (res.added !== n) throw new Error(`added ${res.added} of ${n}`);
  const m1 = await used();
  await s.stop();
  console.log(
    `n=${n} ${compact ? 'compact' : 'full'}${labels ? ', two labels' : ''}: addSchedules ${Math.round(n / (addMs / 1000))}/s; ` +
      `used_memory delta ${((m1 - m0) / n).toFixed(1)} B per schedule`,
  );
  if (plan) {
    const leader = new Scheduler({ connection: redis.url, namespace: ns, logger: quiet, compactSchedules: compact });
    await leader.start();
    const due = (await r.keys(`${ns}:*:due`)).sort();
    const t1 = nowMs();
    for (;;) {
      const marked = await Promise.all(due.map((k) => r.zcount(k, '-inf', fire ? `(${instant + 1}` : '(0')));
      if (marked.every((c) => c === 0) || nowMs() - t1 > 300_000) break;
      await sleep(200);
    }
    if (fire) await sleep(2000); // the last fire's settle (history, outcome)
    await leader.stop();
    console.log(
      `planned by a leader in ${nowMs() - t1} ms; used_memory delta now ${(((await used()) - m0) / n).toFixed(1)} B per schedule`,
    );
  }
  let total = 0;
  for (const g of await keyBreakdown(r, ns)) {
    total += g.bytes;
    console.log(
      `  ${g.group.padEnd(26)} ${String(g.keys).padStart(6)} keys ${String(g.entries).padStart(8)} entries  ${(g.bytes / n).toFixed(1).padStart(7)} B/schedule  ${g.encodings.join(',')}`,
    );
  }
  console.log(`  ${'sum of MEMORY USAGE'.padEnd(26)} ${(total / n).toFixed(1)} B per schedule`);
  const shard0 = (await r.keys(`${ns}:*:schedules`)).find((k) => k.includes(':sched:'));
  if (shard0) {
    const sample = (await r.hscan(shard0, '0', 'COUNT', 50))[1];
    let len = 0;
    let fields = 0;
    for (let i = 0; i < sample.length; i += 2) {
      fields += sample[i].length;
      len += sample[i + 1].length;
    }
    console.log(
      `  definition text: mean ${(len / (sample.length / 2)).toFixed(1)} chars, name ${(fields / (sample.length / 2)).toFixed(1)}; e.g. ${sample[1]}`,
    );
  }
} finally {
  await redis.close();
}
