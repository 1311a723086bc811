// Experiment (not part of `npm run bench`; plain ioredis, not Chronos): what fire lag is physically
// possible on this machine for a burst of N triggers on the same instant if the leader enqueues them
// `lead` ms AHEAD (per trigger SET NX dedup + XADD with the instant), and the worker reads them ahead
// (XREADGROUP COUNT N), holds them, and at the instant starts no-op handlers through a pool of
// `concurrency` slots (then acks). Compare with workload 5's "limit", which enqueues at the instant.
//   node dist/bench/experiments/early-delivery.js [--lead 500] [--concurrency 50] [--triggers 1000] [--seconds 8]
import { Redis } from 'ioredis';
import { BenchRedis } from '../lib/redis.js';
import { latencySummary } from '../lib/stats.js';
import { nowMs, sleep, sleepUntil } from '../lib/time.js';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const lead = arg('lead', 500);
const concurrency = arg('concurrency', 50);
const triggers = arg('triggers', 1000);
const seconds = arg('seconds', 8);
const bench = await BenchRedis.open(process.argv.includes('--redis-url') ? process.env.REDIS_URL : undefined);
const ns = `early-${process.pid}`;
const stream = `${ns}:stream`;
const leader = new Redis(bench.url);
const reader = new Redis(bench.url);
const acker = new Redis(bench.url);
await reader.xgroup('CREATE', stream, 'g', '$', 'MKSTREAM');
const FIRE = `local tr = ARGV[1]
for i = 2, #ARGV do
  if redis.call('SET', KEYS[2] .. ARGV[i] .. ':' .. tr, '1', 'NX', 'PX', 3600000) then
    redis.call('XADD', KEYS[1], '*', 's', ARGV[i], 'tr', tr, 'payload', '{"to":"user@example.com"}')
  end
end
return 1`;
const names = Array.from({ length: triggers }, (_, i) => `s${i}`);
const lags: number[] = [];
let running = true;
const worker = async () => {
  while (running) {
    const res = (await reader.call('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', triggers, 'BLOCK', 500, 'STREAMS', stream, '>')) as
      [string, [string, string[]][]][] | null;
    if (!res) continue;
    const held = res[0][1].map(([id, f]) => ({ id, tr: Number(f[f.indexOf('tr') + 1]) }));
    const at = held[0].tr;
    setTimeout(
      () => {
        void (async () => {
          while (nowMs() < at) {
            /* the last millisecond */
          }
          let i = 0;
          const ids: string[] = [];
          const slot = async () => {
            while (i < held.length) {
              const t = held[i++];
              lags.push(nowMs() - t.tr); // the handler starts here
              ids.push(t.id);
              await null;
            }
          };
          await Promise.all(Array.from({ length: concurrency }, slot));
          await acker
            .pipeline()
            .xack(stream, 'g', ...ids)
            .xdel(stream, ...ids)
            .exec();
        })();
      },
      Math.max(0, at - nowMs() - 2),
    );
  }
};
const working = worker().catch(() => {});
let at = Math.ceil(nowMs() / 1000) * 1000 + 1000;
const end = at + seconds * 1000;
for (; at < end; at += 1000) {
  await sleepUntil(at - lead);
  await leader.eval(FIRE, 2, stream, `${ns}:dedup:`, at, ...names);
}
await sleep(1500);
running = false;
await working;
const l = latencySummary(lags.slice(triggers)); // the first burst warms up
console.log(
  `${triggers} triggers per second delivered ${lead} ms ahead, ${concurrency} slots: fire lag p50 ${l.p50.toFixed(2)} p99 ${l.p99.toFixed(2)} max ${l.max.toFixed(2)} ms (n=${l.n})`,
);
for (const r of [leader, reader, acker]) r.disconnect();
await bench.close();
process.exit(0);
