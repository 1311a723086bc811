import type { FleetHistory, HistoryPoint, HistoryWindow, QueueHistory } from '../../core/admin/inspector.js';
import { UsageError } from '../context.js';
import { duration, table } from '../format.js';

const BARS = '▁▂▃▄▅▆▇█';

/** `--window`: hour or day. @throws UsageError naming the value. */
export function parseWindow(text: string): HistoryWindow {
  if (text === 'hour' || text === 'day') return text;
  throw new UsageError(`--window: expected hour or day, got ${JSON.stringify(text)}`);
}

/** A sparkline of values, one character each (`▁` for 0 … `█` for the largest); ' ' where a value is missing. */
export function sparkline(values: readonly (number | undefined)[]): string {
  const max = Math.max(0, ...values.map((v) => v ?? 0));
  return values.map((v) => (v === undefined ? ' ' : max === 0 ? BARS[0] : BARS[Math.round((v / max) * (BARS.length - 1))])).join('');
}

const pad = (n: number) => String(n).padStart(2, '0');

function label(at: number, stepMs: number): string {
  const d = new Date(at);
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return stepMs >= 3_600_000 ? `${d.getMonth() + 1}/${d.getDate()} ${hm}` : hm;
}

function sum(points: readonly HistoryPoint[], f: 'processed' | 'failed' | 'lost'): number {
  return points.reduce((n, p) => n + p[f], 0);
}

/** One line per queue (or the queue's points as a table) for `chronos stats --history`. */
export function historyText(h: FleetHistory | QueueHistory): string {
  const unit = h.stepMs >= 3_600_000 ? 'hour' : 'minute';
  const span = h.window === 'day' ? 'last 24 hours' : 'last 60 minutes';
  const points = 'total' in h ? h.total : h.points;
  const rows = points.map((p) => [
    label(p.at, h.stepMs),
    p.processed,
    p.failed,
    p.lost,
    p.depth ?? '-',
    p.latencyMs === undefined ? '-' : duration(p.latencyMs),
  ]);
  const lines = [
    `${'total' in h ? 'All queues' : `Queue ${h.queue}`} · per ${unit}, ${span} (local time; depth and latency: ${unit === 'hour' ? 'the largest sample of the hour' : "the minute's sample"})`,
    table(['at', 'processed', 'failed', 'lost', 'depth', 'latency'], rows),
  ];
  if ('queues' in h && h.queues.length > 0) {
    lines.push(
      table(
        ['queue', 'processed', 'failed', `processed per ${unit}`, `failed per ${unit}`],
        h.queues.map((q) => [
          q.queue,
          sum(q.points, 'processed'),
          sum(q.points, 'failed'),
          sparkline(q.points.map((p) => p.processed)),
          sparkline(q.points.map((p) => p.failed)),
        ]),
      ),
    );
  }
  return lines.join('\n');
}
