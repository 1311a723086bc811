// Experiment (issue 25 item 3): the paged, filtered schedule listing over the registry's indexes. On a
// private Redis it writes N code-declared schedules with two labels each (tenant t0 … t99, kind one of
// 5) through the real script path (register-schedules.lua, 100 per call, pipelined), then reports:
//   - write: schedules/s through register-schedules.lua with the index upkeep;
//   - schedulePage({ labels: { tenant: 't42' }, limit: 100 }) p50/p99/max over --calls calls, first page
//     each time, and again walking the pages by cursor; also with a second label and with a prefix;
//   - Redis bytes per schedule the indexes add (MEMORY USAGE … SAMPLES 0 of every shard's names index, label
//     ZSETs and due index, ÷ N), beside the registries' (docs/scheduler-shards.md);
//   - with --full: Inspector.schedules() (the whole registry) once, for comparison.
//   node --expose-gc dist/bench/experiments/schedule-page.js --n 1000000 [--calls 50] [--full]
import { performance } from 'node:perf_hooks';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { registerSchedulesScript } from '../../lib/core/redis/commands/schedule.js';
import { byShard, shardKeysOf } from '../../lib/core/redis/keys.js';
import { toStored } from '../../lib/core/scheduler/definition-check.js';
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
  const shards = shardKeysOf(ns);
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
    for (const [keys, group] of byShard(ns, definitions, (d) => d[0])) {
      inFlight.push(registerSchedulesScript(client, keys, { nowMs: undefined, definitions: group }));
    }
    if (inFlight.length >= 64) await Promise.all(inFlight.splice(0));
  }
  await Promise.all(inFlight);
  const writeMs = performance.now() - t0;
  console.log(
    `write: ${n} schedules in ${(writeMs / 1000).toFixed(1)} s (${Math.round(n / (writeMs / 1000))}/s, register-schedules.lua with the index upkeep)`,
  );

  // memory: the indexes vs the registry hash
  const usage = async (key: string): Promise<number> => Number((await client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  let namesBytes = 0;
  let labelBytes = 0;
  let hashBytes = 0;
  let dueBytes = 0;
  for (const keys of shards) {
    const labelKeys = [...Array(100).keys()].map((t) => keys.label('tenant', `t${t}`)).concat(KINDS.map((k) => keys.label('kind', k)));
    namesBytes += await usage(keys.nameIndex);
    for (const k of labelKeys) labelBytes += await usage(k);
    hashBytes += await usage(keys.schedules);
    dueBytes += await usage(keys.due);
  }
  console.log(
    `memory per schedule: names index ${ms(namesBytes / n)} B + label indexes (2 labels) ${ms(labelBytes / n)} B = ${ms((namesBytes + labelBytes) / n)} B; registry hashes ${ms(hashBytes / n)} B; due index ${ms(dueBytes / n)} B`,
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

  await inspector.close();
  await redis.clean(ns);
  await redis.close();
}

await main();
