import Table from 'cli-table3';
import stringWidth from 'string-width';

/** No line between body rows: one row per line. */
const COMPACT = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };

/** A control character other than the line feed: C0, DEL and C1 (U+009B is a terminal's CSI too). */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;

/**
 * `text` with every control character but the line feed shown as its `\uXXXX` escape (`\u001b[31m`,
 * `\u000d`): what the CLI prints comes from Redis — a pause note, an actor, a task's error, payload or
 * type, a label — and anyone who could write it (a console operator, a task's producer or handler)
 * could otherwise drive the terminal of whoever reads it: recolour or hide text, move the cursor up
 * over earlier lines of `chronos audit` and write other ones, set its title or clipboard (trial 31).
 */
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The display width of one line of a cell, in terminal columns (wide CJK and emoji count 2), as cli-table3 measures it. */
const widthOf = (line: string): number => (/^[\x20-\x7e]*$/.test(line) ? line.length : stringWidth(line));

/**
 * A table of rows, drawn as cli-table3 draws it with no colours and no line between body rows
 * (`┌─┬─┐`, `│ a │ b │`, `└─┴─┘`; a cell with `\n` spans lines), so the output is the same on a
 * terminal and in a file. Linear in the number of cells: cli-table3's layout looks for row-span
 * gaps by scanning every earlier row for every cell (`fillInTable` → `conflictExists`), quadratic
 * in the rows (20,000 schedules took 70 s), so listings of any size are drawn here instead.
 */
export function table(head: string[], rows: (string | number)[][]): string {
  const all = [head, ...rows].map((r) => r.map((c) => printable(String(c)).split('\n')));
  const widths: number[] = [];
  for (const r of all) r.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, ...cell.map(widthOf))));
  const rule = (l: string, m: string, r: string) => l + widths.map((w) => '─'.repeat(w + 2)).join(m) + r;
  const out = [rule('┌', '┬', '┐')];
  for (const r of all) {
    if (r.length === 0) continue;
    const height = Math.max(...r.map((c) => c.length));
    for (let line = 0; line < height; line++) {
      const cells = widths.map((w, i) => {
        const text = r[i]?.[line] ?? '';
        return ` ${text}${' '.repeat(w - widthOf(text))} `;
      });
      out.push(`│${cells.join('│')}│`);
    }
  }
  out.push(rule('└', '┴', '┘'));
  return out.join('\n');
}

/** A two-column key/value table (fields with an undefined value are left out). */
export function fields(entries: [string, string | number | undefined][]): string {
  const t = new Table({ chars: COMPACT, style: { head: [], border: [] } });
  for (const [k, v] of entries) if (v !== undefined) t.push({ [k]: printable(String(v)) });
  return t.toString();
}

const pad = (n: number) => String(n).padStart(2, '0');

/** A duration, short: `850ms`, `12s`, `4m 10s`, `3h 5m`, `2d 4h`. */
export function duration(ms: number): string {
  const a = Math.abs(ms);
  if (a < 1000) return `${Math.round(a)}ms`;
  const s = Math.floor(a / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? ` ${s % 60}s` : ''}`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 ? ` ${m % 60}m` : ''}`;
  return `${Math.floor(h / 24)}d${h % 24 ? ` ${h % 24}h` : ''}`;
}

/** How long ago or ahead an instant is: `3m ago`, `in 12s`, `now`. */
export function relative(at: number, now = Date.now()): string {
  const d = at - now;
  if (Math.abs(d) < 1000) return 'now';
  return d < 0 ? `${duration(d)} ago` : `in ${duration(d)}`;
}

/** An instant in local time with its relative age: `11:20:03 (3m ago)` today, `2026-11-30 03:00 (1d 8h ago)` otherwise. */
export function when(at: number | undefined, now = Date.now()): string {
  if (at === undefined || !Number.isFinite(at)) return '-';
  const d = new Date(at);
  const today = new Date(now);
  const sameDay = d.getFullYear() === today.getFullYear() && d.getMonth() === today.getMonth() && d.getDate() === today.getDate();
  const clock = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const text = sameDay ? clock : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clock.slice(0, 5)}`;
  return `${text} (${relative(at, now)})`;
}

/**
 * The IANA zone the CLI shows instants in (`when`): the zone of the machine it runs on, or `TZ`.
 * Named in the headers of the schedule tables, beside the schedules' own zones.
 */
export function displayZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

const zoneFormats = new Map<string, Intl.DateTimeFormat | undefined>();

/** `YYYY-MM-DD HH:MM` of `at` in `zone`, or undefined for a zone this Node.js does not know. */
function wallClock(at: number, zone: string): string | undefined {
  if (!zoneFormats.has(zone)) {
    let format: Intl.DateTimeFormat | undefined;
    try {
      const parts = { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' } as const;
      format = new Intl.DateTimeFormat('en-CA', { timeZone: zone, hourCycle: 'h23', ...parts });
    } catch {
      format = undefined; // a RangeError: not a zone of this ICU
    }
    zoneFormats.set(zone, format);
  }
  const format = zoneFormats.get(zone);
  if (!format) return undefined;
  const v = Object.fromEntries(format.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
  return `${v.year}-${v.month}-${v.day} ${v.hour}:${v.minute}`;
}

/**
 * The wall time of `at` in a schedule's `zone` — `08:00 Europe/Paris`, with its date when that is
 * not the date shown in the display zone (`2026-12-09 08:00 Asia/Tokyo`) — or undefined when it reads
 * as {@link when} shows it (the same zone, or one with the same offset then). The CLI shows instants
 * in the machine's zone, so a `0 8 * * *` schedule in Europe/Paris is listed at 07:00 on a UTC host:
 * this says it is the schedule's 08:00.
 */
export function zoneTime(at: number | undefined, zone: string): string | undefined {
  if (at === undefined || !Number.isFinite(at)) return undefined;
  const there = wallClock(at, zone);
  const d = new Date(at);
  const here = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (there === undefined || there === here) return undefined;
  return `${there.slice(0, 10) === here.slice(0, 10) ? there.slice(11) : there} ${zone}`;
}

/**
 * A schedule's last fire (its trigger instant): as {@link when}, but a trigger enqueued ahead of its
 * instant (a moment after now) is `11:20:05 (due in 2s, enqueued)`, never a last fire "in 2s"; the
 * console's `fired` (static/lib.js) says the same.
 */
export function firedWhen(at: number | undefined, now = Date.now()): string {
  if (at === undefined || !Number.isFinite(at) || at - now < 1000) return when(at, now);
  return when(at, now).replace(/\(in ([^)]*)\)$/, '(due in $1, enqueued)');
}

/** Bytes, short: `512 B`, `1.2 KB`, `34.5 MB`. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/** A value as compact JSON, cut at `max` characters. */
export function short(value: unknown, max = 40): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

/** The first line of a text, cut at `max` characters. */
export function firstLine(text: string | undefined, max = 60): string {
  if (!text) return '-';
  return short(text.split('\n', 1)[0], max);
}
