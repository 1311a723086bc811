// node dist/bench/experiments/fire-lua-cost.js [--n 100000] [--rounds 3] [--delayed 0.5] [--history 1] [--redis-url URL --callgrind PID]
//
// Issue 25, fire.lua's Redis CPU per trigger, alone: the triggers of a burst as the leader sends them (workload 13's
// burst schedules: mode allow, a history record that renews its TTL, as captured with MONITOR from a real leader),
// fired through this build's fireScript in chunks of FIRE_CHUNK, 4 calls in flight, on a private redis-server
// emptied before each round. Per round: Redis CPU µs per trigger (INFO cpu: user + sys), fire.lua's own time
// (INFO commandstats evalsha usec) and this process's Node CPU per trigger (the wrapper's argument building and
// reply decoding). `--delayed F`: the share of triggers whose task is delayed (due in the future: the part of a
// burst fired more than FIRE_LEAD.holdMs ahead of its instant), the rest go to the stream. No leader, no plan:
// what a change to fire.lua or its wrapper costs or saves, A/B between builds (run them interleaved). The calls pass
// a fixed Redis `now` (fire.lua's test clock), 3 s before the triggers' instant, so the delayed share is exact.
// `--callgrind PID`: the redis-server at --redis-url runs under `valgrind --tool=callgrind --collect-atstart=no`
// (PID is valgrind's): instructions are collected over each round only (callgrind_control -i on/off), and the
// round prints Redis instructions per trigger (callgrind_control -d, then the dump's totals): a count that the
// machine's load does not change.
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { fireScript, type FireTrigger } from '../../lib/core/redis/commands/schedule.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { FIRE_CHUNK } from '../../lib/core/scheduler/firing-settle.js';
import { openConnection } from '../../lib/core/redis/connection.js';
import { BenchRedis } from '../lib/redis.js';
import { callgrindInstructions } from '../lib/callgrind.js';
import { nowMs } from '../lib/time.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const n = arg('n', 100_000);
const rounds = arg('rounds', 3);
const delayedShare = arg('delayed', 0.5);
const history = arg('history', 1) === 1;
const IN_FLIGHT = 4;
const url = process.argv.includes('--redis-url') ? process.argv[process.argv.indexOf('--redis-url') + 1] : undefined;
const callgrind = arg('callgrind', 0);

const instructions = (): number => callgrindInstructions(callgrind);

const redis = await BenchRedis.open(url);
const { client } = openConnection(redis.url);
const keys = new QueueKeys('flc', 'default');
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; Redis ${redis.version} (private); N ${n}, ${delayedShare * 100} % delayed`,
);

function triggers(instant: number, generation: number, enqueuedAt: number): FireTrigger[] {
  const out: FireTrigger[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const schedule = `burst.${i}`;
    const meta = `{"m":25,"t":1800000,"e":${enqueuedAt},"s":${JSON.stringify(schedule)},"tr":${instant},"cw":3600000}`;
    const t: FireTrigger = {
      schedule,
      triggerAt: instant,
      type: 'burst',
      payload: `{"n":${i}}`,
      meta,
      dedupTtlMs: 7_200_000,
      mode: 'a',
      generation,
    };
    if (i % 100 < delayedShare * 100) t.dueAt = instant;
    if (history) t.history = 'R';
    out[i] = t;
  }
  return out;
}

try {
  const results: { ir: number; redisUs: number; evalUs: number; nodeUs: number }[] = [];
  for (let r = 1; r <= rounds; r++) {
    await redis.client.flushall();
    // the triggers' instant a little ahead of Redis time (within the lead): the delayed ones are due later
    const instant = Math.ceil((nowMs() + 2_000) / 1000) * 1000;
    const now = instant - 3_000;
    const all = triggers(instant, nowMs() - 5_000, now);
    const i0 = callgrind ? instructions() : 0;
    if (callgrind) spawnSync('callgrind_control', ['-i', 'on', String(callgrind)], { stdio: 'ignore' });
    const s0 = await redis.snapshot();
    const cpu0 = process.cpuUsage();
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < n) {
        const chunk = all.slice(next, next + FIRE_CHUNK);
        next += FIRE_CHUNK;
        const out = await fireScript(client, keys, now, 5_000, chunk, 'vm:1:bench', 100);
        if (out.results.some((x) => x !== 'enqueued')) throw new Error(`not enqueued: ${out.results.find((x) => x !== 'enqueued')}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
    const cpu = process.cpuUsage(cpu0);
    const s1 = await redis.snapshot();
    if (callgrind) spawnSync('callgrind_control', ['-i', 'off', String(callgrind)], { stdio: 'ignore' });
    const ir = callgrind ? (instructions() - i0) / n : 0;
    const d = redis.delta(s0, s1);
    const res = {
      ir,
      redisUs: d.cpuUs / n,
      evalUs: ((s1.usec.evalsha ?? 0) - (s0.usec.evalsha ?? 0)) / n,
      nodeUs: (cpu.user + cpu.system) / n,
    };
    results.push(res);
    const inner = Object.entries(d.byCommand)
      .filter(([c]) => c !== 'evalsha')
      .map(([c, calls]) => `${c} ${(calls / n).toFixed(2)}/t ${(((s1.usec[c] ?? 0) - (s0.usec[c] ?? 0)) / n).toFixed(2)} µs/t`)
      .join('; ');
    console.log(
      `round ${r}: ${callgrind ? `Redis ${Math.round(ir)} instructions/trigger, ` : ''}Redis ${res.redisUs.toFixed(2)} µs/trigger (fire.lua ${res.evalUs.toFixed(2)}), Node ${res.nodeUs.toFixed(2)} µs/trigger; ${inner}`,
    );
  }
  const med = (k: 'ir' | 'redisUs' | 'evalUs' | 'nodeUs') =>
    [...results.map((x) => x[k])].sort((a, b) => a - b)[Math.floor(results.length / 2)];
  console.log(
    JSON.stringify({
      n,
      delayedShare,
      ir: Math.round(med('ir')),
      redisUs: +med('redisUs').toFixed(2),
      evalUs: +med('evalUs').toFixed(2),
      nodeUs: +med('nodeUs').toFixed(2),
      loadAvg: loadavg(),
    }),
  );
} finally {
  client.disconnect();
  await redis.close();
}
process.exit(0);
