// node dist/bench/experiments/delayed-layouts.js [--tasks 100000] [--value 80]
//
// Redis memory per delayed task for three layouts, plain ioredis on a fresh private Redis each (issue
// 15, bench/README.md "Memory per task"): a ZSET of ids + one HASH id → value (what Chronos does), the
// same with the hash split into 1,024 buckets (small hashes stay listpacks only while every value is at
// most hash-max-listpack-value, 64 bytes by default), and the whole task as the ZSET member, no hash.
import { Redis } from 'ioredis';
import { BenchServers } from '../lib/cluster.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const n = arg('tasks', 100_000);
const value = 'v'.repeat(arg('value', 80));
const id = (j: number) => String(j).padStart(22, 'x');

type Add = (p: ReturnType<Redis['pipeline']>, j: number) => void;
const layouts: [string, Add][] = [
  ['ZSET of ids + one HASH', (p, j) => p.zadd('{q}:z', 1e12 + j, id(j)).hset('{q}:h', id(j), value)],
  ['ZSET of ids + 1,024 bucket HASHes', (p, j) => p.zadd('{q}:z', 1e12 + j, id(j)).hset(`{q}:h:${j % 1024}`, id(j), value)],
  ['ZSET of whole tasks, no HASH', (p, j) => p.zadd('{q}:z', 1e12 + j, id(j) + value)],
];

for (const [name, add] of layouts) {
  const servers = await BenchServers.standalone();
  try {
    const r = servers.nodes[0].admin;
    const used = async () => Number(/^used_memory:(\d+)/m.exec(await r.info('memory'))![1]);
    const before = await used();
    for (let i = 0; i < n; i += 1000) {
      const p = r.pipeline();
      for (let j = i; j < Math.min(n, i + 1000); j++) add(p, j);
      await p.exec();
    }
    console.log(`${name}: ${(((await used()) - before) / n).toFixed(1)} B per task (${n} tasks, ${value.length}-byte values)`);
  } finally {
    await servers.close();
  }
}
