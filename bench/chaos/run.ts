// npm run chaos -- [--seconds 120] [--seed 1] [--redis-stop shutdown,sigterm] [--redis-down 0-2000] [--flood 20] [--drain 15+N/250+10]
//                   [--out FILE] [--records FILE] [--logs DIR] [--runtime-schedules 500]
//
// The chaos experiment of issue 8: five replicas (Scheduler + ChronosServer) and a 200 tasks/s
// producer on a private Redis with AOF on, a seeded fault every 3–8 s (SIGKILL + restart, SIGSTOP
// 3–8 s, SIGTERM + restart, a ±1 h step of a replica's wall clock for 3–8 s, a silent partition of a
// replica's Redis connection for 2.5–4.5 s) and two Redis restarts; every process records to a second private
// Redis. The rig also adds N runtime schedules through the bulk API before the window, upserts some
// twice and removes some during it (runtime.ts). Prints the faults and the outcomes; exits 1 when a trigger is missing, duplicated or
// early, or a task is lost (2 when the rig itself failed). See bench/README.md, "Chaos run".
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { nowMs, sleep, sleepUntil } from '../lib/time.js';
import { analyze, expectedTriggers, type RedisRestart } from './analyze.js';
import { FLEET, RECORDS_KEY, type ChaosRecord } from './common.js';
import { ChaosProcess, Fleet, logLine } from './fleet.js';
import { makePlan } from './plan.js';
import { ChaosRedis, RecordsRedis, type RedisStop } from './redis.js';
import { render } from './report.js';
import { Scheduler } from '../../lib/core/index.js';
import { MAX_JITTER_MS, RuntimeSchedules, requiredIds } from './runtime.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

