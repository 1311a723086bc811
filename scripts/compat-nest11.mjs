#!/usr/bin/env node
// Usage: npm run compat:nest11 (npm pack builds the package first: the prepack script)
// Checks that the built package works in a CommonJS NestJS 11 app: packs it (npm pack), installs
// the tarball with @nestjs/common and @nestjs/core 11 into test/compat/nest11 (its own
// node_modules, so Chronos resolves Nest 11, not the repo's 12), type-checks
// test/compat/nest11/types-check.ts under Nest's default CommonJS tsconfig (moduleResolution node:
// '@chronos/nest', '@chronos/nest/core' and '@chronos/nest/internal' must resolve with their types), and runs
// test/compat/nest11/app.cjs against a Redis (REDIS_URL, else 127.0.0.1:6379, else a private
// redis-server). Then runs the installed `chronos` CLI there with `npx chronos …` (the package's
// bin, no Nest boot). Needs the npm registry.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureRedis } from './redis-util.mjs';

const dir = 'test/compat/nest11';
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const packDir = mkdtempSync(join(tmpdir(), 'chronos-pack-'));
try {
  const [{ filename }] = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', packDir], { encoding: 'utf8' }));
  console.log(`[compat] packed ${filename}; installing it with NestJS 11 into ${dir}`);
  execFileSync(npm, ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', join(packDir, filename)], {
    cwd: dir,
    stdio: 'inherit',
  });
} finally {
  rmSync(packDir, { recursive: true, force: true });
}
// the repo's TypeScript, on the installed package (tsconfig.json there: module commonjs, moduleResolution node)
const tscBin = join(process.cwd(), 'node_modules/typescript/bin/tsc');
const tsc = spawnSync(process.execPath, [tscBin, '-p', 'tsconfig.json'], { cwd: dir, stdio: 'inherit' });
if (tsc.status !== 0) {
  console.error('[compat] COMPAT FAILED: types-check.ts does not type-check under moduleResolution node (see above)');
  process.exit(tsc.status ?? 1);
}
console.log('[compat] types OK: @chronos/nest, @chronos/nest/core and @chronos/nest/internal resolve under moduleResolution node');
const redis = await ensureRedis();
const run = spawnSync(process.execPath, ['app.cjs'], { cwd: dir, stdio: 'inherit', env: { ...process.env, REDIS_URL: redis.url } });
const cli = run.status === 0 ? checkCli(redis.url) : 1;
redis.child?.kill('SIGKILL');
process.exit(run.status || cli);

/** `npx chronos` from the installed tarball: --version, stats --json (exit 0, JSON), a wrong address (exit 1). */
function checkCli(url) {
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
  const env = { ...process.env, REDIS_URL: url };
  const chronos = (...args) => spawnSync(npx, ['chronos', ...args], { cwd: dir, encoding: 'utf8', env });
  const version = chronos('--version');
  const stats = chronos('--namespace', `compat-cli-${process.pid}`, '--json', 'stats');
  const wrong = chronos('--redis-url', 'redis://127.0.0.1:1', 'leader');
  let parsed;
  try {
    parsed = JSON.parse(stats.stdout);
  } catch {
    parsed = undefined;
  }
  const ok =
    version.status === 0 &&
    stats.status === 0 &&
    Array.isArray(parsed?.queues) &&
    wrong.status === 1 &&
    /^error: Redis at/.test(wrong.stderr);
  const verdict = `[compat] npx chronos ${version.stdout.trim()}: --version, stats --json and a wrong address behave`;
  console.log(ok ? verdict : '[compat] npx chronos failed:');
  if (!ok) console.log({ version, stats, wrong });
  return ok ? 0 : 1;
}
