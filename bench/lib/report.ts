// Summaries (median, min–max over rounds; Chronos/BullMQ ratios paired by round), the printed
// tables and the JSON written to bench/results/latest.json.
import { spread, type Spread } from './stats.js';
import type { RowSpec, RunRecord, WorkloadResult } from '../workloads/common.js';

export function metricSpread(w: WorkloadResult, contender: string, metric: string): Spread {
  return spread(w.runs.filter((r) => r.contender === contender).map((r) => r.metrics[metric]));
}

/** a/b per round (paired: the two ran back to back), as median and min–max over rounds. */
export function ratioSpread(w: WorkloadResult, metric: string, a: string, b: string): Spread {
  const rounds = [...new Set(w.runs.map((r) => r.round))];
  const values: number[] = [];
  for (const round of rounds) {
    const x = w.runs.find((r) => r.round === round && r.contender === a)?.metrics[metric];
    const y = w.runs.find((r) => r.round === round && r.contender === b)?.metrics[metric];
    if (x !== undefined && y !== undefined && y !== 0) values.push(x / y);
  }
  return spread(values);
}

function num(v: number, decimals: number): string {
  if (!Number.isFinite(v)) return '—';
  return v.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

function autoDecimals(v: number): number {
  const a = Math.abs(v);
  if (!Number.isFinite(a) || a >= 100) return 0;
  if (a >= 10) return 1;
  return 2;
}

export function showSpread(s: Spread, decimals?: number): string {
  if (s.n === 0) return '—';
  const d = decimals ?? autoDecimals(s.median);
  if (s.n === 1 || s.min === s.max) return num(s.median, d);
  return `${num(s.median, d)} (${num(s.min, d)}–${num(s.max, d)})`;
}

function showRatio(s: Spread): string {
  if (s.n === 0) return '—';
  const d = s.median >= 10 ? 1 : 2;
  if (s.n === 1 || s.min === s.max) return `${num(s.median, d)}×`;
  return `${num(s.median, d)}× (${num(s.min, d)}–${num(s.max, d)})`;
}

function table(headers: string[], rows: string[][], align: ('l' | 'r')[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (align[i] === 'l' ? (c ?? '').padEnd(widths[i]) : (c ?? '').padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The main table: one line per row spec of every workload. */
export function mainTable(results: WorkloadResult[]): string {
  const rows: string[][] = [];
  for (const w of results) {
    if (w.error) {
      rows.push([w.title, 'FAILED', '', '', '', '', '', '']);
      continue;
    }
    for (const r of w.rows) rows.push(mainRow(w, r));
  }
  return table(
    ['Workload', 'Unit', 'Chronos med (min–max)', 'BullMQ med (min–max)', 'Chronos/BullMQ', 'Limit med', 'Chronos/limit'],
    rows,
    ['l', 'l', 'r', 'r', 'r', 'r', 'r'],
  );
}

function mainRow(w: WorkloadResult, r: RowSpec): string[] {
  const a = metricSpread(w, r.a, r.metric);
  const b = r.b ? metricSpread(w, r.b, r.metric) : undefined;
  const l = r.limit ? metricSpread(w, r.limit, r.metric) : undefined;
  return [
    r.label,
    `${r.unit} ${r.higherIsBetter ? '↑' : '↓'}`,
    showSpread(a, r.decimals),
    b ? showSpread(b, r.decimals) : 'n/a',
    b ? showRatio(ratioSpread(w, r.metric, r.a, r.b!)) : 'n/a',
    l ? showSpread(l, r.decimals) : '—',
    l ? showRatio(ratioSpread(w, r.metric, r.a, r.limit!)) : '—',
  ];
}

/** Per-task (or per-fire) costs: Redis commands, Redis CPU, Node CPU, and the commands that make them up. */
export function costTable(results: WorkloadResult[]): string {
  const rows: string[][] = [];
  for (const w of results) {
    if (!w.cost || w.error) continue;
    const per = w.cost.per;
    const suffix = per === 'fire' ? 'PerFire' : 'PerTask';
    for (const c of w.cost.contenders) {
      rows.push([
        w.id,
        c,
        per,
        showSpread(metricSpread(w, c, `cmds${suffix}`), 2),
        showSpread(metricSpread(w, c, `redisUs${suffix}`), 1),
        showSpread(metricSpread(w, c, `nodeUs${suffix}`), 1),
        topCommands(
          w.runs.filter((r) => r.contender === c),
          5,
        ),
      ]);
    }
  }
  return table(['Workload', 'Contender', 'per', 'Redis cmds', 'Redis CPU µs', 'Node CPU µs', 'Top commands per unit (all rounds)'], rows, [
    'l',
    'l',
    'l',
    'r',
    'r',
    'r',
    'l',
  ]);
}

/** The commands that make up the count, per task/fire, over all rounds. */
export function commandsPerUnit(runs: RunRecord[]): Record<string, number> {
  const sum: Record<string, number> = {};
  let units = 0;
  for (const r of runs) {
    if (!r.byCommand || !r.units) continue;
    units += r.units;
    for (const [k, v] of Object.entries(r.byCommand)) sum[k] = (sum[k] ?? 0) + v;
  }
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(sum).sort((x, y) => y[1] - x[1])) out[k] = units ? v / units : NaN;
  return out;
}

function topCommands(runs: RunRecord[], k: number): string {
  return Object.entries(commandsPerUnit(runs))
    .slice(0, k)
    .map(([name, v]) => `${name} ${v >= 0.995 ? num(v, 2) : num(v, 3)}`)
    .join(', ');
}

/** Everything, for bench/results/latest.json. */
export function toJson(meta: Record<string, unknown>, results: WorkloadResult[], targets: unknown[]): unknown {
  return {
    meta,
    workloads: results.map((w) => {
      const metrics = new Set(w.runs.flatMap((r) => Object.keys(r.metrics)));
      const summary: Record<string, Record<string, Spread>> = {};
      for (const c of w.contenders) {
        summary[c] = {};
        for (const m of metrics) {
          const s = metricSpread(w, c, m);
          if (s.n > 0) summary[c][m] = s;
        }
      }
      const ratios: Record<string, Spread> = {};
      for (const r of w.rows) if (r.b) ratios[`${r.metric}:${r.a}/${r.b}`] = ratioSpread(w, r.metric, r.a, r.b);
      const commands: Record<string, Record<string, number>> = {};
      for (const c of w.contenders) {
        const cpu = commandsPerUnit(w.runs.filter((r) => r.contender === c));
        if (Object.keys(cpu).length) commands[c] = cpu;
      }
      return {
        id: w.id,
        title: w.title,
        params: w.params,
        settings: w.settings,
        error: w.error,
        seconds: w.seconds,
        notes: w.notes,
        summary,
        ratios,
        commandsPerUnit: commands,
        runs: w.runs.map(({ round, contender, metrics }) => ({ round, contender, metrics })),
      };
    }),
    targets,
  };
}
