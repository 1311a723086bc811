#!/usr/bin/env node
// Compiles lib/, schematics/, sample/, test/ and bench/ to dist/ with tsc (type-checking everything) and
// copies the Lua scripts, static assets and the schematics' collection.json and schema.json files next
// to the compiled code.
//
// When dist/ was built from exactly the files it would be built from now (their contents, by a hash kept in
// dist/.build-hash), it is left as it is: CI's steps (npm test, test:cluster, the NestJS 11 pack, chaos,
// bench) each start with a build, and all but the first found nothing to do. `--force` builds anyway.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const HASH_FILE = 'dist/.build-hash';
/**
 * A hash of every file the build reads from the repository (sources, assets, configs, the lock file for
 * node_modules), as git sees the work tree: tracked and untracked files, minus the ignored ones; undefined
 * when git cannot list them (then the build always runs).
 */
function inputsHash() {
  const inputs = [
    'lib',
    'schematics',
    'sample',
    'test',
    'bench',
    'examples',
    'scripts',
    'tsconfig.json',
    'package.json',
    'package-lock.json',
  ];
  let files;
  try {
    const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...inputs], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    files = [...new Set(out.split('\0').filter(Boolean))].sort();
  } catch {
    return undefined;
  }
  const hash = createHash('sha256').update(process.version);
  for (const f of files)
    hash
      .update(`${f}\0`)
      .update(existsSync(f) ? readFileSync(f) : '(missing)')
      .update('\0');
  return hash.digest('hex');
}
const hash = inputsHash();
if (!process.argv.includes('--force') && hash !== undefined && existsSync(HASH_FILE) && readFileSync(HASH_FILE, 'utf8') === hash) {
  console.error('[build] dist/ is up to date with the sources (dist/.build-hash): nothing to build (--force builds anyway)');
  process.exit(0);
}

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
// last: a build that failed midway leaves no hash, so the next one starts over
if (hash !== undefined) writeFileSync(HASH_FILE, hash);
