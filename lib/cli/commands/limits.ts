// `chronos queue limits <q>`: show or set a queue's fleet-wide limits (issue 21), and the limits
// part of `queue show` (limits, slots taken, the groups with the most waiting tasks).
import type { Command } from 'commander';
import type { QueueInfo } from '../../core/admin/inspector.js';
import type { QueueLimits, QueueLimitsUpdate, RateLimit } from '../../core/queue/limits.js';
import { decimalInt, UsageError, type Cli } from '../context.js';
import { fields, table } from '../format.js';

type Run = (fn: (cli: Cli, ...args: never[]) => Promise<void>) => (...args: unknown[]) => Promise<void>;

/** A queue's state as a table cell: `running`, `paused`, or `limited (<limit>)`. */
export function stateText(q: QueueInfo): string {
  if (q.state === 'limited') return `limited (${q.limitedBy ?? '?'})`;
  return q.state ?? (q.paused ? 'paused' : 'running');
}

function rateText(r: RateLimit | undefined): string | undefined {
  return r ? `${r.max} per ${r.duration} ms` : undefined;
}

/** A queue's limits in one line each (empty when it has none). */
export function limitLines(l: QueueLimits): [string, string][] {
  const lines: [string, string | undefined][] = [
    ['concurrency', l.concurrency?.toString()],
    ['rate', rateText(l.rate)],
    ['group concurrency', l.groupConcurrency?.toString()],
    ['group rate', rateText(l.groupRate)],
  ];
  for (const [g, o] of Object.entries(l.groups ?? {})) {
    const parts = [
      o.concurrency !== undefined ? `concurrency ${o.concurrency}` : undefined,
      o.rate ? `rate ${rateText(o.rate)}` : undefined,
    ];
    lines.push([`group ${g}`, parts.filter(Boolean).join(', ')]);
  }
  return lines.filter((x): x is [string, string] => x[1] !== undefined);
}

/** The limits part of `queue show`: limits with the slots taken, then the top groups. */
export function limitsText(q: QueueInfo): string | undefined {
  const parts: string[] = [];
  if (q.limits) {
    const l = q.limits;
    const lines = limitLines(l).map(([k, v]): [string, string] => {
      if (k === 'concurrency') return [k, `${v} (${q.active} taken)`];
      if (k === 'rate') return [k, `${v} (${q.rateUsed ?? 0} in the window)`];
      return [k, v];
    });
    parts.push(fields(lines));
  }
  if (q.groups) {
    const g = q.groups;
    parts.push(`Groups: ${g.count} with waiting tasks (${g.waiting} tasks), ${g.held} held back by their limits`);
    if (g.top.length > 0)
      parts.push(
        table(
          ['group', 'waiting', 'running'],
          g.top.map((t) => [t.group, t.waiting, t.running]),
        ),
      );
  }
  return parts.length > 0 ? parts.join('\n') : undefined;
}

