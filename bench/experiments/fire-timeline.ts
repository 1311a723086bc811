// Experiment (not part of `npm run bench`): when does a Chronos leader send and get back each
// fire.lua call of a burst of N schedules firing on the same second? The Scheduler runs alone (no
// worker) on a private Redis; each call of its fire script is timed relative to the trigger instant.
//   node dist/bench/experiments/fire-timeline.js [--schedules 1000] [--seconds 6]
// It wraps the scheduler's ioredis script method (a private field): an observation aid, not an API.
import { Scheduler, EventBus } from '../../lib/core/index.js';
import { BenchRedis } from '../lib/redis.js';
import { nowMs, sleep } from '../lib/time.js';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const schedules = arg('schedules', 1000);
const seconds = arg('seconds', 6);
const redis = await BenchRedis.open(process.argv.includes('--redis-url') ? process.env.REDIS_URL : undefined);
const quiet = { log() {}, warn() {}, error() {} };
const scheduler = new Scheduler({
  connection: redis.url,
  namespace: `fire-timeline-${process.pid}`,
  events: new EventBus(),
  logger: quiet,
});
for (let i = 0; i < schedules; i++)
  scheduler.register({ name: `s${i}`, spec: '@every 1s', type: 'email', payload: { to: 'user@example.com', n: i } });
await scheduler.start();
type ScriptFn = (...args: unknown[]) => Promise<unknown[]>;
const client = (scheduler as unknown as { conn: { client: Record<string, ScriptFn> } }).conn.client;
let name: string | undefined;
for (let p: object | null = client; p && !name; p = Object.getPrototypeOf(p))
  name = Object.getOwnPropertyNames(p).find((k) => k.startsWith('chronos_fire_'));
if (!name) throw new Error('fire script method not found on the scheduler client');
const original = client[name].bind(client);
const calls: { T: number; sent: number; replied: number; n: number }[] = [];
client[name] = async (...args: unknown[]) => {
  const sent = nowMs();
  const T = Math.floor(sent / 1000) * 1000;
  const reply = await original(...args);
  calls.push({ T, sent: sent - T, replied: nowMs() - T, n: reply.length - 1 });
  return reply;
};
await sleep(seconds * 1000 + 500);
await scheduler.stop();
let T = -1;
for (const c of calls) {
  if (c.T !== T) console.log(`trigger …${String(c.T).slice(-5)}:`);
  T = c.T;
  console.log(
    `  fire.lua with ${c.n} triggers: sent +${c.sent.toFixed(1)} ms, reply +${c.replied.toFixed(1)} ms after the trigger instant`,
  );
}
await redis.close();
process.exit(0);
