import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { ChronosError } from '../core/runtime/errors.js';
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

function oneLine(message: string): string {
  return message
    .replace(/:\s*\n\s*-\s*/g, ': ') // "Invalid … options (1 problem):\n  - namespace: …" → one line, no ":;"
    .replace(/\n\s*-\s*/g, '; ')
    .replace(/\s*\n\s*/g, ' ');
}

/**
 * Runs the `chronos` command line on `argv` (`process.argv` shape) and returns its exit code: 0 ok,
 * 1 error (one clear line on stderr), 2 usage. Builds on the core Inspector only (no Nest boot).
 */
export async function main(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const opened: Cli[] = [];
  const program = new Command('chronos')
    .description('Operate Chronos: queues, tasks, dead tasks, schedules, leader and workers of one namespace')
    .version(version(), '-V, --version')
    .addOption(
      new Option('--redis-url <url>', 'Redis to use (redis://[user:pass@]host:port[/db], rediss://…)')
        .env('REDIS_URL')
        .default('redis://127.0.0.1:6379'),
    )
    .addOption(new Option('--namespace <ns>', 'Chronos namespace (key prefix)').env('CHRONOS_NAMESPACE').default('chronos'))
    .addOption(new Option('--tls-ca <file>', "PEM file of the CA that signed a rediss:// server's certificate").env('CHRONOS_TLS_CA'))
    .option('--json', 'print JSON (for scripts) instead of tables')
    .option('--actor <name>', 'who acts, as named in the operator.acted events (default cli:<user>@<host>)')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeOut: (s) => void out.write(s), writeErr: (s) => void err.write(s) });
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
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.usage; // commander printed it
    const usage = e instanceof UsageError || (e instanceof ChronosError && USAGE_CODES.has(e.code));
    err.write(`error: ${oneLine(e instanceof Error ? e.message : String(e))}\n`);
    return usage ? EXIT.usage : EXIT.error;
  } finally {
    // a QUIT that Redis does not answer (the failure case) must not hold the exit up
    await Promise.race([Promise.all(opened.map((c) => c.close().catch(() => {}))), new Promise((r) => setTimeout(r, 250).unref())]);
  }
}
