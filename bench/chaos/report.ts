// The printed result of a chaos run: the faults injected and the outcomes, one table each.
import { percentile, sortedCopy } from '../lib/stats.js';
import { table } from '../lib/report.js';
import { FLEET } from './common.js';
import { EARLY_TOLERANCE_MS, type Outcome, type RunLog } from './analyze.js';

const n0 = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—');
const n1 = (v: number) => (Number.isFinite(v) ? v.toLocaleString('en-US', { maximumFractionDigits: 1, minimumFractionDigits: 1 }) : '—');

const range = (lo: number, hi: number) => (n1(lo) === n1(hi) ? n1(lo) : `${n1(lo)}–${n1(hi)}`);

function causes(c: Record<string, number>): string {
  return (
    `SIGSTOP > visibility timeout ${c.sigstop}, ack lost to a Redis outage ${c.outage} (these two documented, not failures), ` +
    `SIGKILL before ack ${c.sigkill}, clock step ${c.clockstep}, partition ${c.partition}, ` +
    `Redis restart ${c.redis}, other ${c.other}`
  );
}

function spread(values: number[]): string {
  const s = sortedCopy(values);
  if (!s.length) return '—';
  return `${n0(s[0])} / ${n0(percentile(s, 50))} / ${n0(s[s.length - 1])}`;
}

/** The tables of a run, ready to print. */
export function render(log: RunLog, o: Outcome, head: { seed: number; seconds: number }): string {
  const out: string[] = [];
  const rel = (t: number) => `+${n1((t - log.window.start) / 1000)} s`;
  out.push(
    `Chronos chaos run — seed ${head.seed}, ${head.seconds} s steady window, ${FLEET.replicas} replicas (Scheduler + ChronosServer), ` +
      `leaderTtl ${FLEET.leaderTtlMs} ms, visibility timeout ${FLEET.visibilityTimeoutMs} ms, ${FLEET.tasksPerSecond} tasks/s`,
  );
  out.push('');

  const longStops = log.faults.filter((f) => f.kind === 'sigstop' && (f.contAt ?? 0) - f.at > FLEET.visibilityTimeoutMs).length;
  const row = (kind: string, label: string, extra = '') => {
    const fs = log.faults.filter((f) => f.kind === kind);
    return [label, String(fs.length), String(fs.filter((f) => f.wasLeader).length), extra];
  };
  const terms = log.faults.filter((f) => f.kind === 'sigterm');
  const unclean = terms.filter((f) => f.hung || f.exitCode !== 0).length;
  const steps = log.faults.filter((f) => f.kind === 'clockstep');
  const faultRows = [
    row('sigkill', 'SIGKILL + restart'),
    row('sigstop', 'SIGSTOP 3–8 s, SIGCONT', `${longStops} longer than the visibility timeout`),
    row('sigterm', 'SIGTERM + restart', unclean ? `${unclean} did not exit 0 within 15 s` : 'all exited 0'),
    row(
      'clockstep',
      'wall clock ±1 h for 3–8 s',
      `${steps.filter((f) => (f.stepMs ?? 0) > 0).length} ahead, ${steps.filter((f) => (f.stepMs ?? 0) < 0).length} behind`,
    ),
    row('partition', 'silent partition 2.5–4.5 s', 'its Redis connection blackholed by its proxy, then healed'),
    [
      'Redis restart (AOF)',
      String(log.restarts.length),
      '',
      log.restarts.map((r) => `${r.how.toUpperCase()} at ${rel(r.at)}, down ${n1((r.upAt - r.downAt) / 1000)} s`).join('; '),
    ],
  ];
  out.push(table(['Fault', 'n', 'on leader', 'notes'], faultRows, ['l', 'r', 'r', 'l']));
  out.push('');

  const t = o.triggers;
  const k = o.tasks;
  const e = o.early;
  const exempt = log.aofLossMs > 0 ? ` (+${t.exempt} exempt: AOF loss window)` : '';
  const rows: string[][] = [
    ['triggers expected', n0(t.expected), 'every instant of the 6 schedules in the steady window'],
    ['  once', n0(t.once), `${o.rerunTriggers} re-run after a crash (one run finished)`],
    ['  missing', n0(t.missing) + exempt, t.missingIds.slice(0, 4).join(', ')],
    ['  duplicated', n0(t.duplicated), `${causes(o.dupTriggerCauses)}; enqueued twice: ${o.firedTwice}`],
    [
      '  early',
      n0(e.starts),
      e.starts
        ? `starts of ${e.triggers} trigger(s), ${range(e.minMs, e.maxMs)} ms early; within 10 s after a Redis restart ${e.near.redis}, ` +
          `the process's start ${e.near.start}, its SIGCONT ${e.near.sigcont}, its clock step ${e.near.clockstep}, ` +
          `its partition ${e.near.partition}; other ${e.near.other}`
        : `by Redis time, tolerance ${EARLY_TOLERANCE_MS} ms` + (e.unmeasured ? `; ${e.unmeasured} starts without a clock estimate` : ''),
    ],
    ['  start lag ms', spread(o.lagMs), 'first start by Redis time − instant: min / median / max'],
    ['tasks enqueued', n0(k.enqueued), `acknowledged; ${k.enqueueFailed} enqueue(s) rejected`],
    ['  done', n0(k.done), `${k.rerun} re-run after a crash (one run finished)`],
    ['  lost', n0(k.lost) + (log.aofLossMs > 0 ? ` (+${k.exempt} exempt: AOF loss window)` : ''), o.lostIds.slice(0, 3).join(', ')],
    ['  duplicated', n0(k.duplicated), causes(o.dupTaskCauses)],
    ['  ran, enqueue not acked', n0(k.unrecorded), 'the enqueue rejected (or was resent) but the task ran'],
    [
      'limited queue: peak running',
      `${o.limits.peak} / ${o.limits.groupPeak}`,
      `of its tasks / of one group, over ${n0(o.limits.starts)} starts (limits: concurrency ${FLEET.limits.concurrency}, ` +
        `groupConcurrency ${FLEET.limits.groupConcurrency}); over a limit: ${o.limits.over.length ? o.limits.over.join('; ') : 'never'}`,
    ],
    ...runtimeRows(o),
    ['crashes', String(log.crashes.length), log.crashes.map((c) => `${c.name} code=${c.code} signal=${c.signal}`).join('; ')],
    [
      `log floods (> ${log.floodLinesPerSecond} lines/s)`,
      String(o.floods.reduce((a, f) => a + f.seconds, 0)),
      `process-seconds; busiest ${o.maxLinesPerSecond.name} with ${o.maxLinesPerSecond.n} lines in one second`,
    ],
  ];
  for (const kind of ['sigkill', 'sigterm', 'sigstop', 'partition']) {
    const hs = o.handovers.filter((h) => h.kind === kind);
    const got = hs.filter((h) => h.ms !== null).map((h) => h.ms!);
    const none = hs.length - got.length;
    const detail = `${spread(got)} (min / median / max)` + (none ? `; ${none} without a new leader` : '');
    rows.push([`hand-over ms, ${kind.toUpperCase()}`, String(hs.length), detail]);
  }
  out.push(table(['Outcome', 'n', 'detail'], rows, ['l', 'r', 'l']));
  for (const f of o.floods.slice(0, 5)) {
    out.push(`  flood: ${f.name} ${f.seconds} s over, max ${f.maxPerSecond}/s, ${f.lines} lines; top: ${f.top}`);
  }
  for (const s of e.samples) out.push(`  early: ${s}`);
  for (const c of log.crashes.slice(0, 3)) out.push(`  crash: ${c.name} at ${rel(c.at)}:\n${c.tail.replace(/^/gm, '    ')}`);
  out.push('');
  out.push(rule(log));
  out.push(
    o.failures.length
      ? `FAIL: ${o.failures.join(', ')}`
      : 'PASS: no trigger missing, duplicated or early; no task lost; the limited queue never over its limits' +
          (o.runtime ? '; no runtime-schedule trigger missing, duplicated, unexpected or over maxRuns' : ''),
  );
  return out.join('\n');
}

