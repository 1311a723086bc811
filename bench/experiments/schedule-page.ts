// Experiment (issue 25 item 3): the paged, filtered schedule listing over the registry's indexes. On a
// private Redis it writes N code-declared schedules with two labels each (tenant t0 … t99, kind one of
// 5) through the real script path (register-schedules.lua, 100 per call, pipelined), then reports:
//   - write: schedules/s through register-schedules.lua with the index upkeep;
//   - schedulePage({ labels: { tenant: 't42' }, limit: 100 }) p50/p99/max over --calls calls, first page
//     each time, and again walking the pages by cursor; also with a second label and with a prefix;
//   - Redis bytes per schedule the indexes add (MEMORY USAGE … SAMPLES 0 of the names index and of every
//     label ZSET, ÷ N), beside the registry hash's;
//   - the migration: the indexes dropped, the backfill steps (index-schedules.lua, BACKFILL_COUNT entries each):
//     count, total, slowest step (ms, Node-side round trip);
//   - with --full: Inspector.schedules() (the whole registry) once, for comparison.
//   node --expose-gc dist/bench/experiments/schedule-page.js --n 1000000 [--calls 50] [--full]
import { performance } from 'node:perf_hooks';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { BACKFILL_COUNT } from '../../lib/core/admin/schedule-page.js';
import { indexSchedulesScript, registerSchedulesScript } from '../../lib/core/redis/commands/schedule.js';
import { SchedulerKeys } from '../../lib/core/redis/keys.js';
import { toStored } from '../../lib/core/scheduler/definition.js';
import { BenchRedis } from '../lib/redis.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};
const n = Number(arg('n', '100000'));
const calls = Number(arg('calls', '50'));
const full = process.argv.includes('--full');
const ns = 'bench-page';
const KINDS = ['digest', 'report', 'cleanup', 'sync', 'billing'];

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const ms = (x: number): string => x.toFixed(2);

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const r = await fn();
  return [performance.now() - t0, r];
}

