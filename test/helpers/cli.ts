// Runs the `chronos` CLI as a child process (dist/lib/cli/main.js) against the test Redis and a namespace.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { redisUrl } from './redis.js';

/** The compiled CLI entry point. */
export const CLI_MAIN = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

/** What one CLI run gave: exit code, stdout, stderr and how long it took (ms). */
export interface Ran {
  code: number;
  out: string;
  err: string;
  ms: number;
}

/** A runner of the CLI on the namespace `namespace()` returns (read at each call: set in beforeAll). */
export function cliRunner(namespace: () => string): {
  chronos: (...args: string[]) => Promise<Ran>;
  json: <T = Record<string, unknown>>(...args: string[]) => Promise<T>;
} {
  const chronos = (...args: string[]): Promise<Ran> => {
    const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redisUrl(), CHRONOS_NAMESPACE: namespace() };
    delete env.NODE_OPTIONS;
    const t0 = Date.now();
    return new Promise((resolve) => {
      execFile(process.execPath, [CLI_MAIN, ...args], { env, timeout: 20_000 }, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, out: stdout, err: stderr, ms: Date.now() - t0 });
      });
    });
  };
  const json = async <T = Record<string, unknown>>(...args: string[]): Promise<T> => {
    const r = await chronos('--json', ...args);
    if (r.code !== 0) throw new Error(`chronos ${args.join(' ')} exited ${r.code}: ${r.err}`);
    return JSON.parse(r.out) as T;
  };
  return { chronos, json };
}