interface Args {
  seconds: number;
  seed: number;
  stops: RedisStop[];
  flood: number;
  drainSec: number;
  /** How long Redis stays down at a restart: [min, max] ms (uniform). */
  downMs: [number, number];
  out: string;
  /** Where to write every record, one JSON per line ('' = nowhere). */
  records: string;
  /** Where to keep every process's output (`<name>.log`), the rig's own log (`rig.log`) and the chaos Redis's (`redis.log`). */
  logs: string;
  /** Runtime schedules the rig adds through the bulk API (0 = none). */
  runtimeSchedules: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    seconds: 120,
    seed: 1,
    stops: ['shutdown', 'sigterm'],
    downMs: [0, 2000],
    flood: 20,
    drainSec: 0, // 0: 15 s, + 1 s per 250 runtime schedules (the window's end can be a burst of all of them) + the largest jitter
    out: '',
    records: '',
    logs: '',
    runtimeSchedules: 500,
  };
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i] ?? '';
    const int = (min: number) => {
      const v = Number(value());
      if (!Number.isInteger(v) || v < min) throw new Error(`${name}: expected an integer >= ${min}`);
      return v;
    };
    if (name === '--seconds') args.seconds = int(10);
    else if (name === '--seed') args.seed = int(0);
    else if (name === '--flood') args.flood = int(1);
    else if (name === '--drain') args.drainSec = int(1);
    else if (name === '--out') args.out = resolve(value());
    else if (name === '--records') args.records = resolve(value());
    else if (name === '--logs') args.logs = resolve(value());
    else if (name === '--runtime-schedules') args.runtimeSchedules = int(0);
    else if (name === '--redis-down') {
      const m = /^(\d+)-(\d+)$/.exec(value());
      if (!m || Number(m[1]) > Number(m[2])) throw new Error('--redis-down: expected MIN-MAX in ms, e.g. 0-2000');
      args.downMs = [Number(m[1]), Number(m[2])];
    } else if (name === '--redis-stop') {
      args.stops = value().split(',') as RedisStop[];
      for (const s of args.stops) {
        if (!['shutdown', 'sigterm', 'sigkill'].includes(s)) throw new Error(`--redis-stop: unknown "${s}" (shutdown, sigterm, sigkill)`);
      }
    } else if (name === '--help' || name === '-h') {
      console.log(
        readFileSync(fileURLToPath(import.meta.url), 'utf8')
          .split('\n')
          .slice(0, 2)
          .join('\n')
          .replace(/^\/\/ /gm, ''),
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${argv[i]} (see bench/README.md, "Chaos run")`);
  }
  // a trigger at the window's end may start up to the largest jitter later
  args.drainSec ||= 15 + (args.runtimeSchedules ? Math.ceil(args.runtimeSchedules / 250) + MAX_JITTER_MS / 1000 : 0);
  args.out ||= join(ROOT, `bench/results/chaos-seed${args.seed}-${args.seconds}s.json`);
  args.logs ||= args.out.replace(/\.json$/, '') + '-logs';
  return args;
}

/** Reads the records list incrementally (it only grows: RPUSH). */
class Records {
  readonly all: ChaosRecord[] = [];
  readonly done = new Set<string>();
  readonly enqueued = new Set<string>();
  readonly fired = new Set<string>();
  private readonly redis: Redis;
  constructor(url: string) {
    this.redis = new Redis(url);
  }
  async poll(): Promise<void> {
    for (;;) {
      const batch = await this.redis.lrange(RECORDS_KEY, this.all.length, this.all.length + 9999);
      for (const raw of batch) {
        const r = JSON.parse(raw) as ChaosRecord;
        this.all.push(r);
        if (r.k === 'done') this.done.add(r.id);
        if (r.k === 'enq') this.enqueued.add(r.id);
        if (r.k === 'fired') this.fired.add(r.id);
      }
      if (batch.length < 10000) return;
    }
  }
  close(): void {
    this.redis.disconnect();
  }
}

const args = parseArgs(process.argv.slice(2));
// a fresh directory per run: the logs of one run only
rmSync(args.logs, { recursive: true, force: true });
mkdirSync(args.logs, { recursive: true });
const records = await RecordsRedis.start();
const chaos = await ChaosRedis.start();
const base = { url: chaos.url, recordsUrl: records.url, namespace: 'chaos' };
const fleet = new Fleet(base, args.logs);
let producer: ChaosProcess | undefined;
const killAll = () => {
  fleet.killSync();
  producer?.signal('SIGKILL');
  chaos.killSync();
  records.killSync();
};
process.on('exit', killAll);
process.on('SIGINT', () => {
  killAll();
  process.exit(130);
});

try {
  const log = (m: string) => {
    console.log(`[chaos ${new Date().toISOString().slice(11, 23)}] ${m}`);
    appendFileSync(join(args.logs, 'rig.log'), logLine(m));
  };
  log(`chaos Redis 127.0.0.1:${chaos.port} (AOF in ${chaos.dir}), records Redis ${records.url}; starting ${FLEET.replicas} replicas`);
  const ended = new Promise<{ acked: number; failed: number }>((resolveEnded) => {
    producer = new ChaosProcess(
      'producer',
      'producer',
      base,
      (_, m) => {
        if (m.type === 'ended') resolveEnded(m as unknown as { acked: number; failed: number });
      },
      args.logs,
    );
  });
  void producer!.exited.then(({ code, signal }) => {
    if (!producer!.expectExit) {
      console.error(`the producer exited (code=${code} signal=${signal}):\n${producer!.lastLines}`);
      process.exit(2);
    }
  });
  await Promise.all([fleet.start(), producer!.waitReady()]);
  // the runtime schedules are added before the window (their maxRuns ones start at it): 2 s plus ~0.5 ms each of margin
  const windowStart = Math.ceil((nowMs() + 2000 + args.runtimeSchedules / 2) / 1000) * 1000;
  const window = { start: windowStart, end: windowStart + args.seconds * 1000 };
  const plan = makePlan(args.seed, args.seconds * 1000, FLEET.replicas, args.stops, args.downMs);
  log(`fleet up; seed ${args.seed}: ${plan.faults.length} replica faults and ${plan.redis.length} Redis restarts over ${args.seconds} s`);
  log(`window: ${new Date(window.start).toISOString()} to ${new Date(window.end).toISOString()}`);
  const rt = args.runtimeSchedules ? new RuntimeSchedules(args.runtimeSchedules, args.seed, windowStart, args.seconds) : undefined;
  const admin = new Scheduler({ connection: chaos.url, namespace: base.namespace, instanceId: 'rig-admin' });
  const acts: { act: string; at: number; ms: number; result: unknown }[] = [];
  /** A bulk call, repeated until it succeeds (they are safe to repeat); its start and resolve are recorded. */
  const act = async (name: string, call: () => Promise<unknown>, commit: (at: number, end: number) => void) => {
    const at = nowMs();
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await call();
        const end = nowMs();
        commit(at, end);
        acts.push({ act: name, at: at - windowStart, ms: Math.round(end - at), result });
        log(`${name}: ${JSON.stringify(result).slice(0, 120)} in ${Math.round(end - at)} ms${attempt > 1 ? ` (attempt ${attempt})` : ''}`);
        return;
      } catch (err) {
        if (attempt >= 20) throw err;
        await sleep(250);
      }
    }
  };
  if (rt) {
    await act(
      `addSchedules(${rt.list.length})`,
      () => admin.addSchedules(rt.list.map((r) => rt.define(r))),
      () => {},
    );
    if (nowMs() > windowStart - 200) throw new Error('the runtime schedules were not added 200 ms before the window start');
  }
  await sleepUntil(windowStart);
  producer!.proc.send({ type: 'go' });

  const work: Promise<unknown>[] = [];
  for (const f of plan.faults) {
    work.push(
      (async () => {
        await sleepUntil(windowStart + f.at);
        const slot = await fleet.target(f.preferLeader, f.slot);
        if (!slot) return;
        const name = slot.proc.name;
        log(`fault ${f.kind} on ${name} (${f.kind === 'clockstep' ? `step ${f.stepMs} ms, ` : ''}${f.stopMs} ms)`);
        await fleet.inject(slot, f.kind, f.stopMs, f.stepMs);
        log(`fault ${f.kind} on ${name}: over`);
      })(),
    );
  }
  if (rt) {
    work.push(
      (async () => {
        for (const [frac, specShare, payloadShare] of [
          [0.35, 0.05, 0.05],
          [0.65, 0.05, 0.05],
        ]) {
          await sleepUntil(windowStart + frac * args.seconds * 1000);
          const c = rt.change(specShare, payloadShare);
          await act(`upsertSchedules(${c.defs.length})`, () => admin.upsertSchedules(c.defs), c.commit);
        }
        await sleepUntil(windowStart + 0.8 * args.seconds * 1000);
        const r = rt.remove(0.05);
        await act(`removeSchedules(${r.names.length})`, () => admin.removeSchedules(r.names), r.commit);
      })(),
    );
  }
  const restarts: RedisRestart[] = [];
  work.push(
    (async () => {
      for (const r of plan.redis) {
        await sleepUntil(windowStart + r.at);
        const at = nowMs();
        log(`Redis ${r.how.toUpperCase()}, down for ${r.downMs} ms`);
        await chaos.stop(r.how);
        const downAt = nowMs();
        log(`Redis exited (${Math.round(downAt - at)} ms after the stop was sent)`);
        await sleep(r.downMs - (downAt - at));
        await chaos.launch();
        restarts.push({ how: r.how, at, downAt, upAt: nowMs() });
        log(`Redis answers again (down ${Math.round(nowMs() - downAt)} ms)`);
      }
    })(),
  );
  await sleepUntil(window.end);
  producer!.proc.send({ type: 'end' });
  await Promise.all(work);
  let giveUp: NodeJS.Timeout | undefined;
  const produced = await Promise.race([ended, new Promise<undefined>((r) => (giveUp = setTimeout(() => r(undefined), 60_000)))]);
  clearTimeout(giveUp);
  if (!produced) throw new Error('the producer did not settle its enqueues within 60 s');
  log(`window over (${fleet.faults.length} faults, ${produced.acked} tasks acknowledged); draining`);

  // drain: until every expected trigger and every acknowledged task has finished once (then 2 s
  // more, so late duplicates show), at most --drain seconds
  const rec = new Records(records.url);
  const expected = expectedTriggers(window);
  const drainUntil = nowMs() + args.drainSec * 1000;
  for (;;) {
    await rec.poll();
    const runtimeIds = rt ? requiredIds(rt, window, rec.fired) : [];
    const pending =
      expected.filter((x) => !rec.done.has(x.id)).length +
      [...rec.enqueued].filter((id) => !rec.done.has(id)).length +
      runtimeIds.filter((id) => !rec.done.has(id)).length;
    if (pending === 0) {
      await sleep(2000);
      break;
    }
    if (nowMs() > drainUntil) {
      log(`drain: ${pending} still not done after ${args.drainSec} s`);
      break;
    }
    await sleep(500);
  }
  await admin.stop();
  await fleet.stop();
  producer!.expectExit = true;
  producer!.proc.send({ type: 'exit' });
  const exitTimer = setTimeout(() => producer!.signal('SIGKILL'), 5000);
  await producer!.exited;
  clearTimeout(exitTimer);
  await rec.poll();
  rec.close();
  await chaos.stop('sigterm');
  if (existsSync(join(chaos.dir, 'redis.log'))) copyFileSync(join(chaos.dir, 'redis.log'), join(args.logs, 'redis.log'));
  await chaos.close();
  await records.close();

  const runLog = {
    records: rec.all,
    window,
    faults: fleet.faults,
    crashes: fleet.crashes,
    restarts,
    outputs: [...fleet.processes, producer!].map((p) => p.output),
    floodLinesPerSecond: args.flood,
    aofLossMs: args.stops.includes('sigkill') ? 2000 : 0,
    runtime: rt,
  };
  const outcome = analyze(runLog);
  console.log('');
  console.log(render(runLog, outcome, { seed: args.seed, seconds: args.seconds }));
  mkdirSync(dirname(args.out), { recursive: true });
  const { records: _records, outputs: _outputs, runtime: _runtime, ...kept } = runLog;
  const leadership = rec.all.filter((r) => r.k === 'lead');
  const runtime = rt ? { acts, schedules: rt.list } : undefined;
  writeFileSync(args.out, JSON.stringify({ args, plan, ...kept, leadership, runtime, outcome }, null, 1));
  if (args.records) writeFileSync(args.records, rec.all.map((r) => JSON.stringify(r)).join('\n') + '\n');
  console.log(`(details: ${args.out}${args.records ? `; records: ${args.records}` : ''}; logs: ${args.logs})`);
  process.exitCode = outcome.failures.length ? 1 : 0;
} catch (err) {
  console.error('chaos run failed:', (err as Error).stack ?? err);
  killAll();
  process.exitCode = 2;
}
