import type { Command } from 'commander';
import { AUDIT_FILTER_SCAN, type AuditPage } from '../../core/admin/audit.js';
import type { AuditEntry } from '../../core/runtime/events.js';
import { positiveInt, type Cli } from '../context.js';
import { table, when } from '../format.js';

type Run = (fn: (cli: Cli, ...args: never[]) => Promise<void>) => (...args: unknown[]) => Promise<void>;

function target(e: AuditEntry): string {
  const parts = [e.queue && `queue ${e.queue}`, e.schedule && `schedule ${e.schedule}`, e.taskId && `task ${e.taskId}`, e.detail];
  return parts.filter(Boolean).join(' · ') || '-';
}

/** The audit trail as a table, newest first. */
export function auditTable(entries: AuditEntry[]): string {
  if (entries.length === 0)
    return 'No acts recorded (acts through the console, the CLI or InspectorService are; kept 30 days, at most 10,000).';
  return table(
    ['when', 'actor', 'action', 'on', 'result', 'from'],
    entries.map((e) => [
      when(e.at),
      e.actor,
      e.action,
      target(e),
      e.result === 'done' ? `done${e.count !== undefined ? ` (${e.count})` : ''}` : `FAILED: ${e.error ?? ''}`,
      e.origin ?? '-',
    ]),
  );
}

interface AuditFlags {
  limit: string;
  cursor?: string;
  by?: string;
  action?: string;
  queue?: string;
  schedule?: string;
  failed?: boolean;
}

/** The filters given, as ` (queue q, action a)`, or '' for none. */
function filterText(o: AuditFlags): string {
  const f = [
    o.by !== undefined && `actor ${o.by}`,
    o.action !== undefined && `action ${o.action}`,
    o.queue !== undefined && `queue ${o.queue}`,
    o.schedule !== undefined && `schedule ${o.schedule}`,
    o.failed && 'failed',
  ].filter(Boolean);
  return f.length ? ` (${f.join(', ')})` : '';
}

/**
 * A page of the trail, and how to read on (`more: --cursor '…'`). An empty page with a filter says
 * none matched — among the {@link AUDIT_FILTER_SCAN} entries looked at, when a cursor says there are
 * more — never that nothing was recorded (trial 37).
 */
export function auditText(page: AuditPage, filters: string): string {
  const more = page.cursor ? `\nmore: --cursor '${page.cursor}'` : '';
  if (page.entries.length > 0 || !filters) return auditTable(page.entries) + more;
  if (!page.cursor) return `No acts match${filters}.`;
  return `No acts match${filters} among the ${AUDIT_FILTER_SCAN.toLocaleString('en-US')} looked at; more to look at:${more}`;
}

/** `audit`: who did what, when, from where, and the result. */
export function auditCommands(program: Command, run: Run): void {
  program
    .command('audit')
    .description('the audit trail: every act (retry, delete, cancel, pause/resume, trigger, backfill, remove, limits), newest first')
    .option('--limit <n>', 'most entries (1-500)', '50')
    .option('--cursor <cursor>', 'older entries: the cursor printed by the previous page')
    .option('--by <actor>', 'only the acts of this actor (e.g. cli:ada@host)')
    .option('--action <action>', 'only this action (e.g. queue.pause, dead.retry)')
    .option('--queue <name>', 'only acts on this queue')
    .option('--schedule <name>', 'only acts on this schedule')
    .option('--failed', 'only acts that failed')
    .action(
      run(async (cli, o: AuditFlags) => {
        const page = await (
          await cli.inspector()
        ).audit({
          limit: positiveInt(o.limit, '--limit', 500),
          cursor: o.cursor,
          actor: o.by,
          action: o.action,
          queue: o.queue,
          schedule: o.schedule,
          result: o.failed ? 'failed' : undefined,
        });
        cli.print(page, () => auditText(page, filterText(o)));
      }),
    );
}
