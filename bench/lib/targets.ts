// The targets the bench judges on a run (issues #5, #13, #15, #21, #22, 25): moved out of bench/run.ts, which prints
// them and writes them to the results JSON.
import { metricSpread, ratioSpread } from './report.js';
import type { WorkloadResult } from '../workloads/common.js';
import { schedulesDataTargets } from '../workloads/schedules-data.js';

/** One target of an issue, judged on a run: its value, unit and verdict (undefined: not measured in this run). */
export interface Target {
  id: string;
  text: string;
  workload: string;
  value?: number;
  unit: string;
  met?: boolean;
  detail?: string;
}

/** The targets of issues #5, #13 and #15 (w10), judged on this run. */
export function judge(results: WorkloadResult[], quick: boolean): Target[] {
  const get = (id: string) => results.find((w) => w.id === id && !w.error);
  const out: Target[] = [];
  const add = (t: Target) => out.push(t);
  const atLeast = (id: string, text: string, workload: string, metric: string, min: number) => {
    const w = get(workload);
    if (!w) return add({ id, text, workload, unit: '×' });
    const r = ratioSpread(w, metric, 'chronos', 'bullmq');
    if (r.n === 0) return add({ id, text, workload, unit: '×' });
    const met = r.median >= min;
    add({
      id,
      text,
      workload,
      unit: '×',
      value: r.median,
      met,
      detail: `${r.median.toFixed(2)}× (rounds ${r.min.toFixed(2)}–${r.max.toFixed(2)})${met ? '' : `: missed by ${(min / r.median).toFixed(2)}× (needs ${(min - r.median).toFixed(2)}× more)`}`,
    });
  };
  const atMost = (
    id: string,
    text: string,
    workload: string,
    metric: string,
    max: number,
    unit: string,
    use: 'median' | 'max',
    strict = false,
  ) => {
    const w = get(workload);
    if (!w) return add({ id, text, workload, unit });
    const s = metricSpread(w, 'chronos', metric);
    if (s.n === 0) return add({ id, text, workload, unit });
    const v = s[use];
    const met = strict ? v < max : v <= max;
    const digits = unit === 's' ? 3 : 2;
    add({
      id,
      text,
      workload,
      unit,
      value: v,
      met,
      detail: `${use} ${v.toFixed(digits)} ${unit} (rounds ${s.min.toFixed(digits)}–${s.max.toFixed(digits)})${met ? '' : `: missed by ${(v - max).toFixed(digits)} ${unit} (${(v / max).toFixed(2)}× the bound)`}`,
    });
  };
  atLeast('enqueue-awaited', 'enqueue one at a time, awaited: ≥ 1.5× BullMQ', 'w1', 'rate', 1.5);
  atLeast('enqueue-bulk', 'enqueue in bulk: ≥ 2× BullMQ', 'w2', 'rate', 2);
  atLeast('process-c50', 'process at concurrency 50: ≥ 2× BullMQ', 'w3-c50', 'rate', 2);
  atMost('process-c50-cmds', 'process at concurrency 50: ≤ 6 Redis commands per task', 'w3-c50', 'cmdsPerTask', 6, 'cmd/task', 'median');
  atMost('latency-p99', 'latency at 500/s: p99 ≤ 5 ms', 'w4', 'p99', 5, 'ms', 'median');
  atMost('schedules-cmds', '1,000 schedules every 1 s: ≤ 8 Redis commands per fire', 'w5', 'cmdsPerFire', 8, 'cmd/fire', 'median');
  atMost('schedules-lag', '1,000 schedules every 1 s: fire lag p99 ≤ 20 ms', 'w5', 'lagP99', 20, 'ms', 'median');
  const settings = quick ? 'quick settings' : 'default settings';
  atMost(
    'recovery',
    `worker SIGKILLed with 20 tasks in flight: all done elsewhere ≤ 5 s (${settings})`,
    'w6',
    'recoverySec',
    5,
    's',
    'max',
  );
  atMost('handover-term', 'leader SIGTERM: next trigger enqueued < 0.5 s', 'w7-term', 'handoverSec', 0.5, 's', 'max', true);
  const ttl = quick ? 2 : 5;
  atMost(
    'handover-kill',
    `leader SIGKILL: next trigger enqueued ≤ TTL + 1 s (${ttl + 1} s)`,
    'w7-kill',
    'handoverSec',
    ttl + 1,
    's',
    'max',
  );
  atMost(
    'queues-idle',
    'one worker on 100 idle queues (issue 15): ≤ 60 Redis commands/s, recovery included',
    'w11',
    'idleCmdsQ100',
    60,
    'cmd/s',
    'median',
  );
  atMost('idle-q1', 'one idle worker on 1 queue (issue 22): ≤ 3 Redis commands/s', 'w11', 'idleCmdsQ1', 3, 'cmd/s', 'median');
  atMost('idle-q100', 'one idle worker on 100 queues (issue 22): ≤ 40 Redis commands/s', 'w11', 'idleCmdsQ100', 40, 'cmd/s', 'median');
  atMost(
    'delayed-q1',
    'a delayed task from another process, 1 queue (issue 22): start − due p99 ≤ 10 ms',
    'w11-delayed',
    'lateP99Q1',
    10,
    'ms',
    'median',
  );
  atMost(
    'delayed-q100',
    'a delayed task from another process, 100 queues (issue 22): start − due p99 ≤ 10 ms',
    'w11-delayed',
    'lateP99Q100',
    10,
    'ms',
    'median',
  );
  const atLeastValue = (
    id: string,
    text: string,
    workload: string,
    metric: string,
    min: number,
    unit: string,
    use: 'min' | 'median' = 'min',
  ) => {
    const w = get(workload);
    if (!w) return add({ id, text, workload, unit });
    const s = metricSpread(w, 'chronos', metric);
    if (s.n === 0) return add({ id, text, workload, unit });
    const v = s[use];
    const met = v >= min;
    add({
      id,
      text,
      workload,
      unit,
      value: v,
      met,
      detail: `${use === 'min' ? 'worst round' : 'median'} ${v.toFixed(2)} ${unit} (rounds ${s.min.toFixed(2)}–${s.max.toFixed(2)})${met ? '' : `: missed by ${(min - v).toFixed(2)} ${unit}`}`,
    });
  };
  atLeastValue(
    'limits-nobind',
    'a limit that does not bind (issue 21): ≥ 0.9× the throughput without one at c=50',
    'w12',
    'nobindRatio',
    0.9,
    '×',
    'median',
  );
  atMost('limits-conc-peak', 'concurrency 5 over 3 workers (issue 21): peak exactly 5, never more', 'w12', 'concPeak', 5, 'tasks', 'max');
  atLeastValue('limits-conc-rate', 'concurrency 5, 100 ms tasks (issue 21): ≥ 47.5 tasks/s', 'w12', 'concRate', 47.5, '/s');
  atMost('limits-rate-window', 'rate 100/s over 3 workers (issue 21): no 1 s window over 100', 'w12', 'rateMaxIn1s', 100, 'tasks', 'max');
  atLeastValue('limits-rate-pace', 'rate 100/s while backlogged (issue 21): ≥ 95 per second', 'w12', 'ratePerSec', 95, '/s');
  atMost(
    'limits-fresh-group',
    'a fresh group behind 1,000 backlogged (issue 21): start p99 ≤ 50 ms',
    'w12',
    'freshP99Ms',
    50,
    'ms',
    'median',
  );
  atMost('limits-shares', '1,000 groups (issue 21): every share within 10% of equal', 'w12', 'shareErrPct', 10, '%', 'max');
  atMost('queues-idle-cpu', 'one worker on 100 idle queues (issue 15): Redis CPU ≤ 1%', 'w11', 'idleCpuQ100', 1, '%', 'median');
  atMost('queues-p99', '100 queues (issue 15): enqueue → start p99 ≤ 5 ms', 'w11', 'p99', 5, 'ms', 'median');
  atMost('queues-share', '100 backlogged queues, weights 1:2:3 (issue 15): shares within 5%', 'w11', 'weightedShareErrPct', 5, '%', 'max');
  atMost('queues-share-eq', '100 backlogged queues, equal weights (issue 15): shares within 5%', 'w11', 'equalShareErrPct', 5, '%', 'max');
  atMost(
    'queues-first',
    '100 backlogged queues (issue 15): first turn within queues × batch (5,000) tasks',
    'w11',
    'equalFirstTurnMax',
    5000,
    'task',
    'max',
  );
  for (const id of ['w7-term', 'w7-kill']) {
    const w = get(id);
    if (!w) continue;
    const lost = w.runs.reduce((a, r) => a + r.metrics.lostTriggers, 0);
    const dup = w.runs.reduce((a, r) => a + r.metrics.duplicateTriggers, 0);
    add({
      id: `${id}-once`,
      text: `${id === 'w7-term' ? 'SIGTERM' : 'SIGKILL'} hand-over: every trigger enqueued exactly once`,
      workload: id,
      unit: 'triggers',
      value: lost + dup,
      met: lost + dup === 0,
      detail: `lost ${lost}, duplicated ${dup}`,
    });
  }
  const w9 = get('w9');
  if (w9) {
    const r = ratioSpread(w9, 'pendingB', 'chronos', 'bullmq');
    if (r.n > 0) {
      const met = r.median <= 0.5;
      add({
        id: 'memory-pending',
        text: 'memory (issue 15): Redis used_memory per pending task ≤ 0.5× BullMQ',
        workload: 'w9',
        unit: '×',
        value: r.median,
        met,
        detail: `${r.median.toFixed(2)}× (rounds ${r.min.toFixed(2)}–${r.max.toFixed(2)})${met ? '' : `: missed by ${(r.median / 0.5).toFixed(2)}× the bound`}`,
      });
    }
  }
  const w10 = get('w10');
  if (w10) {
    const n = Number(w10.params.schedules);
    const small = Number(w10.params.small);
    const at = `${n.toLocaleString('en-US')} schedules × 3`;
    atMost('many-schedules-registration', `${at}: boot registration ≤ 1 s`, 'w10', 'registrationMsMax', 1000, 'ms', 'max');
    atMost('many-schedules-slowlog', `${at}: no Redis command or script over 10 ms (SLOWLOG)`, 'w10', 'slowMaxUs', 10_000, 'µs', 'max');
    atMost(
      'many-schedules-inspector',
      `${at}: Inspector.schedules() ≤ 200 ms (warm; cold in the table)`,
      'w10',
      'inspectWarmMs',
      200,
      'ms',
      'median',
    );
    const linear = n / small;
    atMost(
      'many-schedules-idle-cmds',
      `${at}: idle commands/s grow less than linearly (< ${linear}× from ${small})`,
      'w10',
      'idleCmdsGrowth',
      linear,
      '×',
      'median',
      true,
    );
    atMost(
      'many-schedules-idle-cpu',
      `${at}: leader idle CPU grows less than linearly (< ${linear}× from ${small})`,
      'w10',
      'leaderCpuGrowth',
      linear,
      '×',
      'median',
      true,
    );
    atMost('many-schedules-heap', `${at}: leader heap per schedule ≤ 4 KiB`, 'w10', 'leaderHeapPerSchedule', 4096, 'B', 'median');
    atMost('many-schedules-loop', `${at}: no event-loop block over 100 ms (leader)`, 'w10', 'loopMaxMsLeader', 100, 'ms', 'max');
  }
  out.push(...schedulesDataTargets(get('w13')));
  const w8 = get('w8');
  if (w8) {
    const r = ratioSpread(w8, 'cmdsPerTask', 'cluster', 'standalone');
    add({
      id: 'cluster-cmds',
      text: 'cluster (issue #13): commands per task ≤ 1.2× one Redis',
      workload: 'w8',
      unit: '×',
      value: r.median,
      met: r.median <= 1.2,
      detail: `${r.median.toFixed(2)}× (rounds ${r.min.toFixed(2)}–${r.max.toFixed(2)})`,
    });
    const shares = [0, 1, 2].map((i) => metricSpread(w8, 'cluster', `shareNode${i}`).median);
    const met = shares.every((x) => x >= 0.2 && x <= 0.5);
    add({
      id: 'cluster-spread',
      text: "cluster (issue #13): each master takes about a third of one Redis's CPU per task (0.2–0.5)",
      workload: 'w8',
      unit: '×',
      value: Math.max(...shares),
      met,
      detail: `shares ${shares.map((x) => x.toFixed(2)).join(' / ')}`,
    });
  }
  return out;
}
