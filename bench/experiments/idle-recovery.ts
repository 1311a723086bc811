// Experiment (issue 15, targets 1 and 6): the idle Redis commands of one worker server on N queues,
// by source. A private redis-server; one ChronosServer (defaults) on N idle queues; after a warm-up,
// MONITOR for a window attributes every command (a script's inner calls to that script) and
// INFO commandstats gives the total (inner calls included), per second.
//   node dist/bench/experiments/idle-recovery.js [queues=1,10,100] [windowSec=30] [servers=1] [warmupMs=6000]
// (bench w11's idle window: warmupMs 1500, windowSec 10)
import { Redis } from 'ioredis';
import { createHash } from 'node:crypto';
import { ChronosServer } from '../../lib/core/index.js';
import { SCRIPT_NAMES, expandedSource } from '../../lib/core/redis/scripts.js';
import { readSnapshot } from '../lib/redis.js';

const { startRedisServer } = (await import(new URL('../../../scripts/redis-util.mjs', import.meta.url).href)) as {
  startRedisServer(): Promise<{ url: string; child: import('node:child_process').ChildProcess }>;
};

const sizes = (process.argv[2] ?? '1,10,100').split(',').map(Number);
const windowSec = Number(process.argv[3] ?? 30);
const serverCount = Number(process.argv[4] ?? 1);
const warmupMs = Number(process.argv[5] ?? 6000);
const sha = new Map<string, string>();
for (const name of SCRIPT_NAMES) sha.set(createHash('sha1').update(expandedSource(name)).digest('hex'), name);

/** Where a top-level command comes from. */
function source(cmd: string, args: string[]): string {
  if (cmd === 'evalsha') return `script ${sha.get(args[0]) ?? args[0].slice(0, 8)}`;
  return cmd;
}

const { url, child } = await startRedisServer();
try {
  for (const n of sizes) {
    const admin = new Redis(url);
    const queues = Array.from({ length: n }, (_, i) => `q${i}`);
    const ns = `idle${n}`;
    const servers = Array.from(
      { length: serverCount },
      () => new ChronosServer({ connection: url, namespace: ns, queues, logger: { log() {}, warn() {}, error() {} } }),
    );
    for (const server of servers) await server.start();
    await new Promise((r) => setTimeout(r, warmupMs));
    const monitorBase = new Redis(url); // closed with the monitor: left open, it kept the process alive after the run
    const mon = await monitorBase.monitor();
    mon.on('error', () => {});
    const bySource = new Map<string, number>();
    let current = '';
    mon.on('monitor', (_time: string, args: string[], source_: string) => {
      const [cmd, ...rest] = args;
      const c = cmd.toLowerCase();
      if (source_ === 'lua') {
        bySource.set(current, (bySource.get(current) ?? 0) + 1);
        return;
      }
      current = source(c, rest);
      bySource.set(current, (bySource.get(current) ?? 0) + 1);
    });
    const before = await readSnapshot(admin, true);
    await new Promise((r) => setTimeout(r, windowSec * 1000));
    const after = await readSnapshot(admin, true);
    mon.disconnect();
    monitorBase.disconnect();
    let total = 0;
    for (const [k, v] of Object.entries(after.calls)) if (k !== 'info' && k !== 'monitor') total += v - (before.calls[k] ?? 0);
    const ms = after.at - before.at;
    const rows = [...bySource.entries()].filter(([k]) => k !== 'info').sort((a, b) => b[1] - a[1]);
    console.log(
      `\n${serverCount} server(s) on ${n} queue(s): ${((total * 1000) / ms).toFixed(1)} commands/s in all ` +
        `(INFO commandstats, inner calls included), ${windowSec} s`,
    );
    for (const [k, v] of rows) console.log(`  ${k.padEnd(28)} ${((v * 1000) / ms).toFixed(2).padStart(8)}/s (with its inner calls)`);
    console.log(`  Redis CPU ${(((after.cpuSec - before.cpuSec) * 100_000) / ms).toFixed(2)} %`);
    for (const server of servers) await server.shutdown();
    admin.disconnect();
  }
} finally {
  child.kill('SIGKILL');
}
