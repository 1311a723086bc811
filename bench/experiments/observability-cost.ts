// Experiment (not part of `npm run bench`): the Node CPU per task that metrics and tracing add, to
// enqueue (one `enqueue` at a time, 50 in flight) and to process (a ChronosServer at concurrency 50,
// no-op handler), each mode in a fresh process (own JIT, own global tracer provider), modes
// alternating per round, after a warm-up of 2,000 tasks. Also the CPU of one scrape of the metrics.
// Modes:
//   off      — `configureTracing({ enabled: false })`, no ChronosMetrics (nobody listens to events)
//   no-sdk   — @opentelemetry/api installed, no SDK registered (the API's no-op tracer), no metrics
//   metrics  — ChronosMetrics on the shared event bus (no fleet gauges), tracing off
//   tracing  — an SDK: BasicTracerProvider + BatchSpanProcessor with an exporter that drops spans
//   both     — metrics and tracing
//   node dist/bench/experiments/observability-cost.js [--tasks 20000] [--rounds 3] [--redis-url]
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BenchRedis } from '../lib/redis.js';
import { spread } from '../lib/stats.js';

const median = (values: number[]) => spread(values).median;

const MODES = ['off', 'no-sdk', 'metrics', 'tracing', 'both'] as const;
type Mode = (typeof MODES)[number];
const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};

interface Result {
  mode: Mode;
  enqueueUs: number;
  processUs: number;
  scrapeUs?: number;
}

async function child(mode: Mode, url: string, n: number): Promise<Result> {
  const { trace } = await import('@opentelemetry/api');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { Registry } = await import('prom-client');
  const core = await import('../../lib/core/internal.js');
  const metricsOn = mode === 'metrics' || mode === 'both';
  const tracingOn = mode === 'tracing' || mode === 'both';
  if (mode === 'off' || mode === 'metrics') core.configureTracing({ enabled: false });
  if (tracingOn) {
    const drop = { export: (_s: unknown, done: (r: { code: number }) => void) => done({ code: 0 }), shutdown: async () => {} };
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(drop)] }));
  }
  const events = new core.EventBus();
  const registry = new Registry();
  const metrics = metricsOn ? new core.ChronosMetrics({ events, registry }) : undefined;
  const namespace = `obs-cost-${mode}-${process.pid}`;
  const client = new core.QueueClient({ connection: url, namespace, events });
  const run = async (count: number): Promise<{ enqueueUs: number; processUs: number }> => {
    let c0 = process.cpuUsage();
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < count) {
          next++;
          await client.enqueue('email', { to: 'user@example.com', n: next });
        }
      }),
    );
    const e = process.cpuUsage(c0);
    let handled = 0;
    let allDone!: () => void;
    const done = new Promise<void>((r) => (allDone = r));
    const logger = { log() {}, warn() {}, error() {}, debug() {} };
    const server = new core.ChronosServer({ connection: url, namespace, concurrency: 50, events, logger });
    server.handle('email', () => {
      if (++handled === count) allDone();
    });
    c0 = process.cpuUsage();
    await server.start();
    await done;
    while ((await client.redis.xlen(new core.QueueKeys(namespace, 'default').stream)) > 0) await new Promise((r) => setTimeout(r, 1));
    const p = process.cpuUsage(c0);
    await server.shutdown();
    return { enqueueUs: (e.user + e.system) / count, processUs: (p.user + p.system) / count };
  };
  await run(2000);
  const r = await run(n);
  let scrapeUs: number | undefined;
  if (metrics) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < 100; i++) await registry.metrics();
    const d = process.cpuUsage(c0);
    scrapeUs = (d.user + d.system) / 100;
  }
  metrics?.close();
  await client.redis.del(new core.QueueKeys(namespace, 'default').stream);
  await client.close();
  return { mode, ...r, scrapeUs };
}

if (process.env.OBS_COST_CHILD) {
  const r = await child(process.env.OBS_COST_CHILD as Mode, process.env.OBS_COST_URL!, Number(process.env.OBS_COST_TASKS));
  process.send?.(r);
  process.exit(0);
}

const tasks = arg('tasks', 20_000);
const rounds = arg('rounds', 3);
const bench = await BenchRedis.open(process.argv.includes('--redis-url') ? process.env.REDIS_URL : undefined);
const results: Result[] = [];
try {
  for (let round = 1; round <= rounds; round++) {
    for (const mode of MODES) {
      const env = { ...process.env, OBS_COST_CHILD: mode, OBS_COST_URL: bench.url, OBS_COST_TASKS: String(tasks) };
      const proc = fork(fileURLToPath(import.meta.url), [], { env });
      const r = await new Promise<Result>((resolve, reject) => {
        proc.once('message', (m) => resolve(m as Result));
        proc.once('exit', (code) => reject(new Error(`${mode} child exited (code ${code}) before reporting`)));
      });
      results.push(r);
      console.log(`round ${round} ${mode.padEnd(8)} enqueue ${r.enqueueUs.toFixed(1)} µs/task  process ${r.processUs.toFixed(1)} µs/task`);
    }
  }
} finally {
  await bench.close();
}
const med = (mode: Mode, k: 'enqueueUs' | 'processUs') => median(results.filter((r) => r.mode === mode).map((r) => r[k]));
console.log(`\nNode CPU per task, median of ${rounds} rounds (${tasks} tasks each), added vs "off":`);
console.log('mode      enqueue µs  (+)     process µs  (+)');
for (const mode of MODES) {
  const [e, p] = [med(mode, 'enqueueUs'), med(mode, 'processUs')];
  const [de, dp] = [e - med('off', 'enqueueUs'), p - med('off', 'processUs')];
  const signed = (v: number, w: number) => `${v >= 0 ? '+' : ''}${v.toFixed(1)}`.padStart(w);
  console.log(`${mode.padEnd(8)}  ${e.toFixed(1).padStart(9)}  ${signed(de, 6)}   ${p.toFixed(1).padStart(9)}  ${signed(dp, 6)}`);
}
const scrapes = results.filter((r) => r.scrapeUs !== undefined).map((r) => r.scrapeUs!);
if (scrapes.length) console.log(`\nOne scrape of the per-process metrics (registry.metrics()), median: ${median(scrapes).toFixed(0)} µs`);
