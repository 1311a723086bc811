/**
 * Partial matching of payloads and the readable diff of `expectEnqueued`. Expected values are
 * compared as JSON (a payload class instance or a Date is compared by its JSON, as the task carries
 * it); an object matches when every key it names matches, an array when it has the same length
 * and every element matches.
 */
import { inspect } from 'node:util';
import type { EnqueuedTask } from './testing-store.js';

/** The JSON form of an expected value (what a task would carry). */
export function asJson(v: unknown): unknown {
  return v === undefined ? undefined : (JSON.parse(JSON.stringify(v)) as unknown);
}

/** Paths where `actual` differs from the partial `expected`, each as `path: expected …, got …`. */
export function mismatches(actual: unknown, expected: unknown, path = 'payload'): string[] {
  if (expected !== null && typeof expected === 'object') {
    if (Array.isArray(expected)) {
      if (!Array.isArray(actual)) return [`${path}: expected an array, got ${show(actual)}`];
      if (actual.length !== expected.length)
        return [`${path}: expected ${expected.length} element(s), got ${actual.length}: ${show(actual)}`];
      return expected.flatMap((e, i) => mismatches(actual[i], e, `${path}[${i}]`));
    }
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: expected an object, got ${show(actual)}`];
    return Object.entries(expected).flatMap(([k, e]) =>
      k in actual ? mismatches((actual as Record<string, unknown>)[k], e, `${path}.${k}`) : [`${path}.${k}: expected ${show(e)}, missing`],
    );
  }
  return Object.is(actual, expected) ? [] : [`${path}: expected ${show(expected)}, got ${show(actual)}`];
}

function show(v: unknown): string {
  return inspect(v, { depth: 4, breakLength: Infinity, compact: true });
}

/** One line describing a task, for messages. */
export function describeTask(t: EnqueuedTask): string {
  const extra = t.schedule !== undefined ? ` schedule=${t.schedule} triggerAt=${new Date(t.triggerAt!).toISOString()}` : '';
  return `${t.type} id=${t.id} queue=${t.queue}${extra} payload=${show(t.payload)}`;
}

/** The message of a failed `expectEnqueued`: what was expected, and why each candidate did not match. */
export function notEnqueuedMessage(type: string, expected: unknown, all: EnqueuedTask[]): string {
  const ofType = all.filter((t) => t.type === type);
  const lines = [
    `Expected a task of type "${type}"${expected === undefined ? '' : ` with payload matching ${show(expected)}`} to be enqueued, but`,
  ];
  if (ofType.length === 0) {
    lines[0] += ` no task of that type is.`;
    if (all.length === 0) lines.push('  Nothing is enqueued.');
    else {
      lines.push(`  Enqueued (${all.length}):`);
      for (const t of all.slice(0, 20)) lines.push(`    ${describeTask(t)}`);
      if (all.length > 20) lines.push(`    … and ${all.length - 20} more`);
    }
    return lines.join('\n');
  }
  lines[0] += ` none of the ${ofType.length} task(s) of that type matches:`;
  for (const t of ofType.slice(0, 10)) {
    lines.push(`  ${t.id} (queue ${t.queue}):`);
    for (const m of mismatches(t.payload, expected)) lines.push(`    ${m}`);
  }
  if (ofType.length > 10) lines.push(`  … and ${ofType.length - 10} more`);
  return lines.join('\n');
}
