import { Option, type Command } from 'commander';
import { TASK_STATES, type ActResult, type DeadGroups, type TaskInfo, type TaskState } from '../../core/admin/inspector.js';
import { FILTER_SCAN } from '../../core/admin/tasks.js';
import type { OperatorAction } from '../../core/runtime/events.js';
import { positiveInt, UsageError, type Cli } from '../context.js';
import { duration, fields, firstLine, short, table, when } from '../format.js';

type Run = (fn: (cli: Cli, ...args: never[]) => Promise<void>) => (...args: unknown[]) => Promise<void>;

interface ActOpts {
  queue?: string;
  state?: TaskState;
  all?: boolean;
  type?: string;
  error?: string;
  group?: string;
  yes?: boolean;
}

/**
 * A page of tasks as a table. An empty page says what it means: with a filter, none matched (among
 * the {@link FILTER_SCAN} tasks looked at, when a cursor says there are more to look at).
 */
function taskTable(state: TaskState, tasks: TaskInfo[], filter = '', more = false): string {
  if (tasks.length === 0) {
    if (!filter) return `No ${state} tasks.`;
    if (!more) return `No ${state} tasks match${filter}.`;
    return `No ${state} tasks match${filter} among the ${FILTER_SCAN.toLocaleString('en-US')} looked at; more to look at:`;
  }
  const head = ['id', 'type', 'payload'];
  const extra: Record<TaskState, [string[], (t: TaskInfo) => string[]]> = {
    pending: [['enqueued', 'retried'], (t) => [when(t.enqueuedAt), `${t.retried}/${t.maxRetry}`]],
    active: [
      ['server', 'running for', 'idle', 'deliveries'],
      (t) => [
        t.consumer ?? '-',
        t.startedAt ? duration(Math.max(0, Date.now() - t.startedAt)) : '-',
        duration(t.idleMs ?? 0),
        String(t.deliveries ?? 1),
      ],
    ],
    scheduled: [['due', 'enqueued'], (t) => [when(t.at), when(t.enqueuedAt)]],
    retry: [['due', 'retried', 'last error'], (t) => [when(t.at), `${t.retried}/${t.maxRetry}`, firstLine(t.lastError, 50)]],
    dead: [['failed', 'reason', 'error'], (t) => [when(t.at), t.reason ?? '-', firstLine(t.lastError, 50)]],
  };
  const [cols, row] = extra[state];
  // a page with grouped tasks says each one's group (the one whose limits and turn it waits for)
  const grouped = tasks.some((t) => t.group !== undefined);
  return table(
    [...head, ...(grouped ? ['group'] : []), ...cols],
    tasks.map((t) => [t.id, t.type, short(t.payload), ...(grouped ? [t.group ?? '-'] : []), ...row(t)]),
  );
}

function taskText(t: TaskInfo): string {
  const main = fields([
    ['id', t.id],
    ['queue', t.queue],
    ['state', t.state],
    ['type', t.type],
    ['retried', `${t.retried} of ${t.maxRetry}`],
    ['timeout', t.timeoutMs > 0 ? duration(t.timeoutMs) : 'none'],
    ['enqueued', when(t.enqueuedAt)],
    ['group', t.group],
    ['schedule', t.schedule],
    ['trigger', t.triggerAt !== undefined ? when(t.triggerAt) : undefined],
    [t.state === 'dead' ? 'failed' : 'due', t.at !== undefined ? when(t.at) : undefined],
    ['reason', t.reason],
    ['crashes', t.crashes],
    ['entry', t.entryId],
    ['server', t.consumer],
    ['running for', t.startedAt ? duration(Math.max(0, Date.now() - t.startedAt)) : undefined],
    ['idle', t.idleMs !== undefined ? duration(t.idleMs) : undefined],
    ['deliveries', t.deliveries],
  ]);
  const payload = typeof t.payload === 'string' && t.payloadError ? t.payload : JSON.stringify(t.payload, null, 2);
  const parts = [main, `payload${t.payloadError ? ` (${t.payloadError})` : ''}:`, payload];
  if (t.lastError) parts.push(`last error${t.failedAt ? `, ${when(t.failedAt)}` : ''}:`, t.lastError);
  return parts.join('\n');
}