async function main(): Promise<void> {
  const redis = await BenchRedis.open(arg('redis-url', '') || undefined);
  const client = redis.client;
  const keys = new SchedulerKeys(ns);
  await redis.clean(ns);
  // write: 100 per register-schedules.lua call, up to 64 calls in flight
  const t0 = performance.now();
  const inFlight: Promise<unknown>[] = [];
  for (let i = 0; i < n; i += 100) {
    const definitions: [string, string, string][] = [];
    for (let j = i; j < Math.min(n, i + 100); j++) {
      const { stored } = toStored(
        {
          name: `s${String(j).padStart(7, '0')}`,
          spec: `${j % 60} ${j % 24} * * *`,
          queue: `q${j % 10}`,
          payload: { n: j },
          labels: { tenant: `t${j % 100}`, kind: KINDS[j % 5]! },
        },
        'UTC',
        false,
      );
      definitions.push([stored.name, stored.fp, JSON.stringify(stored)]);
    }
    inFlight.push(registerSchedulesScript(client, keys, { nowMs: undefined, definitions }));
    if (inFlight.length >= 64) await Promise.all(inFlight.splice(0));
  }
  await Promise.all(inFlight);
  const writeMs = performance.now() - t0;
  console.log(
    `write: ${n} schedules in ${(writeMs / 1000).toFixed(1)} s (${Math.round(n / (writeMs / 1000))}/s, register-schedules.lua with the index upkeep)`,
  );

  // memory: the indexes vs the registry hash
  const labelKeys = [...Array(100).keys()].map((t) => keys.label('tenant', `t${t}`)).concat(KINDS.map((k) => keys.label('kind', k)));
  const usage = async (key: string): Promise<number> => Number((await client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  const namesBytes = await usage(keys.nameIndex);
  let labelBytes = 0;
  for (const k of labelKeys) labelBytes += await usage(k);
  const hashBytes = await usage(keys.schedules);
  console.log(
    `memory per schedule: names index ${ms(namesBytes / n)} B + label indexes (2 labels) ${ms(labelBytes / n)} B = ${ms((namesBytes + labelBytes) / n)} B; registry hash ${ms(hashBytes / n)} B`,
  );

  const inspector = new Inspector({ connection: redis.url, namespace: ns });
  await inspector.schedulePage({ limit: 1 }); // the index is complete (one step), the scripts are loaded
  const series = async (label: string, fn: (cursor?: string) => Promise<{ cursor: string | null; items: unknown[] }>, walk: boolean) => {
    const t: number[] = [];
    let cursor: string | undefined;
    let items = 0;
    for (let w = 0; w < 5; w++) await fn(); // warm-up, not counted (first-use costs: script loads, JIT)
    (globalThis as { gc?: () => void }).gc?.(); // with --expose-gc: the heap of the write phase is not collected in the window
    for (let c = 0; c < calls; c++) {
      const [dt, page] = await timed(() => fn(walk ? cursor : undefined));
      t.push(dt);
      items += page.items.length;
      cursor = page.cursor ?? undefined;
    }
    console.log(
      `${label}: p50 ${ms(pct(t, 50))} ms, p99 ${ms(pct(t, 99))} ms, max ${ms(Math.max(...t))} ms over ${calls} calls (${items} items)`,
    );
  };
  await series(
    'schedulePage tenant=t42 limit 100, first page',
    () => inspector.schedulePage({ labels: { tenant: 't42' }, limit: 100 }),
    false,
  );
  await series(
    'schedulePage tenant=t42 limit 100, walking the cursor',
    (cursor) => inspector.schedulePage({ labels: { tenant: 't42' }, limit: 100, cursor }),
    true,
  );
  // every t42 schedule is kind cleanup (42 % 5 = 2): one matches all, the other none (the worst case: 5,000 looked at per call)
  await series(
    'schedulePage tenant=t42 kind=cleanup limit 100, walking (all of t42 match)',
    (cursor) => inspector.schedulePage({ labels: { tenant: 't42', kind: 'cleanup' }, limit: 100, cursor }),
    true,
  );
  await series(
    'schedulePage tenant=t42 kind=report limit 100, walking (none match: short pages, the scan cap)',
    (cursor) => inspector.schedulePage({ labels: { tenant: 't42', kind: 'report' }, limit: 100, cursor }),
    true,
  );
  await series('schedulePage no filter limit 100, walking', (cursor) => inspector.schedulePage({ limit: 100, cursor }), true);
  await series(
    'schedulePage prefix s00012 limit 100, walking',
    (cursor) => inspector.schedulePage({ prefix: 's00012', limit: 100, cursor }),
    true,
  );

  if (full) {
    const [dt, list] = await timed(() => inspector.schedules(1));
    console.log(`Inspector.schedules() (the whole registry): ${ms(dt)} ms for ${list.length}`);
  }

  // migration: the indexes dropped, then backfilled step by step
  await client.unlink(keys.nameIndex, keys.indexState, ...labelKeys);
  // Redis's own time per step: the mean from INFO commandstats, the slow ones from SLOWLOG (over 2 ms: no command
  // a script calls takes that long, so only whole steps are logged; a private Redis only)
  const evalStats = async (): Promise<[number, number]> => {
    const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec((await client.info('commandstats')) as string);
    return m ? [Number(m[1]), Number(m[2])] : [0, 0];
  };
  if (redis.own)
    await client.config('SET', 'slowlog-log-slower-than', '2000').then(() => client.config('SET', 'slowlog-max-len', '100000'));
  if (redis.own) await client.call('SLOWLOG', 'RESET');
  const before = await evalStats();
  const steps: number[] = [];
  const byPhase: Record<string, number[]> = { scan: [], prune: [] };
  for (;;) {
    const phase = (await client.hget(keys.indexState, 'phase')) ?? 'scan';
    const [dt, r] = await timed(() => indexSchedulesScript(client, keys, BACKFILL_COUNT));
    steps.push(dt);
    byPhase[phase]?.push(dt);
    if (r.ready) break;
  }
  for (const [phase, t] of Object.entries(byPhase)) {
    if (t.length === 0) continue;
    const slowest = t
      .map((x, i) => [x, i] as const)
      .sort((a, b) => b[0] - a[0])
      .slice(0, 5);
    console.log(
      `  ${phase}: ${t.length} steps, p50 ${ms(pct(t, 50))} ms, p99 ${ms(pct(t, 99))} ms; slowest at step ${slowest.map(([x, i]) => `${i} (${ms(x)} ms)`).join(', ')}`,
    );
  }
  const total = steps.reduce((a, b) => a + b, 0);
  console.log(
    `backfill of ${n}: ${steps.length} steps of ${BACKFILL_COUNT} in ${(total / 1000).toFixed(2)} s, step p50 ${ms(pct(steps, 50))} ms, p99 ${ms(pct(steps, 99))} ms, max ${ms(Math.max(...steps))} ms (round trip)`,
  );
  const after = await evalStats();
  const meanMs = (after[1] - before[1]) / Math.max(1, after[0] - before[0]) / 1000;
  if (redis.own) {
    const log = (await client.call('SLOWLOG', 'GET', '100000')) as [number, number, number, string[]][];
    const slow = log.filter((e) => /^(evalsha|eval)$/i.test(String(e[3][0]))).map((e) => e[2] / 1000);
    await client.config('SET', 'slowlog-log-slower-than', '10000');
    console.log(
      `  Redis time per step: mean ${ms(meanMs)} ms (INFO commandstats); steps over 2 ms ${slow.length}, over 10 ms ${slow.filter((x) => x > 10).length}, slowest ${ms(Math.max(0, ...slow))} ms (SLOWLOG)`,
    );
  }
  console.log(
    `after the backfill: names index ${await client.zcard(keys.nameIndex)}, tenant=t42 ${await client.zcard(keys.label('tenant', 't42'))}`,
  );
  await inspector.close();
  await redis.clean(ns);
  await redis.close();
}

await main();