/** The rows of the runtime schedules (runtime.ts), none when the run had none. */
function runtimeRows(o: Outcome): string[][] {
  const r = o.runtime;
  if (!r) return [];
  const c = r.counts;
  const u = r.unexpected;
  const unexpected = u.afterRemoval + u.oldSpec + u.overMaxRuns + u.outOfBounds + u.other;
  return [
    [
      'runtime schedules',
      n0(c.schedules),
      `bulk API: ${c.jittered} jittered, ${c.maxRuns} with maxRuns, ${c.endAt} with endAt; upserts: ${c.specChanges} spec and ` +
        `${c.payloadChanges} payload changes; ${c.removed} removed`,
    ],
    [
      '  triggers expected',
      n0(r.expected),
      `${n0(r.starts)} starts (${n0(r.jitteredStarts)} jittered); ${n0(r.optionalRan)} optional ones ran (around a change or removal)`,
    ],
    ['  once', n0(r.once), ''],
    ['  missing', n0(r.missing), r.missingIds.slice(0, 4).join(', ')],
    ['  duplicated', n0(r.duplicated), `${r.duplicated ? causes(r.dupCauses) + '; ' : ''}enqueued twice: ${r.firedTwice}`],
    [
      '  should not have fired',
      n0(unexpected),
      `after removal ${u.afterRemoval}, old spec ${u.oldSpec}, over maxRuns ${u.overMaxRuns} (schedules over: ${r.overMaxRuns}), ` +
        `outside startAt/endAt ${u.outOfBounds}, other ${u.other}` +
        (r.unexpectedIds.length ? `: ${r.unexpectedIds.slice(0, 3).join(', ')}` : ''),
    ],
    ['  stale payload', n0(r.stalePayload), 'starts more than 1 s after a change carrying the payload before it'],
  ];
}

/** The rule about Redis restarts and the AOF, as the run applied it. */
export function rule(log: RunLog): string {
  if (log.aofLossMs === 0) {
    return (
      'Rule: Redis is stopped with SHUTDOWN / SIGTERM, which fsync the AOF before exiting, so no write Redis acknowledged may be lost: ' +
      'no trigger or task is exempt. Triggers due while Redis is down are expected (late, caught up); early is judged by Redis time, ' +
      'always.'
    );
  }
  return (
    `Rule: a SIGKILL of Redis may lose the last writes (appendfsync everysec: up to ~${log.aofLossMs / 1000} s). A trigger whose instant ` +
    `falls in [kill − ${log.aofLossMs} ms, kill + 1 s] (enqueued up to 1 s ahead), and a task whose acknowledged enqueue (or first ` +
    `finished run) falls in [kill − ${log.aofLossMs} ms, kill], are exempt from missing / duplicated / lost and counted apart. ` +
    'Everything else counts, and early starts always.'
  );
}
