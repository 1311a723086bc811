import type { Command } from 'commander';
import type { FireInfo, ScheduleInfo, SchedulePage, SchedulePageQuery } from '../../core/admin/inspector.js';
import { parseInstant, positiveInt, UsageError, type Cli } from '../context.js';
import { displayZone, fields, firedWhen, table, when, zoneTime } from '../format.js';
import { labelFilterOf } from '../../core/scheduler/labels.js';

type Run = (fn: (cli: Cli, ...args: never[]) => Promise<void>) => (...args: unknown[]) => Promise<void>;

function stateOf(s: ScheduleInfo): string {
  if (s.error) return 'invalid';
  if (s.orphaned) return 'orphaned';
  if (s.paused) return 'paused';
  return s.ended ? 'ended' : 'active';
}

/** Why a schedule has no next run to show (it does not fire: invalid, orphaned, paused, ended), or undefined when it fires. */
export function notFiring(s: ScheduleInfo): string | undefined {
  if (s.error) return 'invalid';
  if (s.orphaned) return 'orphaned';
  if (s.paused) return 'paused';
  return s.ended ? `ended (${s.ended === 'end-at' ? 'past its endAt' : 'its maxRuns reached'})` : undefined;
}

/**
 * A label as a shell word that `--label` takes back: `k=v`, the value single-quoted when it is empty
 * or holds anything but `[A-Za-z0-9_./:@%+-]` (`tenant='acme corp'`, `kinds='a,b'`, `who='o'\''brien'`),
 * so that a value with a space or a comma is not read as two labels. Keys need no quoting (`[A-Za-z0-9_./-]`).
 */
function labelWord(key: string, value: string): string {
  return /^[A-Za-z0-9_./:@%+-]+$/.test(value) ? `${key}=${value}` : `${key}='${value.replaceAll("'", "'\\''")}'`;
}

/** A schedule's labels as `k=v k='v w'` ({@link labelWord}), or undefined for none. */
function labelsText(s: ScheduleInfo): string | undefined {
  const pairs = Object.entries(s.labels ?? {}).map(([k, v]) => labelWord(k, v));
  return pairs.length ? pairs.join(' ') : undefined;
}

/**
 * A schedule's spec as the user gave it: the expression, and the offset of an every-spec that has one
 * (`@every 30s (offset 15000 ms)`), which moves every trigger and is not part of the expression.
 */
export function specText(s: Pick<ScheduleInfo, 'expression' | 'offsetMs'>): string {
  return s.offsetMs ? `${s.expression} (offset ${s.offsetMs} ms)` : s.expression;
}

/**
 * A trigger as {@link when} shows it (the display zone), and, when it reads otherwise there, in the
 * schedule's zone; not for an every-spec, whose zone is ignored (its instants are epoch-aligned).
 */
function triggerWhen(at: number, s: Pick<ScheduleInfo, 'expression' | 'timeZone'>): string {
  const there = s.expression.startsWith('@every') ? undefined : zoneTime(at, s.timeZone);
  return there ? `${when(at)} = ${there}` : when(at);
}

/**
 * The table of `schedule ls`, the same columns with or without a filter (a page). Its instants are
 * in the display zone, named in the headers; a next trigger also in the schedule's zone when it reads
 * otherwise there (`2026-12-08 07:00 (in 9h) = 08:00 Europe/Paris`).
 */
function scheduleRows(list: readonly ScheduleInfo[]): string {
  const zone = displayZone();
  return table(
    ['schedule', 'spec', 'time zone', 'queue', 'type', 'origin', 'labels', 'state', `last fired (${zone})`, `next (${zone})`],
    list.map((s) => {
      const idle = notFiring(s);
      const next = idle ? `- (${idle})` : s.next.length ? triggerWhen(s.next[0], s) : '-';
      return [s.name, specText(s), s.timeZone, s.queue, s.type, s.origin, labelsText(s) ?? '-', stateOf(s), firedWhen(s.lastFiredAt), next];
    }),
  );
}

/** Past this many schedules, the whole listing ends with a hint to page or filter instead. */
export const LARGE_LISTING = 1000;

/** The line after a whole listing of more than {@link LARGE_LISTING} schedules: how to page or filter instead. */
export function largeListingHint(count: number): string {
  return `${count} schedules. One page at a time: --limit 100 (then --cursor); narrow it with --label key=value, --prefix <name> or --state.`;
}

/** The table of the whole `schedule ls`, with {@link largeListingHint} after a large one. */
export function scheduleTable(list: ScheduleInfo[]): string {
  if (list.length === 0) return 'No schedules.';
  const rows = scheduleRows(list);
  return list.length > LARGE_LISTING ? `${rows}\n${largeListingHint(list.length)}` : rows;
}

