// node dist/bench/profile-summary.js <file.cpuprofile | directory> [--top N] [--match NAME]
// Summarises V8 CPU profiles written by `npm run bench -- --cpu-prof`: self time by function and by
// module (lib/core, ioredis, bullmq, node internals, GC…), so a miss can be traced to what costs the time.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

function moduleOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  const m = /\/dist\/(lib\/core\/[^/]+(?:\/[^/]+)?|bench\/[^/]+(?:\/[^/]+)?)/.exec(url);
  if (m) return m[1].replace(/\.js$/, '');
  if (url.startsWith('node:')) return url;
  return url.split('/').slice(-2).join('/');
}

function summarise(file: string, top: number): void {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const self = new Map<number, number>();
  if (p.samples && p.timeDeltas) {
    for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0) || 1;
  const byFn = new Map<string, number>();
  const byMod = new Map<string, number>();
  for (const n of p.nodes) {
    const us = self.get(n.id) ?? 0;
    if (!us) continue;
    const { functionName, url, lineNumber } = n.callFrame;
    const mod = moduleOf(url, functionName);
    const key = `${functionName || '(anonymous)'}  ${mod}${url ? ':' + (lineNumber + 1) : ''}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
    byMod.set(mod, (byMod.get(mod) ?? 0) + us);
  }
  const idle = [...byFn.entries()].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, v]) => a + v, 0);
  const busy = total - idle;
  console.log(`\n${basename(file)}: ${(total / 1000).toFixed(0)} ms sampled, ${(busy / 1000).toFixed(0)} ms busy (not idle)`);
  const pct = (v: number) => `${((v / busy) * 100).toFixed(1).padStart(5)}%`;
  console.log('  by module (share of busy time):');
  for (const [k, v] of [...byMod.entries()]
    .filter(([k]) => k !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12))
    console.log(`    ${pct(v)}  ${k}`);
  console.log(`  top ${top} functions by self time:`);
  for (const [k, v] of [...byFn.entries()]
    .filter(([k]) => !k.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    console.log(`    ${pct(v)}  ${k}`);
}

const args = process.argv.slice(2);
const topIdx = args.indexOf('--top');
const top = topIdx >= 0 ? Number(args[topIdx + 1]) : 20;
const matchIdx = args.indexOf('--match');
const match = matchIdx >= 0 ? args[matchIdx + 1] : undefined;
const valueIdx = new Set([topIdx, matchIdx].filter((i) => i >= 0).map((i) => i + 1));
const targets = args.filter((a, i) => !a.startsWith('--') && !valueIdx.has(i));
if (targets.length === 0) {
  console.error('usage: node dist/bench/profile-summary.js <file.cpuprofile | directory> [--top N] [--match NAME]');
  process.exit(2);
}
for (const t of targets) {
  const files = statSync(t).isDirectory()
    ? readdirSync(t)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(t, f))
    : [t];
  for (const f of files.sort()) if (!match || basename(f).includes(match)) summarise(f, top);
}
