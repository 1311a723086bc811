// Experiment (not part of `npm run bench`): where the Redis bytes of runtime schedules go (issue 25, ≤ 500 B per
// schedule). On a private redis-server, N per-tenant digests (workload 13's: a monthly cron in one of 5 zones, a
// small payload, 10 queues, two labels) added by one `Scheduler.addSchedules` (compact form unless --full), then
// optionally planned by a leader (--plan: every schedule's "look now" mark becomes its wake instant). Reports:
//   - the used_memory delta of the add (and after the plan) ÷ N, bytes;
//   - per structure (bench/lib/key-bytes.ts: the registry hashes, due, index:names, label:<k>=<v>, any other key
//     group): key count, entries, encoding, MEMORY USAGE … SAMPLES 0 summed ÷ N, bytes;
//   - over every stored definition: the mean text length, the share carrying a `generation`, and the jemalloc size
//     classes their values take.
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
  // every stored definition: its text length, whether it carries a `generation` (≠ registeredAt: the chunk's
  // rising counter ran ahead of Redis time), and the allocation of its value (an sds string: a 3 B header below
  // 256 characters, 5 B from 256, and a NUL; rounded up to jemalloc's size class)
  const CLASSES = [32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768];
  const sdsAlloc = (len: number): number => {
    const bytes = len + (len < 256 ? 4 : 6);
    return CLASSES.find((c) => c >= bytes) ?? bytes;
  };
  let stored = 0;
  let len = 0;
  let fields = 0;
  let withGeneration = 0;
  let example = '';
  const allocs = new Map<number, number>();
  for (const key of (await r.keys(`${ns}:*:schedules`)).filter((k) => k.includes(':sched:'))) {
    let cursor = '0';
    do {
      const [next, batch] = await r.hscan(key, cursor, 'COUNT', 1000);
      cursor = next;
      for (let i = 0; i < batch.length; i += 2) {
        stored++;
        fields += batch[i].length;
        len += batch[i + 1].length;
        if (batch[i + 1].includes('"generation":')) withGeneration++;
        const a = sdsAlloc(batch[i + 1].length);
        allocs.set(a, (allocs.get(a) ?? 0) + 1);
        example ||= batch[i + 1];
      }
    } while (cursor !== '0');
  }
  if (stored > 0) {
    const shares = [...allocs.entries()].sort((a, b) => a[0] - b[0]).map(([a, c]) => `${a} B ${((100 * c) / stored).toFixed(0)}%`);
    console.log(
      `  definition text: mean ${(len / stored).toFixed(1)} chars, name ${(fields / stored).toFixed(1)}; ` +
        `${((100 * withGeneration) / stored).toFixed(0)}% carry a generation; value allocations ${shares.join(', ')}; e.g. ${example}`,
    );
  }
} finally {
  await redis.close();
}
