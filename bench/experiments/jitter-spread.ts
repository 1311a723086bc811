// Experiment (not part of `npm run bench`): K schedules all due at one instant with `jitter`, and a
// worker: when do their tasks start? Reports the starts per bucket of jitter / 10 against the mean
// (target: each bucket within 20 %), and each start's lag behind its shifted instant (nominal +
// jitterShiftMs), on a private Redis. One Scheduler and one ChronosServer in this process.
//   node dist/bench/experiments/jitter-spread.js [--schedules 10000] [--jitter 60000] [--concurrency 200]
import { ChronosServer, EventBus, Scheduler } from '../../lib/core/index.js';
import { jitterShiftMs } from '../../lib/core/scheduler/schedule-bounds.js';
import { BenchRedis } from '../lib/redis.js';
import { sleep } from '../lib/time.js';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const schedules = arg('schedules', 10_000);
const jitter = arg('jitter', 60_000);
const concurrency = arg('concurrency', 200);
const BUCKETS = 10;
const redis = await BenchRedis.open(process.argv.includes('--redis-url') ? process.env.REDIS_URL : undefined);
const quiet = { log() {}, warn() {}, error() {} };
const namespace = `jitter-spread-${process.pid}`;
// every-specs are epoch-aligned: a period of twice the jitter, offset so that the one instant T all
// schedules share comes 15 s after registration (time for the leader to load K schedules)
const period = Math.max(2 * jitter, 60_000);
const T = Math.ceil((Date.now() + 15_000) / 1000) * 1000;
const offset = T % period;
const scheduler = new Scheduler({ connection: redis.url, namespace, events: new EventBus(), logger: quiet });
for (let i = 0; i < schedules; i++) scheduler.register({ name: `tenant-${i}.sync`, spec: { every: period, offset }, jitter, type: 'sync' });
const starts: { name: string; triggerAt: number; at: number }[] = [];
const worker = new ChronosServer({ connection: redis.url, namespace, logger: quiet, concurrency });
worker.handle('sync', (t) => void starts.push({ name: t.schedule!, triggerAt: t.triggerAt!, at: Date.now() }));
await worker.start();
await scheduler.start();
console.log(`${schedules} schedules due at ${new Date(T).toISOString()} with jitter ${jitter} ms; worker concurrency ${concurrency}`);
const deadline = T + jitter + 20_000;
while (starts.filter((s) => s.triggerAt === T).length < schedules && Date.now() < deadline) await sleep(500);
await scheduler.stop();
await worker.shutdown();

const ofT = starts.filter((s) => s.triggerAt === T);
const size = jitter / BUCKETS;
const buckets = new Array<number>(BUCKETS).fill(0);
let early = 0;
const lags: number[] = [];
for (const s of ofT) {
  const due = T + jitterShiftMs(s.name, T, jitter);
  if (s.at < due) early++;
  lags.push(s.at - due);
  buckets[Math.min(BUCKETS - 1, Math.max(0, Math.floor((s.at - T) / size)))]++;
}
const mean = ofT.length / BUCKETS;
let worst = 0;
console.log(`started ${ofT.length} of ${schedules}; before their shifted instant: ${early}`);
buckets.forEach((n, i) => {
  const dev = mean > 0 ? (n - mean) / mean : 0;
  worst = Math.max(worst, Math.abs(dev));
  console.log(
    `  +${((i * size) / 1000).toFixed(1).padStart(3)}–${(((i + 1) * size) / 1000).toFixed(1)} s: ${String(n).padStart(6)} starts (${(dev * 100).toFixed(1)} % vs mean ${mean.toFixed(0)})`,
  );
});
lags.sort((a, b) => a - b);
const q = (p: number) => lags[Math.min(lags.length - 1, Math.floor(p * lags.length))] ?? NaN;
console.log(`worst bucket ${(worst * 100).toFixed(1)} % from the mean (target ≤ 20 %): ${worst <= 0.2 ? 'met' : 'NOT met'}`);
console.log(`start lag behind the shifted instant: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${lags[lags.length - 1]} ms`);
await redis.close();
process.exit(0);