/** `<n>` or `none` → a limit or null. */
function intOrNone(v: string | undefined, flag: string): number | null | undefined {
  if (v === undefined) return undefined;
  if (v === 'none') return null;
  const n = decimalInt(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${flag}: expected an integer >= 1 or "none", got ${JSON.stringify(v)}`);
  return n;
}

/** `<max>/<duration ms>` or `none` → a rate or null. */
function rateOrNone(v: string | undefined, flag: string): RateLimit | null | undefined {
  if (v === undefined) return undefined;
  if (v === 'none') return null;
  const m = /^(\d+)\/(\d+)$/.exec(v);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1)
    throw new UsageError(`${flag}: expected <max>/<duration ms> (e.g. 100/1000) or "none", got ${JSON.stringify(v)}`);
  return { max: Number(m[1]), duration: Number(m[2]) };
}

/** `--clear-group g` of a group without an override: exit 1, as a name that does not exist. */
export class NothingToClearError extends Error {
  constructor(
    readonly queue: string,
    readonly group: string,
    groups: string[],
  ) {
    super(
      `Queue "${queue}" has no override for group "${group}": nothing to clear (${groups.length > 0 ? `groups with an override: ${groups.join(', ')}` : 'no group has one'})`,
    );
    this.name = 'NothingToClearError';
  }
}

interface LimitFlags {
  concurrency?: string;
  rate?: string;
  groupConcurrency?: string;
  groupRate?: string;
  group?: string[];
  clearGroup?: string[];
}

/** A repeatable flag's values, in order (commander keeps only the last of a plain one: trial 43). */
const each = (v: string, acc: string[] = []) => [...acc, v];

/** `queue limits <name>`. */
export function limitsCommands(queue: Command, run: Run): void {
  queue
    .command('limits <name>')
    .description(
      'show or set fleet-wide limits: --concurrency n, --rate max/ms, --group-concurrency n, --group-rate max/ms ' +
        '("none" clears one); with --group g, --concurrency/--rate set group g\'s override; --clear-group g drops it',
    )
    .option('--concurrency <n>', 'tasks of the queue (or of --group) running at once, fleet-wide; "none" clears')
    .option('--rate <max/ms>', 'starts per window of ms, e.g. 100/1000; "none" clears')
    .option('--group-concurrency <n>', 'tasks of one group running at once, for every group; "none" clears')
    .option('--group-rate <max/ms>', 'starts of one group\'s tasks per window, for every group; "none" clears')
    .option('--group <g>', 'with --concurrency/--rate: set the override of group g (repeatable: the same for each)', each)
    .option('--clear-group <g>', "drop group g's override (repeatable)", each)
    .option('--force', 'set the limits of a queue not known yet (before its first task)')
    .action(
      run(async (cli, name: string, o: LimitFlags & { force?: boolean }) => {
        // the values first (a bad one is a usage error whatever the queue), then, as pause, a typo in the name
        // is refused, never limits that nothing reads
        const update: QueueLimitsUpdate = {};
        const concurrency = intOrNone(o.concurrency, '--concurrency');
        const rate = rateOrNone(o.rate, '--rate');
        const gc = intOrNone(o.groupConcurrency, '--group-concurrency');
        const gr = rateOrNone(o.groupRate, '--group-rate');
        // both for one group: the clear would win and the override given be dropped in silence
        const setGroups = o.group ?? [];
        const clearGroups = o.clearGroup ?? [];
        const both = setGroups.find((g) => clearGroups.includes(g));
        if (both !== undefined)
          throw new UsageError(
            `--group ${both} with --clear-group ${both}: set the group's override or drop it, not both (two calls do both, in the order you mean)`,
          );
        const inspector = o.force
          ? await cli.inspector()
          : await cli.knownQueue(name, '; pass --force to set its limits before its first task', 'queue.limits');
        if (setGroups.length > 0) {
          if (concurrency === undefined && rate === undefined)
            throw new UsageError('--group: give --concurrency and/or --rate for the group');
          const override = { ...(concurrency !== undefined ? { concurrency } : {}), ...(rate !== undefined ? { rate } : {}) };
          update.groups = Object.fromEntries(setGroups.map((g) => [g, override]));
        } else {
          if (concurrency !== undefined) update.concurrency = concurrency;
          if (rate !== undefined) update.rate = rate;
        }
        if (gc !== undefined) update.groupConcurrency = gc;
        if (gr !== undefined) update.groupRate = gr;
        if (clearGroups.length > 0) {
          // an override that is not there is named, as a schedule or queue that is not (nothing is written)
          const groups = Object.keys((await inspector.queueLimits(name)).groups ?? {});
          const missing = clearGroups.find((g) => !groups.includes(g));
          if (missing !== undefined) throw new NothingToClearError(name, missing, groups);
          update.groups = { ...update.groups, ...Object.fromEntries(clearGroups.map((g) => [g, null])) };
        }
        const changed = Object.keys(update).length > 0;
        const now = changed ? await inspector.setQueueLimits(name, update, { actor: cli.actor }) : await inspector.queueLimits(name);
        const lines = limitLines(now);
        cli.print({ queue: name, limits: now }, () =>
          [changed ? `Limits of queue ${name} set.` : `Limits of queue ${name}:`, lines.length > 0 ? fields(lines) : 'none'].join('\n'),
        );
      }),
    );
}