/** A page of `schedule ls` with a filter: the table, and how to get the next page. */
export function schedulePageText(page: SchedulePage): string {
  const rows = page.items.length ? scheduleRows(page.items) : 'No schedules in this page.';
  return `${rows}
${page.cursor ? `Next page: --cursor ${page.cursor}` : 'End of the list.'}`;
}

/** Options of `schedule ls` that make it a page of the paged listing. */
interface LsOptions {
  label: string[];
  prefix?: string;
  state?: string;
  limit?: string;
  cursor?: string;
}

/** The page query of `schedule ls` options; undefined for none (the whole list). @throws UsageError for a label not `key=value`, a key given twice, or a key or value no label can have */
export function pageQuery(o: LsOptions): SchedulePageQuery | undefined {
  if (o.label.length === 0 && o.prefix === undefined && o.state === undefined && o.limit === undefined && o.cursor === undefined)
    return undefined;
  const filter = labelFilterOf(o.label);
  if ('problem' in filter) throw new UsageError(`--${filter.problem}`);
  return {
    ...(o.label.length ? { labels: filter.labels } : {}),
    ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
    ...(o.state !== undefined ? { state: o.state as SchedulePageQuery['state'] } : {}),
    ...(o.cursor !== undefined ? { cursor: o.cursor } : {}),
    limit: o.limit === undefined ? 100 : positiveInt(o.limit, '--limit', 1000),
  };
}

/** `schedule show`: the definition, the next triggers (display zone, and the schedule's: {@link scheduleRows}), the declarers. */
export function scheduleText(s: ScheduleInfo): string {
  const main = fields([
    ['schedule', s.name],
    ['spec', specText(s)],
    ['time zone', s.timeZone],
    ['queue', s.queue],
    ['task type', s.type],
    ['origin', s.origin],
    ['state', stateOf(s)],
    ['orphaned since', s.orphanedSince === undefined ? undefined : when(s.orphanedSince)],
    ['labels', labelsText(s)],
    ['paused note', s.pause ? `${s.pause.note || '(none)'} — by ${s.pause.actor}, ${when(s.pause.at)}` : undefined],
    ['catch-up', s.catchUp],
    ['overlap', s.overlap],
    [
      'buffered',
      s.buffered ? `${s.buffered.taskId} (trigger ${when(s.buffered.triggerAt)}), waiting behind ${s.buffered.behind}` : undefined,
    ],
    ['jitter', s.jitterMs === undefined ? undefined : `${s.jitterMs} ms`],
    ['starts at', s.startAt === undefined ? undefined : when(s.startAt)],
    ['ends at', s.endAt === undefined ? undefined : `${when(s.endAt)} (exclusive)`],
    ['max runs', s.maxRuns === undefined ? undefined : `${s.maxRuns} (${s.runsLeft ?? s.maxRuns} left)`],
    ['registered', when(s.registeredAt)],
    ['last fired', firedWhen(s.lastFiredAt)],
    ['error', s.error],
  ]);
  const idle = notFiring(s);
  const next = idle
    ? `No next trigger: the schedule is ${idle}${idle === 'paused' ? ` (chronos schedule resume ${s.name})` : ''}.`
    : s.next.length
      ? table(
          [`next triggers (${displayZone()})`],
          s.next.map((t) => [triggerWhen(t, s)]),
        )
      : 'No next trigger.';
  const by = s.declaredBy.length
    ? table(
        ['declared by', 'last seen', 'alive'],
        s.declaredBy.map((d) => [d.instance, when(d.lastSeenAt), d.alive ? 'yes' : 'no']),
      )
    : s.runtime
      ? 'Runtime schedule: lives in Redis, declared by no instance.'
      : 'Declared by no live instance: orphaned (it does not fire).';
  return [main, next, by].join('\n');
}

function historyText(h: FireInfo[]): string {
  if (h.length === 0) return 'No fires recorded yet.';
  return table(
    ['trigger', 'recorded', 'outcome', 'count', 'task', 'task state', 'by'],
    h.map((r) => [when(r.triggerAt), when(r.at), r.outcome, r.count ?? 1, r.taskId ?? '-', r.task ?? '-', r.by ?? '-']),
  );
}

