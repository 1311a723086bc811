// Charts of the console: throughput and depth/latency over the last hour or day (uPlot, vendored:
// no CDN, and no inline style — uPlot sets its sizes through the CSSOM, which the CSP allows), and a
// schedule's recent fires as a small SVG sparkline.
import uPlot from './vendor/uplot.mjs';
import { duration, enc, html, localTime, useApi, useEffect, useRef, useState } from './lib.js';

const COLORS = { processed: '#2f855a', failed: '#c53030', depth: '#2b6cb0', latency: '#b7791f' };
/** The history is read again every this many polls (the overview polls every 3 s; a point is a minute). */
const EVERY_TICKS = 5;

/** A uPlot time chart of `points` (HistoryPoint[]), one line per series `{ key, label, scale }`. */
function TimeChart({ points, series, testid, label }) {
  const box = useRef(null);
  const plot = useRef(null);
  const data = [points.map((p) => p.at), ...series.map((s) => points.map((p) => (p[s.key] === undefined ? null : p[s.key])))];
  useEffect(() => {
    const el = box.current;
    const scales = [...new Set(series.map((s) => s.scale))];
    const opts = {
      width: Math.max(240, el.clientWidth),
      height: 170,
      ms: 1, // epoch ms on the x axis
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: true },
        ...Object.fromEntries(scales.map((k) => [k, { auto: true, range: (u, min, max) => [0, Math.max(k === 'ms' ? 1000 : 1, max)] }])),
      },
      series: [
        {},
        ...series.map((s) => ({
          label: s.label,
          scale: s.scale,
          stroke: COLORS[s.key],
          width: 1.5,
          fill: s.scale === 'n' && !s.sampled ? COLORS[s.key] + '22' : undefined,
          points: { show: s.sampled === true, size: 5 }, // samples may be sparse: a lone one is a dot
          value: (u, v) => (v === null || v === undefined ? '-' : s.scale === 'ms' ? duration(v) : String(v)),
        })),
      ],
      axes: [
        {},
        ...scales.map((k, i) => ({
          scale: k,
          side: i === 0 ? 3 : 1,
          size: k === 'ms' ? 64 : 50,
          grid: { show: i === 0 },
          values: (u, vals) => vals.map((v) => (k === 'ms' ? duration(v) : v)),
        })),
      ],
    };
    plot.current = new uPlot(opts, data, el);
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(240, el.clientWidth), height: 170 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [series.map((s) => s.key).join()]);
  useEffect(() => plot.current?.setData(data), [points]);
  return html`<div class="chart-box" ref=${box} data-testid=${testid} role="img" aria-label=${label}></div>`;
}

const total = (points, key) => points.reduce((n, p) => n + (p[key] ?? 0), 0);
const most = (points, key) => Math.max(0, ...points.map((p) => p[key] ?? 0));

/** Processed/failed and depth/latency of every queue (`queue` unset) or one, over the last hour or day. */
export function HistoryPanel({ queue, tick }) {
  const [win, setWin] = useState('hour');
  const [h, setH] = useState(null);
  const [error, setError] = useState(null);
  const due = Math.floor(tick / EVERY_TICKS);
  const path = queue ? `queues/${enc(queue)}/history?window=${win}` : `history?window=${win}`;
  // the charts of this queue and window only: another's that answers late is not drawn under this title
  useApi(
    path,
    [due],
    (d) => (setH({ path, d }), setError(null)),
    (err) => setError(err.message),
  );
  const points = h?.path === path ? (queue ? h.d.points : h.d.total) : null;
  const span = win === 'hour' ? 'last hour, per minute' : 'last 24 hours, per hour';
  return html`<div class="card history" data-testid=${queue ? 'queue-history' : 'history'}>
    <h3>
      ${queue ? `Queue ${queue}` : 'All queues'} · ${span}
      <span class="toggle">
        ${['hour', 'day'].map(
          (w) =>
            html`<button class=${w === win ? 'link active' : 'link'} data-testid=${'window-' + w} onClick=${() => setWin(w)}>
              ${w === 'hour' ? '1 h' : '24 h'}
            </button>`,
        )}
      </span>
    </h3>
    ${error && html`<p class="notice error">${error}</p>`}
    ${
      points &&
      html`<p class="muted" data-testid="history-summary">
          ${`${total(points, 'processed')} processed · ${total(points, 'failed')} failed · ${total(points, 'lost')} lost · `}
          ${`depth up to ${most(points, 'depth')} · latency up to ${duration(most(points, 'latencyMs'))}`}
        </p>
        <div class="charts">
          <${TimeChart}
            testid="chart-throughput"
            label=${`${span}: ${total(points, 'processed')} processed, ${total(points, 'failed')} failed`}
            points=${points}
            series=${[
              { key: 'processed', label: 'processed', scale: 'n' },
              { key: 'failed', label: 'failed', scale: 'n' },
            ]}
          />
          <${TimeChart}
            testid="chart-depth"
            label=${`${span}: depth up to ${most(points, 'depth')}, latency up to ${duration(most(points, 'latencyMs'))}`}
            points=${points}
            series=${[
              { key: 'depth', label: 'depth', scale: 'n', sampled: true },
              { key: 'latencyMs', label: 'latency', scale: 'ms', sampled: true },
            ]}
          />
        </div>`
    }
  </div>`;
}

