import cronstrue from 'cronstrue';
import { DESCRIPTORS } from '../core/scheduler/spec-cron.js';

/**
 * A schedule's spec in words, with its zone: `'0 3 * * *'` in Europe/Budapest is
 * "At 03:00, every day, Europe/Budapest"; `'@every 90s'` is "Every 90s". Cron text comes from
 * cronstrue (24-hour clock); an expression it cannot read is returned as it is. An every-spec's
 * `offsetMs` (ms; it moves every trigger and is not in the expression) is said too: "Every 30s, offset 15000 ms".
 */
export function describeSpec(expression: string, timeZone: string, offsetMs?: number): string {
  const text = expression.trim();
  const every = /^@every\s+(.+)$/i.exec(text);
  if (every) return `Every ${every[1].trim()}${offsetMs ? `, offset ${offsetMs} ms` : ''}`;
  const cron = text.startsWith('@') ? DESCRIPTORS[text.slice(1).toLowerCase()] : text;
  if (cron === undefined) return text;
  let words: string;
  try {
    words = cronstrue.toString(cron, { use24HourTimeFormat: true, throwExceptionOnParseError: true, verbose: false });
  } catch {
    return text;
  }
  // cronstrue says "At 03:00" for a daily time; say that it is every day
  if (/^At \d\d:\d\d(, \d\d:\d\d)*$/.test(words)) words += ', every day';
  return `${words}, ${timeZone}`;
}
