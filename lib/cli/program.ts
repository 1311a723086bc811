import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { ChronosError, InvalidScheduleError } from '../core/runtime/errors.js';
import { auditCommands } from './commands/audit.js';
import { consoleCommands } from './commands/console.js';
import { overviewCommands } from './commands/overview.js';
import { scheduleCommands } from './commands/schedules.js';
import { taskCommands } from './commands/tasks.js';
import { Cli, UsageError, type GlobalOptions } from './context.js';

/** Exit codes of `chronos`. */
export const EXIT = { ok: 0, error: 1, usage: 2 } as const;

function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Error codes that mean the command was called wrongly (exit 2), not that it failed. */
const USAGE_CODES = new Set(['INVALID_OPTIONS', 'INVALID_TASK_STATE']);

/**
 * Whether an error means the command was called wrongly (exit 2): a UsageError, a {@link USAGE_CODES}
 * one, or an InvalidScheduleError about a name itself (its `schedule` undefined): the CLI gives no
 * definition, only the name argument, so that is `schedule show 'a b'` (as `--queue 'a b'`, an
 * INVALID_OPTIONS, is). A stored definition that no longer parses (`schedule` set) is a failure: 1.
 */
function isUsage(e: unknown): boolean {
  if (e instanceof UsageError) return true;
  if (e instanceof InvalidScheduleError) return e.schedule === undefined;
  return e instanceof ChronosError && USAGE_CODES.has(e.code);
}

function oneLine(message: string): string {
  return message
    .replace(/:\s*\n\s*-\s*/g, ': ') // "Invalid … options (1 problem):\n  - namespace: …" → one line, no ":;"
    .replace(/\n\s*-\s*/g, '; ')
    .replace(/\s*\n\s*/g, ' ');
}

/**
 * commander's `unknown option '-x'` with how to give a name or value that starts with `-` (a schedule
 * or queue name may: `-x` is a valid name), which commander otherwise reads as an option: after `--`.
 * Before, `chronos schedule show -x` said only "unknown option '-x'". A message with commander's
 * own suggestion (`--lable`: "Did you mean --label?") is left as it is.
 */
function withDashHint(message: string): string {
  const flag = /unknown option '([^']*)'/.exec(message)?.[1];
  if (flag === undefined || message.includes('Did you mean')) return message;
  const end = message.endsWith('\n') ? '\n' : '';
  return `${message.trimEnd()} (a name or value that starts with "-" goes after "--": chronos … -- ${flag})${end}`;
}

/** True when `--json` is among the options (before a `--` that ends them): errors are printed as JSON too. */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return argv.slice(2, end < 0 ? undefined : end).includes('--json');
}

/**
 * The code of an error as `--json` prints it: a ChronosError's own (`QUEUE_NOT_FOUND`, …), `USAGE`
 * for a command called wrongly (commander's errors, UsageError), else `ERROR`.
 */
function errorCode(e: unknown): string {
  if (e instanceof ChronosError) return e.code;
  if (e instanceof UsageError || e instanceof CommanderError) return 'USAGE';
  return 'ERROR';
}

/**
 * Runs the `chronos` command line on `argv` (`process.argv` shape) and returns its exit code: 0 ok,
 * 1 error (one clear line on stderr), 2 usage. With `--json`, an error is one JSON line on stderr
 * instead, `{"error":{"code":"QUEUE_NOT_FOUND","message":"…"}}` (same exit codes; `code` as
 * {@link errorCode} gives it). Builds on the core Inspector only (no Nest boot).
 */
export async function main(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const opened: Cli[] = [];
  const json = wantsJson(argv);
  const fail = (e: unknown, message: string): void =>
    void err.write(json ? JSON.stringify({ error: { code: errorCode(e), message } }) + '\n' : `error: ${message}\n`);
  const program = new Command('chronos')
    .description('Operate Chronos: queues, tasks, dead tasks, schedules, leader and workers of one namespace')
    .version(version(), '-V, --version')
    .addOption(
      new Option('--redis-url <url>', 'Redis to use (redis://[user:pass@]host:port[/db], rediss://…)')
        .env('REDIS_URL')
        .default('redis://127.0.0.1:6379'),
    )
    .addOption(new Option('--namespace <ns>', 'Chronos namespace (key prefix)').env('CHRONOS_NAMESPACE').default('chronos'))
    .addOption(
      new Option('--cluster <nodes>', 'Redis Cluster seed nodes, host:port[,host:port…] (user, password, TLS from --redis-url)').env(
        'CHRONOS_REDIS_CLUSTER',
      ),
    )
    .addOption(
      new Option('--sentinels <nodes>', 'Redis Sentinels, host:port[,host:port…], with --sentinel-name').env('CHRONOS_REDIS_SENTINELS'),
    )
    .addOption(new Option('--sentinel-name <name>', 'the master name the sentinels monitor').env('CHRONOS_SENTINEL_NAME'))
    .addOption(new Option('--tls-ca <file>', "PEM file of the CA that signed a rediss:// server's certificate").env('CHRONOS_TLS_CA'))
    .option('--json', 'print JSON (for scripts) instead of tables; an error as {"error":{"code","message"}} on stderr')
    .option('--actor <name>', 'who acts, as named in the operator.acted events (default cli:<user>@<host>)')
    .showSuggestionAfterError(true)
    .exitOverride()
    // under --json, commander's usage errors (and the help it prints for a missing command) are written as JSON below
    .configureOutput({
      writeOut: (s) => void out.write(s),
      writeErr: (s) => void (json || err.write(s)),
      outputError: (s, write) => write(withDashHint(s)),
    });
  const run =
    (fn: (cli: Cli, ...args: never[]) => Promise<void>) =>
    async (...args: unknown[]): Promise<void> => {
      const command = args[args.length - 1] as Command;
      const cli = new Cli(command.optsWithGlobals<GlobalOptions>(), out);
      opened.push(cli);
      await fn(cli, ...(args.slice(0, -1) as never[]));
    };
  overviewCommands(program, run);
  taskCommands(program, run);
  scheduleCommands(program, run);
  auditCommands(program, run);
  consoleCommands(program, run);
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode === 0) return EXIT.ok;
      // else commander printed it, unless --json
      if (json)
        fail(
          e,
          e.code === 'commander.help'
            ? 'missing command (chronos --help lists them)'
            : oneLine(withDashHint(e.message.replace(/^error: /, ''))),
        );
      return EXIT.usage;
    }
    const shown = opened.reduce<unknown>((x, cli) => cli.explain(x), e);
    fail(shown, oneLine(shown instanceof Error ? shown.message : String(shown)));
    return isUsage(shown) ? EXIT.usage : EXIT.error;
  } finally {
    // a QUIT that Redis does not answer (the failure case) must not hold the exit up
    await Promise.race([Promise.all(opened.map((c) => c.close().catch(() => {}))), new Promise((r) => setTimeout(r, 250).unref())]);
  }
}
