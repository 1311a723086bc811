// docs/grafana/chronos.json queries only metrics Chronos exports: every PromQL expression of its
// panels and template variables is parsed for metric names (and the label names of its selectors),
// checked against the metrics ChronosMetrics registers (read from a registry, not a list kept here).
// The README's metric table is checked against the same registry (every metric, its type and labels).
import { readFileSync } from 'node:fs';
import * as prom from 'prom-client';
import { ChronosMetrics, type Inspector } from '../../lib/core/index.js';

interface Exported {
  type: 'counter' | 'gauge' | 'histogram' | 'summary';
  labels: readonly string[];
}
interface Panel {
  type: string;
  title?: string;
  id?: number;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

const dashboard = JSON.parse(readFileSync(new URL('../../docs/grafana/chronos.json', import.meta.url), 'utf8')) as {
  panels: Panel[];
  templating: { list: { name: string; query?: unknown }[] };
};

/** The metrics ChronosMetrics registers, fleet gauges included (an Inspector is needed only when scraped). */
function exportedMetrics(): Map<string, Exported> {
  const registry = new prom.Registry();
  const metrics = new ChronosMetrics({ registry, inspector: {} as Inspector });
  const out = new Map<string, Exported>();
  for (const m of registry.getMetricsAsArray() as unknown as { name: string; labelNames: string[] }[]) {
    const type =
      m instanceof prom.Histogram ? 'histogram' : m instanceof prom.Counter ? 'counter' : m instanceof prom.Gauge ? 'gauge' : 'summary';
    out.set(m.name, { type, labels: m.labelNames });
  }
  metrics.close();
  return out;
}

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);
// labels every series gets from the scrape, and the renamed engine label (README: honor_labels)
const SCRAPE_LABELS = ['instance', 'job', 'exported_instance'];

/** The metric selectors of a PromQL expression: `{ name, labels }` (label names of its matchers). */
function selectorsOf(expr: string): { name: string; labels: string[] }[] {
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // string literals (label values, regexes)
    .replace(/\[[^\]]*\]/g, '') // range and subquery selectors
    .replace(/\$\{?\w+\}?/g, '') // Grafana variables ($__rate_interval)
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ''); // grouping label lists
  const found: { name: string; labels: string[] }[] = [];
  const ident = /([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\(|\{[^}]*\})?/g;
  for (let m = ident.exec(text); m; m = ident.exec(text)) {
    const [, name, after] = m;
    if (after === '(' || KEYWORDS.has(name.toLowerCase())) continue; // a function or an operator
    if (/^\d/.test(text.slice(m.index - 1, m.index))) continue; // the exponent of a number such as 1e-9
    const labels = after ? [...after.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!=|!~|=)/g)].map((l) => l[1]) : [];
    found.push({ name, labels });
  }
  return found;
}

/** The exported metric a series name belongs to (`x_bucket`/`_sum`/`_count` of histogram `x`), or undefined. */
function metricOf(series: string, exported: Map<string, Exported>): { name: string; metric: Exported; bucket: boolean } | undefined {
  const direct = exported.get(series);
  if (direct && direct.type !== 'histogram') return { name: series, metric: direct, bucket: false };
  const m = /^(.*)_(bucket|sum|count)$/.exec(series);
  const base = m ? exported.get(m[1]) : undefined;
  if (m && base?.type === 'histogram') return { name: m[1], metric: base, bucket: m[2] === 'bucket' };
  return undefined;
}

function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

const exprs: { where: string; expr: string }[] = [
  ...allPanels(dashboard.panels).flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr ?? '' }))),
  ...dashboard.templating.list
    .filter((v) => typeof v.query === 'object' || (typeof v.query === 'string' && v.query.includes('(')))
    .map((v) => {
      const q = typeof v.query === 'object' ? (v.query as { query: string }).query : String(v.query);
      const lv = /^label_values\(\s*(.+?)\s*,\s*(\w+)\s*\)$/.exec(q); // Grafana's own function: (selector, label)
      return { where: `variable $${v.name}`, expr: lv ? `${lv[1]}{${lv[2]}=""}` : q };
    }),
];

test('the parser finds metric names, not functions, keywords, labels or numbers', () => {
  const expr =
    'histogram_quantile(0.95, sum by (queue, le) (rate(a_bucket{queue=~"$queue", x="or"}[$__rate_interval]))) / clamp_min(b_total, 1e-9) and on (job) time() - c';
  expect(selectorsOf(expr)).toEqual([
    { name: 'a_bucket', labels: ['queue', 'x'] },
    { name: 'b_total', labels: [] },
    { name: 'c', labels: [] },
  ]);
});

test('the dashboard has panels for throughput, failures, depth, latency, schedules, leader and workers', () => {
  const titles = allPanels(dashboard.panels).map((p) => p.title ?? '');
  for (const word of ['Throughput', 'Failures', 'Queue depth', 'latency', 'fired', 'skipped', 'Missed', 'Leader', 'process'])
    expect(titles.some((t) => t.includes(word))).toBe(true);
  const ids = allPanels(dashboard.panels).map((p) => p.id);
  expect(new Set(ids).size).toBe(ids.length);
});

