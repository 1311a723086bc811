#!/usr/bin/env node
// Usage: node scripts/checks.mjs (the start of `npm test`)
// The checks before the tests, at once rather than in turn: ESLint and Prettier (`npm run lint`), TypeDoc with
// warnings as errors (`npm run docs:check`) and the build (scripts/build.mjs: tsc over everything into dist/).
// None reads what another writes (ESLint, Prettier and TypeDoc skip dist/), and each is a TypeScript program
// or a pass over every file, mostly CPU: on two cores, together they take about half of their sum (measured
// under load: 29 + 37 + 36 + 38 s of CPU). Each step's output is printed whole when it ends, so that two
// steps' lines never interleave; the exit code is 1 when any step failed, naming those that did.
import { spawn } from 'node:child_process';

const STEPS = [
  { name: 'eslint', args: ['node_modules/eslint/bin/eslint.js', '.'] },
  { name: 'prettier --check', args: ['node_modules/prettier/bin/prettier.cjs', '--check', '.'] },
  { name: 'docs:check', args: ['node_modules/typedoc/bin/typedoc', '--treatWarningsAsErrors', '--emit', 'none', '--disableSources'] },
  { name: 'build', args: ['scripts/build.mjs'] },
];

/** Runs one step; resolves with its exit code (1 when it could not start or was killed) once its output is printed. */
function run({ name, args }) {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    let ended = false;
    const end = (code) => {
      if (ended) return;
      ended = true;
      const s = ((Date.now() - t0) / 1000).toFixed(1);
      process.stdout.write(`[checks] ${name}: ${code === 0 ? 'ok' : `failed (exit ${code})`} in ${s} s\n`);
      if (out.length > 0) process.stdout.write(Buffer.concat(out));
      resolve(code);
    };
    child.on('error', (err) => {
      out.push(Buffer.from(`${err.message}\n`));
      end(1);
    });
    child.on('close', (code) => end(code ?? 1));
  });
}

const codes = await Promise.all(STEPS.map(run));
const failed = STEPS.filter((_, i) => codes[i] !== 0).map((s) => s.name);
if (failed.length > 0) {
  console.error(`[checks] failed: ${failed.join(', ')}`);
  process.exit(1);
}
