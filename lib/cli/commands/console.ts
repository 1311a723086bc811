import { Option, type Command } from 'commander';
import { startConsoleServer } from '../../console/server.js';
import { positiveInt, UsageError, type Cli } from '../context.js';

type Run = (fn: (cli: Cli, ...args: never[]) => Promise<void>) => (...args: unknown[]) => Promise<void>;

interface ConsoleOptions {
  port: string;
  host: string;
  readOnly?: boolean;
  basicAuth?: string;
  allowedHost?: string[];
}

/** Collects `--allowed-host a --allowed-host b,c` (and the env variable's `a,b`) into one list. */
function hostList(value: string, previous: string[] | undefined): string[] {
  return [
    ...(previous ?? []),
    ...value
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== ''),
  ];
}

/**
 * `chronos console`: serves the web console on its own HTTP server until SIGINT/SIGTERM. Without
 * `--basic-auth` it binds to a loopback address only (and warns) and answers only requests for the
 * bound address, `localhost` and `--allowed-host` names (DNS rebinding); `--read-only` refuses every act.
 */
export function consoleCommands(program: Command, run: Run): void {
  program
    .command('console')
    .description('serve the web console (queues, tasks, schedules, servers) over HTTP')
    .option('--port <n>', 'TCP port', '8080')
    .option('--host <addr>', 'address to bind (a non-loopback one needs --basic-auth)', '127.0.0.1')
    .option('--read-only', 'show everything, refuse every act (405)')
    .addOption(new Option('--basic-auth <user:pass>', 'require HTTP Basic credentials on every request').env('CHRONOS_CONSOLE_AUTH'))
    .addOption(
      new Option(
        '--allowed-host <name>',
        'a host name the console answers to besides the bound address and localhost (repeatable; others get 421)',
      )
        .env('CHRONOS_CONSOLE_ALLOWED_HOSTS')
        .argParser(hostList),
    )
    .action(
      run(async (cli: Cli, opts: ConsoleOptions) => {
        const port = opts.port === '0' ? 0 : positiveInt(opts.port, '--port', 65535);
        const inspector = await cli.inspector(true, false);
        let srv;
        try {
          srv = await startConsoleServer({
            inspector,
            port,
            host: opts.host,
            readOnly: opts.readOnly === true,
            basicAuth: opts.basicAuth,
            allowedHosts: opts.allowedHost,
            warn: (line) => void process.stderr.write(line + '\n'),
          });
        } catch (err) {
          // a refused option is a usage error (exit 2); the system refusing the listen (EADDRINUSE, EACCES) is not (exit 1)
          if ((err as NodeJS.ErrnoException)?.code !== undefined) throw err;
          throw new UsageError(err instanceof Error ? err.message : String(err));
        }
        const mode = opts.readOnly ? ' (read-only)' : '';
        cli.out.write(`Chronos console for namespace ${inspector.namespace} on ${srv.url}${mode}\n`);
        await new Promise<void>((resolve) => {
          const stop = () => resolve();
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
        await srv.close();
      }),
    );
}