/** `schedule ls|show|history|pause|resume|trigger|backfill|rm`. */
export function scheduleCommands(program: Command, run: Run): void {
  const schedule = program.command('schedule').description('schedules: list, show, history, pause, resume, trigger, backfill, rm');
  schedule
    .command('ls')
    .description(
      'every schedule: spec, zone, queue, type, origin, labels, state, last fired, next trigger; with a filter, --limit or --cursor: one page by name, with the next cursor',
    )
    .option(
      '--label <key=value>',
      'only schedules with this label (repeat it, or k=v,k2=v2: all of them)',
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .option('--prefix <text>', 'only schedules whose name starts with this')
    .option('--state <state>', 'only schedules in this state: active, paused, orphaned or ended')
    .option('--limit <n>', 'schedules per page, 1-1000 (default 100)')
    .option('--cursor <cursor>', 'the next page: the cursor printed by the previous one')
    .action(
      run(async (cli, o: LsOptions) => {
        const query = pageQuery(o);
        if (query) {
          const page = await (await cli.inspector()).schedulePage(query);
          cli.print(page, () => schedulePageText(page));
          return;
        }
        const list = await (await cli.inspector()).schedules(3);
        cli.print(list, () => scheduleTable(list));
      }),
    );
  schedule
    .command('show <name>')
    .description('one schedule: definition, pause note, next triggers, declaring instances')
    .option('--next <n>', 'next triggers shown', '5')
    .action(
      run(async (cli, name: string, o: { next: string }) => {
        const s = await (await cli.inspector()).schedule(name, positiveInt(o.next, '--next', 100));
        cli.print(s, () => scheduleText(s));
      }),
    );
  schedule
    .command('history <name>')
    .description('the last fires of a schedule with their outcome and where their task is now')
    .option('--limit <n>', 'fires shown (at most 100 are kept)', '20')
    .action(
      run(async (cli, name: string, o: { limit: string }) => {
        const h = await (await cli.inspector()).scheduleHistory(name, positiveInt(o.limit, '--limit', 100));
        cli.print(h, () => historyText(h));
      }),
    );
  schedule
    .command('pause <name>')
    .description('pause a schedule fleet-wide (its triggers are skipped while paused)')
    .option('--note <text>', 'why (shown while it stays paused)')
    .action(
      run(async (cli, name: string, o: { note?: string }) => {
        const changed = await (await cli.inspector()).pauseSchedule(name, { note: o.note, actor: cli.actor });
        const said = changed ? `Paused schedule ${name}.` : `Schedule ${name} was already paused: nothing changed (its note is kept).`;
        cli.print({ schedule: name, paused: true, changed, note: o.note ?? '' }, () => said);
      }),
    );
  schedule
    .command('resume <name>')
    .description('resume a paused schedule')
    .action(
      run(async (cli, name: string) => {
        const changed = await (await cli.inspector()).resumeSchedule(name, { actor: cli.actor });
        const said = changed ? `Resumed schedule ${name}.` : `Schedule ${name} was not paused: nothing changed.`;
        cli.print({ schedule: name, paused: false, changed }, () => said);
      }),
    );
  schedule
    .command('trigger <name>')
    .description('enqueue one task of the schedule now (its cadence is left alone)')
    .action(
      run(async (cli, name: string) => {
        const taskId = await (await cli.inspector()).triggerSchedule(name, { actor: cli.actor });
        cli.print({ schedule: name, taskId }, () => `Triggered schedule ${name}: task ${taskId}.`);
      }),
    );
  schedule
    .command('backfill <name>')
    .description(
      'enqueue every trigger in a past time range that was never fired (once each, by its dedup key; one the overlap policy skipped counts as fired)',
    )
    .requiredOption('--from <time>', 'start, inclusive: epoch ms, ISO 8601 (local time unless it says), now, or -2h')
    .option('--to <time>', 'end, inclusive (capped at now)', 'now')
    .action(
      run(async (cli, name: string, o: { from: string; to: string }) => {
        const from = parseInstant(o.from, '--from');
        const to = parseInstant(o.to, '--to');
        const r = await (await cli.inspector()).backfillSchedule(name, from, to, { actor: cli.actor });
        const counts = `${r.triggers} trigger(s) in range, ${r.enqueued} enqueued (new), ${r.duplicates} fired before`;
        const text = `Backfilled schedule ${name}: ${counts}.`;
        cli.print(r, () => text);
      }),
    );
  schedule
    .command('rm <name>')
    .description('remove a runtime or orphaned schedule (--force for one that live instances declare)')
    .option('--force', 'remove it even though live instances declare it (it comes back when one restarts)')
    .action(
      run(async (cli, name: string, o: { force?: boolean }) => {
        await (await cli.inspector()).removeSchedule(name, { force: o.force, actor: cli.actor });
        cli.print({ schedule: name, removed: true }, () => `Removed schedule ${name}.`);
      }),
    );
}