function groupsText(g: DeadGroups): string {
  if (g.groups.length === 0) return `No dead tasks${g.scanned ? ' match' : ''}.`;
  const t = table(
    ['count', 'error', 'queues', 'types', 'last failed', 'newest task'],
    g.groups.map((x) => {
      return [x.count, short(x.message, 70), x.queues.join(' '), short(x.types.join(' '), 30), when(x.lastFailedAt), x.sampleId];
    }),
  );
  return g.truncated ? `${t}\n(scanned the first ${g.scanned} dead tasks only)` : t;
}

/**
 * The task of a one-task act, in `--queue` or wherever it is found. With `action`, a refusal (the
 * queue or the task not found) is recorded in the audit trail as that act, failed (`Inspector.vetAct`).
 * @throws QueueNotFoundError for an unknown `--queue` (as every command with one); TaskNotFoundError (Inspector.requireTask).
 */
async function locate(cli: Cli, id: string, queue: string | undefined, action?: OperatorAction): Promise<TaskInfo> {
  const inspector = await cli.inspector();
  const check = async (): Promise<TaskInfo> => {
    if (queue !== undefined) await inspector.requireQueue(queue);
    return inspector.requireTask(id, queue);
  };
  return action ? inspector.vetAct(action, { queue, taskId: id }, check, { actor: cli.actor }) : check();
}

function checkAll(id: string | undefined, o: ActOpts, verb: string): boolean {
  if (id && o.all) throw new UsageError(`task ${verb}: give a task id or --all, not both`);
  if (!id && !o.all) throw new UsageError(`task ${verb}: give a task id, or --all (with --queue)`);
  if (o.all && !o.queue) throw new UsageError(`task ${verb} --all: --queue is required`);
  if (!o.all && (o.type !== undefined || o.error !== undefined || o.group !== undefined))
    throw new UsageError(`task ${verb}: --type, --error and --group go with --all`);
  return o.all === true;
}

function filterText(o: ActOpts): string {
  const f: string[] = [];
  if (o.type !== undefined) f.push(`type ${o.type}`);
  if (o.error !== undefined) f.push(`error containing ${JSON.stringify(o.error)}`);
  if (o.group !== undefined) f.push(`group ${o.group}`);
  return f.length ? ` (${f.join(', ')})` : '';
}

async function bulk(
  cli: Cli,
  o: ActOpts,
  state: TaskState,
  verb: string,
  act: () => Promise<ActResult>,
  past: string,
  action: OperatorAction,
): Promise<void> {
  const q = await (await cli.knownQueue(o.queue!, '', action)).queue(o.queue!);
  // pending tasks waiting in a group are counted in pending, but no act reaches them (README "Limits and groups")
  const inGroups = state === 'pending' ? (q.groups?.waiting ?? 0) : 0;
  const n = q[state as 'pending' | 'scheduled' | 'retry' | 'dead'] - inGroups;
  const filtered = o.type !== undefined || o.error !== undefined || o.group !== undefined;
  const scope = filtered ? `the matching ones of the ${n} ${state} tasks` : `all ${n} ${state} tasks`;
  const unreached = inGroups ? ` (the ${inGroups} waiting in groups are not reached)` : '';
  if (!(await cli.confirm(`${verb} ${scope} of queue ${o.queue}${filterText(o)}${unreached}?`, o.yes))) {
    cli.print({ count: 0, ids: [], aborted: true }, () => 'Nothing done.');
    return;
  }
  const r = await act();
  const skipped = r.skipped?.length ? ` ${r.skipped.length} left alone: ${r.skipped.map((s) => `${s.id} (${s.reason})`).join(', ')}.` : '';
  const left = inGroups ? ` ${inGroups} task(s) waiting in groups were not reached (README "Limits and groups").` : '';
  cli.print(r, () => `${past} ${r.count} ${state} task(s) of queue ${o.queue}${filterText(o)}.${skipped}${left}`);
}

const stateOption = (states: readonly string[], what: string) => new Option('--state <state>', what).choices(states);