test('every metric the dashboard queries is one Chronos exports, with labels it has', () => {
  const exported = exportedMetrics();
  expect(exported.size).toBeGreaterThan(10); // the registry was read (fleet gauges included)
  const problems: string[] = [];
  const used = new Set<string>();
  expect(exprs.length).toBeGreaterThan(20);
  for (const { where, expr } of exprs) {
    const selectors = selectorsOf(expr);
    if (selectors.length === 0) problems.push(`${where}: no metric in ${expr}`);
    for (const s of selectors) {
      const found = metricOf(s.name, exported);
      if (!found) {
        problems.push(`${where}: ${s.name} is not a Chronos metric (${expr})`);
        continue;
      }
      used.add(found.name);
      const allowed = [...found.metric.labels, ...SCRAPE_LABELS, ...(found.bucket ? ['le'] : [])];
      for (const l of s.labels) if (!allowed.includes(l)) problems.push(`${where}: ${s.name} has no label ${l}`);
    }
  }
  expect(problems).toEqual([]);
  // and the dashboard shows every metric Chronos exports
  expect([...exported.keys()].filter((n) => !used.has(n))).toEqual([]);
});

test('a metric name the dashboard could misspell is caught', () => {
  const exported = exportedMetrics();
  expect(metricOf('chronos_task_duration_seconds_bucket', exported)?.name).toBe('chronos_task_duration_seconds');
  expect(metricOf('chronos_task_duration_seconds', exported)).toBeUndefined(); // a histogram has no bare series
  expect(metricOf('chronos_tasks_processed', exported)).toBeUndefined(); // the counter is named with _total
  expect(metricOf('chronos_queue_tasks_bucket', exported)).toBeUndefined(); // a gauge has no buckets
});

test('every metric docs/prometheus-alerts.yml queries is one Chronos exports, with labels it has (the silent-schedule rules included)', () => {
  const exported = exportedMetrics();
  const yml = readFileSync(new URL('../../docs/prometheus-alerts.yml', import.meta.url), 'utf8');
  // each rule's expr: a one-line `expr: …` or an indented `expr: |` block
  const rules = [...yml.matchAll(/- alert: (\w+)\n\s+expr: (\|\n((?:\s{10,}.*\n)+)|(.*)\n)/g)].map((m) => ({
    alert: m[1],
    expr: (m[3] ?? m[4]).trim(),
  }));
  expect(rules.map((r) => r.alert)).toEqual(
    expect.arrayContaining(['ChronosScheduleSilent', 'ChronosScheduleMissedTriggers', 'ChronosNoLeader']),
  );
  const problems: string[] = [];
  for (const { alert, expr } of rules) {
    for (const s of selectorsOf(expr)) {
      const found = metricOf(s.name, exported);
      if (!found) problems.push(`${alert}: ${s.name} is not a Chronos metric`);
      else
        for (const l of s.labels)
          if (![...found.metric.labels, ...SCRAPE_LABELS].includes(l)) problems.push(`${alert}: ${s.name} has no label ${l}`);
    }
    // the labels a rule groups by are ones its metrics have
    for (const m of expr.matchAll(/by \(([^)]*)\)/g))
      for (const l of m[1].split(',').map((x) => x.trim()))
        if (!selectorsOf(expr).some((s) => metricOf(s.name, exported)?.metric.labels.includes(l)))
          problems.push(`${alert}: no metric has label ${l}`);
  }
  expect(problems).toEqual([]);
});

test("the README's metric table lists every metric Chronos exports, with its type and labels", () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Monitoring'), readme.indexOf('## Redis layout'));
  const rows = new Map<string, { type: string; labels: string[] }>();
  for (const m of section.matchAll(/^\| `(chronos_[a-z_]+)` \| (\w+) \|([^|]*)\|/gm)) {
    rows.set(m[1], { type: m[2], labels: [...m[3].matchAll(/`(\w+)`/g)].map((l) => l[1]).sort() });
  }
  const documented = [...exportedMetrics().keys()].map((name) => [name, rows.get(name) ?? 'missing from the table']);
  const expected = [...exportedMetrics()].map(([name, e]) => [name, { type: e.type, labels: [...e.labels].sort() }]);
  expect(documented).toEqual(expected);
});

test('no panel adds up outcomes of chronos_tasks_processed_total that count one attempt twice', () => {
  // a failed attempt counts as `failed` and again as `retried` or `dead`: a sum over those outcomes
  // (or over all of them) counts it twice, unless the outcomes stay apart (`by (…, outcome)`)
  const problems: string[] = [];
  for (const { where, expr } of exprs) {
    for (const m of expr.matchAll(/chronos_tasks_processed_total(\{[^}]*\})?/g)) {
      const outcome = /outcome\s*(=~|=)\s*"([^"]*)"/.exec(m[1] ?? '');
      const admitted = outcome ? outcome[2].split('|') : ['failed', 'retried', 'dead'];
      const twice = admitted.includes('failed') && (admitted.includes('retried') || admitted.includes('dead'));
      if (twice && !/by\s*\([^)]*\boutcome\b/.test(expr)) problems.push(`${where}: ${expr}`);
    }
  }
  expect(problems).toEqual([]);
});

test('every outcome of chronos_triggers_total is on a panel (fired or skipped)', async () => {
  const { TRIGGER_OUTCOMES } = await import('../../lib/core/internal.js');
  const shown = new Set<string>();
  for (const { expr } of exprs)
    for (const m of expr.matchAll(/chronos_triggers_total\{[^}]*outcome\s*=~?\s*"([^"]*)"/g))
      for (const o of TRIGGER_OUTCOMES) if (new RegExp(`^(?:${m[1]})$`).test(o)) shown.add(o);
  expect(TRIGGER_OUTCOMES.filter((o) => !shown.has(o))).toEqual([]);
});
