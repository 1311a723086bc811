// Helpers for the tests that run the sample app as real processes.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { deferred } from './wait.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** `node dist/sample/main.js` as `npm run sample` runs it, with its output collected. */
export class SampleMain {
  readonly proc: ChildProcess;
  output = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: { re: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];

  constructor(env: Record<string, string>) {
    const cleanEnv: Record<string, string> = { ...(process.env as Record<string, string>), NO_COLOR: '1', ...env };
    delete cleanEnv.NODE_OPTIONS;
    this.proc = spawn(process.execPath, ['dist/sample/main.js'], { cwd: ROOT, env: cleanEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    const exit = deferred<{ code: number | null; signal: NodeJS.Signals | null }>();
    this.exited = exit.promise;
    this.proc.on('exit', (code, signal) => exit.resolve({ code, signal }));
    const onData = (d: Buffer) => {
      this.output += d.toString();
      this.waiters = this.waiters.filter((w) => {
        const m = this.output.match(w.re);
        if (m) w.resolve(m);
        return !m;
      });
    };
    this.proc.stdout!.on('data', onData);
    this.proc.stderr!.on('data', onData);
  }

  /** Resolves when the output (so far or later) matches `re`; rejects if the process exits first. */
  line(re: RegExp): Promise<RegExpMatchArray> {
    const m = this.output.match(re);
    if (m) return Promise.resolve(m);
    return Promise.race([
      new Promise<RegExpMatchArray>((resolve) => this.waiters.push({ re, resolve })),
      this.exited.then(({ code, signal }) => {
        throw new Error(`the sample exited (code=${code} signal=${signal}) before printing ${re}:\n${this.output}`);
      }),
    ]);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
  }
}
