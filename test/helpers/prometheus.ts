// A tiny parser of the Prometheus text exposition format (what prom-client's `registry.metrics()`
// writes), enough to assert on samples: `name{label="value",…} value`. Comments are skipped.

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Every sample of a text exposition. @throws Error naming a line it cannot read. */
export function parsePrometheus(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const v = m[3];
    out.push({ name: m[1], labels, value: v === '+Inf' ? Infinity : v === '-Inf' ? -Infinity : Number(v) });
  }
  return out;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function sumOf(samples: PromSample[], name: string, labels: Record<string, string> = {}): number {
  return matching(samples, name, labels).reduce((s, x) => s + x.value, 0);
}

/** The samples named `name` whose labels include `labels`. */
export function matching(samples: PromSample[], name: string, labels: Record<string, string> = {}): PromSample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** GETs `url` and parses it. @throws when the answer is not 200 text. */
export async function scrape(url: string): Promise<PromSample[]> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${await res.text()}`);
  return parsePrometheus(await res.text());
}
