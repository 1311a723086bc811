// Workload 10: one Scheduler instance declaring `schedules` schedules (the same names in every instance,
// as replicas of one app do): mixed crons in 5 zones, intervals from 1 s to 1 day, and a burst group.
// Run with --expose-gc (heap per schedule = heapUsed after gc, minus the baseline before declaring, ÷ N).
// Config: { url, prefix, name, schedules, burstEvery, eligible }.
// IPC: → ready { registrationMs, declaredMs, heapBaseline, heapAfterStart } once start() resolved;
//      ← mark (idle window begins) ; ← end → stats { cpuUs, ms, fires, leader, heapUsed, loopMaxMs, loopMaxWindowMs, loopMaxFromStartMs };
//      → leader { acquired } and → fired { triggerAt, t } (the first fire after each acquisition, and each burst fire).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { childConfig, on, onExit, send } from '../lib/ipc.js';
import { TASK_TYPE } from '../lib/common.js';
import { cpuSince, nowMs } from '../lib/time.js';
import { scheduleDefinition } from '../lib/schedule-mix.js';

interface Config {
  url: string;
  prefix: string;
  name: string;
  schedules: number;
  /** The burst group's period, s: that many schedules fire together at each multiple of it. */
  burstEvery: number;
  /** false: the instance never leads. */
  eligible: boolean;
}

const cfg = childConfig<Config>();
const gc = (globalThis as { gc?: () => void }).gc;
const heapNow = () => {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
};

const { Scheduler, EventBus } = await import('../../lib/core/index.js');
// from after the imports: declaring, start() and everything after
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const heapBaseline = heapNow();
const events = new EventBus();
const scheduler = new Scheduler({ connection: cfg.url, namespace: cfg.prefix, instanceId: cfg.name, events, eligible: cfg.eligible });
const t0 = nowMs();
for (let i = 0; i < cfg.schedules; i++) scheduler.register({ ...scheduleDefinition(i, cfg.burstEvery), type: TASK_TYPE });
const declaredMs = nowMs() - t0;
// from start() on (the declaration loop above is the app's own synchronous code): a second monitor, made after it
const fromStart = monitorEventLoopDelay({ resolution: 10 });
fromStart.enable();
let measuring = false;
let fires = 0;
let reportNextFire = false;
events.subscribe((e) => {
  if (e.type === 'schedule.fired') {
    if (measuring) fires++;
    const burst = e.triggerAt % (cfg.burstEvery * 1000) === 0;
    if (reportNextFire || burst) send({ type: 'fired', triggerAt: e.triggerAt, t: nowMs(), burst });
    reportNextFire = false;
  } else if (e.type === 'leader.acquired' || e.type === 'leader.lost') {
    reportNextFire = e.type === 'leader.acquired';
    send({ type: 'leader', acquired: e.type === 'leader.acquired', t: nowMs() });
  }
});
const t1 = nowMs();
await scheduler.start();
const registrationMs = nowMs() - t1;
const heapAfterStart = heapNow();
onExit(() => Promise.race([scheduler.stop(), new Promise((r) => setTimeout(r, 3000))]));
let cpu0 = process.cpuUsage();
let markAt = nowMs();
let loopMaxBefore = 0;
on('mark', () => {
  measuring = true;
  fires = 0;
  loopMaxBefore = loop.max / 1e6;
  loop.reset();
  cpu0 = process.cpuUsage();
  markAt = nowMs();
});
on('end', () => {
  measuring = false;
  const cpuUs = cpuSince(cpu0);
  const ms = nowMs() - markAt;
  const loopMaxWindowMs = loop.max / 1e6;
  send({
    type: 'stats',
    cpuUs,
    ms,
    fires,
    leader: scheduler.isLeader,
    heapUsed: heapNow(),
    loopMaxMs: Math.max(loopMaxBefore, loopMaxWindowMs),
    loopMaxWindowMs,
    loopMaxFromStartMs: fromStart.max / 1e6,
  });
});
send({ type: 'ready', registrationMs, declaredMs, heapBaseline, heapAfterStart });