/** `task ls|show|retry|delete|run|cancel` and `dead groups`. */
export function taskCommands(program: Command, run: Run): void {
  const task = program.command('task').description('tasks: list, show, retry, delete, run, cancel');
  task
    .command('ls')
    .description('tasks of a queue in one state, oldest first, a page at a time')
    .requiredOption('--queue <queue>', 'queue name (required)')
    .addOption(stateOption(TASK_STATES, 'task state (required)').makeOptionMandatory())
    .option('--limit <n>', 'tasks per page (1-1000)', '50')
    .option('--cursor <cursor>', 'continue after the previous page')
    .option('--type <type>', 'only tasks of this type')
    .option('--error <text>', 'only tasks whose last error contains this text')
    .option('--group <group>', 'only tasks of this group (enqueue option group)')
    .action(
      run(async (cli, o: ActOpts & { limit: string; cursor?: string }) => {
        const limit = positiveInt(o.limit, '--limit', 1000);
        const page = await (
          await cli.knownQueue(o.queue!)
        ).taskPage(o.queue!, o.state!, { limit, cursor: o.cursor, type: o.type, error: o.error, group: o.group });
        const more = Boolean(page.cursor);
        // pending tasks waiting in a group are counted in pending but not listed (README "Limits and groups")
        const inGroups = o.state === 'pending' && !cli.json ? ((await (await cli.inspector()).queue(o.queue!)).groups?.waiting ?? 0) : 0;
        const grouped = inGroups ? `\n${inGroups} more pending task(s) wait in groups: not listed (chronos queue show ${o.queue})` : '';
        cli.print(
          page,
          () => taskTable(o.state!, page.tasks, filterText(o), more) + (more ? `\nmore: --cursor '${page.cursor}'` : '') + grouped,
        );
      }),
    );
  task
    .command('show <id>')
    .description('one task by id (in every queue unless --queue): payload, meta, retries, last error')
    .option('--queue <queue>', 'look in this queue only')
    .action(
      run(async (cli, id: string, o: ActOpts) => {
        const t = await locate(cli, id, o.queue);
        cli.print(t, () => taskText(t));
      }),
    );
  task
    .command('retry [id]')
    .description('put a dead task (or --all of them) back in its queue with a fresh retry budget')
    .option('--queue <queue>', 'queue name (required with --all)')
    .option('--all', 'every dead task of the queue (with --type / --error / --group: the matching ones)')
    .option('--type <type>', 'with --all: only this task type')
    .option('--error <text>', 'with --all: only tasks whose last error contains this text')
    .option('--group <group>', 'with --all: only tasks of this group')
    .option('--yes', 'do not ask for confirmation')
    .action(
      run(async (cli, id: string | undefined, o: ActOpts) => {
        const inspector = await cli.inspector();
        if (checkAll(id, o, 'retry')) {
          const act = () => inspector.retryAllDead(o.queue!, { type: o.type, error: o.error, group: o.group, actor: cli.actor });
          return bulk(cli, o, 'dead', 'Retry', act, 'Retried', 'dead.retry');
        }
        const t = await locate(cli, id!, o.queue, 'dead.retry');
        const r = await inspector.retryDead(t.queue, t.id, { actor: cli.actor });
        const text = r.count ? `Retried dead task ${t.id} of queue ${t.queue}.` : `Left task ${t.id} dead: ${r.skipped?.[0]?.reason}.`;
        cli.print(r, () => text);
      }),
    );
  task
    .command('delete [id]')
    .description('delete a pending, scheduled, retry or dead task (or --all of one state)')
    .option('--queue <queue>', 'queue name (required with --all)')
    .addOption(stateOption(['pending', 'scheduled', 'retry', 'dead'], 'the state to delete from (required with --all)'))
    .option('--all', 'every task of the queue in --state (with --type / --error / --group: the matching ones)')
    .option('--type <type>', 'with --all: only this task type')
    .option('--error <text>', 'with --all: only tasks whose last error contains this text')
    .option('--group <group>', 'with --all: only tasks of this group')
    .option('--yes', 'do not ask for confirmation')
    .action(
      run(async (cli, id: string | undefined, o: ActOpts) => {
        const inspector = await cli.inspector();
        if (checkAll(id, o, 'delete')) {
          if (!o.state) throw new UsageError('task delete --all: --state is required');
          const act = () =>
            inspector.deleteAllTasks(o.queue!, o.state!, { type: o.type, error: o.error, group: o.group, actor: cli.actor });
          return bulk(cli, o, o.state, 'Delete', act, 'Deleted', 'task.delete');
        }
        const t = await locate(cli, id!, o.queue, 'task.delete');
        if (t.state === 'active') throw new UsageError(`task ${t.id} is active: use \`chronos task cancel ${t.id}\``);
        const r = await inspector.deleteTask(t.queue, t.id, { state: o.state, actor: cli.actor });
        cli.print(r, () => `Deleted ${t.state} task ${t.id} of queue ${t.queue}.`);
      }),
    );
  task
    .command('run [id]')
    .description('run a scheduled or retry task now (or --all of one state)')
    .option('--queue <queue>', 'queue name (required with --all)')
    .addOption(stateOption(['scheduled', 'retry'], 'with --all: the state to run from').default('scheduled'))
    .option('--all', 'every task of the queue in --state (with --type / --error / --group: the matching ones)')
    .option('--type <type>', 'with --all: only this task type')
    .option('--error <text>', 'with --all: only tasks whose last error contains this text')
    .option('--group <group>', 'with --all: only tasks of this group')
    .option('--yes', 'do not ask for confirmation')
    .action(
      run(async (cli, id: string | undefined, o: ActOpts) => {
        const inspector = await cli.inspector();
        if (checkAll(id, o, 'run')) {
          const state = o.state as 'scheduled' | 'retry';
          const act = () => inspector.runAllTasks(o.queue!, state, { type: o.type, error: o.error, group: o.group, actor: cli.actor });
          return bulk(cli, o, state, 'Run now', act, 'Moved to pending', 'task.run');
        }
        const t = await locate(cli, id!, o.queue, 'task.run');
        const r = await inspector.runTask(t.queue, t.id, { actor: cli.actor });
        cli.print(r, () => `Task ${t.id} of queue ${t.queue} is pending now (it was ${t.state}).`);
      }),
    );
  task
    .command('cancel <id>')
    .description('cancel an active task: it is dead at once (reason cancelled) and its handler is aborted')
    .option('--queue <queue>', 'look in this queue only')
    .action(
      run(async (cli, id: string, o: ActOpts) => {
        const inspector = o.queue !== undefined ? await cli.knownQueue(o.queue, '', 'task.cancel') : await cli.inspector();
        const r = await inspector.cancelTask(id, { queue: o.queue, actor: cli.actor });
        cli.print(r, () => `Cancelled task ${id}: it is dead (reason cancelled); the server running it aborts its signal.`);
      }),
    );

  const dead = program.command('dead').description('dead tasks: grouped by error (list them: task ls --queue <q> --state dead)');
  // `dead ls` is what an operator tries first: name the command that lists them rather than "unknown command 'ls'"
  dead
    .command('ls', { hidden: true })
    .alias('list')
    .option('--queue <queue>', 'queue name')
    .allowUnknownOption()
    .allowExcessArguments()
    .action(
      run(async (_cli, o: { queue?: string }) => {
        const q = o.queue ?? '<queue>';
        throw new UsageError(
          `dead tasks are listed by \`chronos task ls --queue ${q} --state dead\` (retried by \`chronos task retry <id>\` or \`--all --queue ${q}\`); \`chronos dead groups\` groups them by error`,
        );
      }),
    );
  dead
    .command('groups')
    .description('dead tasks grouped by error message, biggest group first')
    .option('--queue <queue>', 'one queue only')
    .option('--type <type>', 'only this task type')
    .option('--error <text>', 'only errors containing this text')
    .option('--group <group>', 'only tasks of this group')
    .option('--scan <n>', 'dead tasks looked at, at most', '10000')
    .action(
      run(async (cli, o: ActOpts & { scan: string }) => {
        const scan = positiveInt(o.scan, '--scan');
        const inspector = o.queue !== undefined ? await cli.knownQueue(o.queue) : await cli.inspector();
        const g = await inspector.deadGroups({ queue: o.queue, type: o.type, error: o.error, group: o.group, scan });
        cli.print(g, () => groupsText(g));
      }),
    );
}
