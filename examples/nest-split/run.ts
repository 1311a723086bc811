// `npm run example:split`: starts the API process and one worker process (REDIS_URL from
// scripts/with-redis.mjs), places one order through the API, and runs until Ctrl-C (or for
// EXAMPLE_DURATION_MS). Each line is prefixed by its process.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

function start(name: string, file: string): Promise<{ proc: ChildProcess; ready: Record<string, unknown> }> {
  const proc = fork(here(file), [], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const prefix = (d: Buffer) => process.stdout.write(d.toString().replace(/^(?=.)/gm, `[${name}] `));
  proc.stdout!.on('data', prefix);
  proc.stderr!.on('data', prefix);
  return new Promise((resolve, reject) => {
    proc.on('message', (m: Record<string, unknown>) => m.event === 'ready' && resolve({ proc, ready: m }));
    proc.on('exit', (code) => reject(new Error(`${name} exited with code ${code} before it was ready`)));
  });
}

const worker = await start('worker', './worker.js');
worker.proc.on('message', (m) => process.send?.(m as object)); // forked by the smoke test: what the worker processed
const api = await start('api', './api.js');
const stop = () => {
  for (const p of [api.proc, worker.proc]) p.kill('SIGTERM');
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
const exited = Promise.all([api, worker].map(({ proc }) => new Promise((r) => proc.on('exit', r))));

const res = await fetch(`http://127.0.0.1:${String(api.ready.port)}/orders`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'ada@example.com' }),
});
const order = (await res.json()) as { orderId: string; task: string };
console.log(`[run] POST /orders → ${res.status} ${JSON.stringify(order)}; Ctrl-C stops both processes`);
// when this launcher is itself forked (the examples' smoke test): the order's task id
process.send?.({ event: 'ready', ...order });
if (process.env.EXAMPLE_DURATION_MS) setTimeout(stop, Number(process.env.EXAMPLE_DURATION_MS)).unref();
await exited;
process.exit(0);