const MARK_WORDS = { 'on-time': 'on time', late: 'late', skipped: 'skipped', failed: 'failed' };

/** A schedule's last fires, oldest first: one bar each, coloured by its mark (on time, late, skipped, failed). */
export function Sparkline({ fires }) {
  if (!fires || fires.length === 0) return html`<span class="muted">no fires recorded</span>`;
  const w = 5;
  const counts = fires.reduce((c, f) => ((c[f.mark] = (c[f.mark] ?? 0) + 1), c), {});
  const words = Object.entries(counts)
    .map(([m, n]) => `${n} ${MARK_WORDS[m]}`)
    .join(', ');
  return html`<svg
    class="spark"
    width=${fires.length * (w + 1)}
    height="16"
    role="img"
    aria-label=${`last ${fires.length} fires: ${words}`}
    data-testid="sparkline"
  >
    ${fires.map(
      (f, i) =>
        html`<rect
          class=${'mark-' + f.mark}
          x=${i * (w + 1)}
          y=${f.mark === 'on-time' ? 2 : f.mark === 'skipped' ? 10 : 6}
          width=${w}
          height=${f.mark === 'on-time' ? 14 : f.mark === 'skipped' ? 6 : 10}
        >
          <title>${localTime(f.triggerAt)}: ${MARK_WORDS[f.mark]} (${f.outcome}${f.count > 1 ? ` ×${f.count}` : ''})</title>
        </rect>`,
    )}
  </svg>`;
}

/**
 * The activity (GET api/schedule-activity?<query>) by name of the schedules `query` names — a page
 * query (`label`, `prefix`, `state`, `cursor`, `limit`) or `name=<schedule>` — read again every few
 * polls and when the query changes.
 */
export function useActivity(tick, query) {
  const [byName, setByName] = useState(null);
  const due = Math.floor(tick / EVERY_TICKS);
  useApi(
    query === null ? null : 'schedule-activity?' + query,
    [due],
    (list) => setByName(new Map(list.map((a) => [a.name, a]))),
    () => setByName(null),
  );
  return byName;
}

/** `12 of 12` fired in a window (`≈` when the history read did not reach back to its start). */
function firedOf(w) {
  return `${w.exact ? '' : '≈'}${w.fired} of ${w.expected}`;
}

/** A schedule's recent fires and its fired-vs-expected counts, for a row of the schedules page. */
export function Activity({ a }) {
  if (!a) return html`<span class="muted">…</span>`;
  return html`<div data-testid="activity">
    <${Sparkline} fires=${a.fires} />
    <div class="muted" data-testid="fired-hour">1 h: ${firedOf(a.hour)} · 24 h: ${firedOf(a.day)}</div>
    ${a.silent && html`<div class="warning" data-testid="silent">⚠ ${a.silent.message}</div>`}
  </div>`;
}
