#!/usr/bin/env node
// Usage: node scripts/sample-cluster.mjs   (npm run sample:cluster builds first)
// Starts three replicas of the sample (dist/sample/main.js) on different HTTP ports against one
// Redis (REDIS_URL, else 127.0.0.1:6379, else a private redis-server), with each line prefixed by
// its replica. Every 3 s it enqueues three emails through one replica's HTTP API (taking turns); after ~20 s
// it stops the one of its replicas that leads the most shards (SIGTERM) to show a hand-over, and starts it
// again 10 s later (it takes back its fair share of the shards). Another process of the same namespace (an
// `npm run sample` beside it) is one more member of the fleet: it is named once and left alone. Ctrl-C stops
// everything. Env: CLUSTER_PORT (first port, default 3001), HANDOVER_AFTER_MS (default 20000),
// CLUSTER_DURATION_MS (stop by itself after this long; default: run until Ctrl-C).
import { spawn } from 'node:child_process';
import { ensureRedisOrExit, freePort } from './redis-util.mjs';

const NAMES = ['A', 'B', 'C'];
const COLORS = { A: '\x1b[36m', B: '\x1b[35m', C: '\x1b[33m', cluster: '\x1b[1m' };
const RESET = '\x1b[0m';
const tty = process.stdout.isTTY;
const say = (who, line) => process.stdout.write(`${tty ? (COLORS[who] ?? '') : ''}[${who}]${tty ? RESET : ''} ${line}\n`);

const redis = await ensureRedisOrExit();
if (redis.child) say('cluster', `started a private redis-server at ${redis.url}`);

const firstPort = Number(process.env.CLUSTER_PORT ?? 3001);
const ports = {};
for (const [i, n] of NAMES.entries()) ports[n] = (await portFree(firstPort + i)) ? firstPort + i : await freePort();

const replicas = new Map(); // name -> child
let stopping = false;
const timers = [];

function start(name) {
  const child = spawn(process.execPath, ['dist/sample/main.js'], {
    env: { ...process.env, REDIS_URL: redis.url, PORT: String(ports[name]), CHRONOS_INSTANCE: `sample-${name}`, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  replicas.set(name, child);
  for (const stream of [child.stdout, child.stderr]) {
    let buf = '';
    stream.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        say(name, tidy(buf.slice(0, i)));
        buf = buf.slice(i + 1);
      }
    });
  }
  child.on('exit', (code, signal) => {
    if (replicas.get(name) === child) replicas.delete(name);
    say('cluster', `replica ${name} exited (${signal ?? `code ${code}`})`);
    if (stopping && replicas.size === 0) finish();
  });
  say('cluster', `replica ${name} starting on http://127.0.0.1:${ports[name]}`);
}

/** Drops Nest's "[Nest] pid - date," preamble: the replica prefix says who, and the log shows when. */
function tidy(line) {
  return line.replace(/^\[Nest\] \d+\s+- (\d+\/\d+\/\d+, )?/, '');
}

async function api(name, path, init) {
  const res = await fetch(`http://127.0.0.1:${ports[name]}${path}`, init);
  return res.json();
}

/**
 * Which of this script's replicas leads the most shards (of those /status lists), and which other
 * instances lead some: an `npm run sample` of the same namespace (chronos-sample unless
 * CHRONOS_NAMESPACE says otherwise) joins the same fleet. Undefined while no replica answers.
 */
async function shardLeaders() {
  for (const n of replicas.keys()) {
    try {
      const s = await api(n, '/status');
      const count = new Map();
      for (const { instance } of s.leader?.shards ?? []) count.set(instance, (count.get(instance) ?? 0) + 1);
      const ours = ([i]) => i.startsWith('sample-') && replicas.has(i.slice('sample-'.length));
      const mine = [...count].filter(ours).sort((a, b) => b[1] - a[1]);
      return { mine: mine[0]?.[0].slice('sample-'.length), others: [...count].filter((e) => !ours(e)) };
    } catch {
      /* not listening yet or stopping */
    }
  }
  return undefined;
}

let sent = 0;
let bursts = 0;
/** Enqueues a burst of 3 emails through one replica (taking turns); any replica may send each. */
async function enqueueEmails() {
  const live = [...replicas.keys()];
  if (live.length === 0) return;
  const via = live[bursts++ % live.length];
  const ids = [];
  try {
    for (let i = 0; i < 3; i++) {
      const n = ++sent;
      const r = await api(via, '/emails', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ to: `user${n}@example.com`, subject: `Welcome #${n}` }),
      });
      ids.push(r.id.slice(0, 8));
    }
    say('cluster', `enqueued 3 emails through ${via} (tasks ${ids.join(', ')}…)`);
  } catch {
    /* that replica is stopping */
  }
}

function stopAll(signal = 'SIGTERM') {
  if (stopping) return;
  stopping = true;
  for (const t of timers) {
    clearTimeout(t);
    clearInterval(t);
  }
  say('cluster', 'stopping every replica (they resign and drain)');
  for (const c of replicas.values()) c.kill(signal);
  if (replicas.size === 0) finish();
}

function finish() {
  redis.child?.kill('SIGKILL');
  process.exit(0);
}

process.on('SIGINT', () => stopAll());
process.on('SIGTERM', () => stopAll());

for (const n of NAMES) start(n);
timers.push(setInterval(() => void enqueueEmails(), 3000));
let toldOthers = false;
/** Stops the replica that leads the most shards; tries again every second until one of them leads a shard. */
async function handOver() {
  if (stopping) return;
  const led = await shardLeaders();
  if (led && !toldOthers && led.others.length > 0) {
    toldOthers = true;
    const list = led.others.map(([i, n]) => `${i} (${n} shard${n === 1 ? '' : 's'})`).join(', ');
    say(
      'cluster',
      `the fleet also has ${list}: not one of this script's replicas (another process in this namespace, e.g. an npm run sample?)`,
    );
  }
  if (stopping) return;
  const l = led?.mine;
  if (!l) return void timers.push(setTimeout(() => void handOver(), 1000));
  say(
    'cluster',
    `stopping the replica that leads the most shards (replica ${l}) to show a hand-over: watch the others log "Leadership acquired"`,
  );
  replicas.get(l).kill('SIGTERM');
  timers.push(
    setTimeout(() => {
      if (stopping) return;
      say('cluster', `starting replica ${l} again: it takes back its fair share (the others log "Leadership released")`);
      start(l);
    }, 10_000),
  );
}
const handoverAfter = Number(process.env.HANDOVER_AFTER_MS ?? 20_000);
timers.push(setTimeout(() => void handOver(), handoverAfter));
if (process.env.CLUSTER_DURATION_MS) timers.push(setTimeout(() => stopAll(), Number(process.env.CLUSTER_DURATION_MS)));
say('cluster', 'three replicas of the sample; Ctrl-C stops them all');

function portFree(port) {
  return new Promise((resolve) => {
    import('node:net').then(({ default: net }) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
  });
}
