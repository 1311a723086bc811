// Workload 13, the leader of "schedules as data" (issue 25): one Scheduler (defaults, eligible, no declarations)
// over a namespace that already holds the runtime schedules, plus SENTINEL (bench/lib/schedules-data.ts), whose one
// fire follows the table's load. Run with --expose-gc: heap = heapUsed after gc, minus the baseline before the
// Scheduler was made. With `instant`: the fires of that trigger instant (the burst), first and last.
// Config: { url, prefix, instant?, expect? }.
// IPC: → ready (started) ; → loaded { heapDelta, t } at the sentinel's fire ; → burst { fires, first, last, lost (leader.lost events so far) } once
//      `expect` fires of `instant` are in ; ← mark (idle window) ; ← end → stats { cpuUs, ms, fires, heapDelta }.
import { childConfig, on, onExit, send } from '../lib/ipc.js';
import { SENTINEL } from '../lib/schedules-data.js';
import { cpuSince, nowMs } from '../lib/time.js';

interface Config {
  url: string;
  prefix: string;
  instant?: number;
  expect?: number;
}

const cfg = childConfig<Config>();
const gc = (globalThis as { gc?: () => void }).gc;
const heapNow = () => {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
};
const { Scheduler, EventBus } = await import('../../lib/core/index.js');
const quiet = { log() {}, warn() {}, error() {} };
const baseline = heapNow();
const events = new EventBus();
const scheduler = new Scheduler({ connection: cfg.url, namespace: cfg.prefix, events, logger: quiet });
let fires = 0;
let burstFires = 0;
let first = NaN;
let last = NaN;
let lost = 0;
events.subscribe((e) => {
  if (e.type === 'leader.lost') lost++;
  if (e.type !== 'schedule.fired') return;
  fires++;
  if (e.schedule === SENTINEL.name) {
    const t = nowMs();
    send({ type: 'loaded', heapDelta: heapNow() - baseline, t });
  } else if (cfg.instant !== undefined && e.triggerAt === cfg.instant) {
    const t = nowMs();
    if (burstFires++ === 0) first = t;
    last = t;
    if (burstFires === cfg.expect) send({ type: 'burst', fires: burstFires, first, last, lost });
  }
});
await scheduler.start();
await scheduler.addSchedule(SENTINEL);
onExit(() => Promise.race([scheduler.stop(), new Promise((r) => setTimeout(r, 3000))]));
let cpu0 = process.cpuUsage();
let markAt = nowMs();
on('mark', () => {
  fires = 0;
  cpu0 = process.cpuUsage();
  markAt = nowMs();
});
on('end', () => {
  const cpuUs = cpuSince(cpu0);
  send({ type: 'stats', cpuUs, ms: nowMs() - markAt, fires, heapDelta: heapNow() - baseline, leader: scheduler.isLeader, burstFires });
});
send({ type: 'ready' });
