import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deferred } from './wait.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A fixture process (compiled to dist/ by `npm test`'s build step), with its IPC messages and exit. */
export class Child {
  readonly messages: Record<string, unknown>[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output = '';
  private waiters: { pred: (m: Record<string, unknown>) => boolean; resolve: (m: Record<string, unknown>) => void }[] = [];

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    const exit = deferred<{ code: number | null; signal: NodeJS.Signals | null }>();
    this.exited = exit.promise;
    proc.on('exit', (code, signal) => exit.resolve({ code, signal }));
    proc.on('message', (m) => {
      const msg = m as Record<string, unknown>;
      this.messages.push(msg);
      this.waiters = this.waiters.filter((w) => {
        if (!w.pred(msg)) return true;
        w.resolve(msg);
        return false;
      });
    });
    proc.stdout?.on('data', (d) => (this.output += d));
    proc.stderr?.on('data', (d) => (this.output += d));
  }

  get pid(): number {
    return this.proc.pid!;
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Resolves with the first IPC message (already received or future) matching `pred`. */
  message(pred: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    const seen = this.messages.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  kill(signal: NodeJS.Signals): void {
    if (this.alive) this.proc.kill(signal);
  }
}

const running = new Set<Child>();

/**
 * Forks `dist/test/fixtures/<fixture>.js` with `env` and waits for its `{ event: 'ready' }` message.
 * @throws when the fixture exits before it is ready (its output is in the message).
 */
export async function startChild(fixture: string, name: string, env: Record<string, string | number | undefined>): Promise<Child> {
  const file = `${ROOT}dist/test/fixtures/${fixture}.js`;
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` (npm test does it) first`);
  const cleanEnv: Record<string, string> = { ...(process.env as Record<string, string>), NAME: name };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) cleanEnv[k] = String(v);
  delete cleanEnv.NODE_OPTIONS; // jest's --experimental-vm-modules is not for the children
  const proc = fork(file, [], { env: cleanEnv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const child = new Child(name, proc);
  running.add(child);
  void child.exited.then(() => running.delete(child));
  const ready = child.message((m) => m.event === 'ready');
  const early = child.exited.then(({ code, signal }) => {
    throw new Error(`fixture ${fixture} (${name}) exited before ready (code=${code} signal=${signal}):\n${child.output}`);
  });
  await Promise.race([ready, early]);
  return child;
}

/** SIGKILLs every fixture still running (afterEach safety net: never leaves a process behind). */
export async function killAllChildren(): Promise<void> {
  const all = [...running];
  for (const c of all) c.kill('SIGKILL');
  await Promise.all(all.map((c) => c.exited));
}

/** Sends SIGTERM and resolves with the exit. */
export async function stopChild(child: Child): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  child.kill('SIGTERM');
  return child.exited;
}
