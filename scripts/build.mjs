#!/usr/bin/env node
// Compiles lib/, schematics/, sample/, test/ and bench/ to dist/ with tsc (type-checking everything) and
// copies the Lua scripts, static assets and the schematics' collection.json and schema.json files next
// to the compiled code.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
const ASSETS = /\.(lua|html|css|json)$/;
function copyAssets(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) copyAssets(p);
    else if (ASSETS.test(name) && !name.endsWith('tsconfig.json')) cpSync(p, join('dist', p));
  }
}
// the `chronos` bin runs from a clone too (npm sets the bit on install; a clone needs it here)
chmodSync('dist/lib/cli/main.js', 0o755);
// compiled code (tests, benchmarks) imports the Redis helper relative to itself: dist/scripts/
cpSync('scripts/redis-util.mjs', 'dist/scripts/redis-util.mjs');
for (const dir of ['lib', 'schematics', 'test/fixtures', 'sample']) {
  try {
    copyAssets(dir);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
}
// the console's page: its plain ES modules, and the vendored preact + htm ESM builds (no CDN at run time); the
// hooks build imports the bare `preact`, pointed at the vendored file (an import map would be inline script, which the CSP forbids)
cpSync('lib/console/static', 'dist/lib/console/static', { recursive: true });
mkdirSync('dist/lib/console/static/vendor', { recursive: true });
// uPlot (MIT, a small canvas chart library) draws the console's charts; its stylesheet is a file too (style-src 'self')
const VENDOR = {
  'preact.mjs': 'preact/dist/preact.mjs',
  'hooks.mjs': 'preact/hooks/dist/hooks.mjs',
  'htm.mjs': 'htm/dist/htm.mjs',
  'uplot.mjs': 'uplot/dist/uPlot.esm.js',
  'uplot.css': 'uplot/dist/uPlot.min.css',
};
for (const [name, from] of Object.entries(VENDOR)) {
  const text = readFileSync(join('node_modules', from), 'utf8').replace(/from\s*["']preact["']/g, 'from"./preact.mjs"');
  writeFileSync(join('dist/lib/console/static/vendor', name), text);
}
