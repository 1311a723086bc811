// Parent side: forks a compiled bench child (dist/bench/children/<file>.js), talks to it over IPC.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, ParentMessage } from './protocol.js';

const running = new Set<BenchChild>();

export interface StartOptions {
  /** Write a V8 CPU profile of the child into this directory (node --cpu-prof). */
  cpuProfDir?: string;
  /** How long to wait for `ready`, ms. */
  readyTimeoutMs?: number;
  /** Extra Node flags for the child (e.g. `--expose-gc`). */
  nodeArgs?: string[];
}

export class BenchChild {
  readonly messages: ChildMessage[] = [];
  /** The child's `ready` message (what it reported about its start). */
  ready: ChildMessage = { type: 'ready' };
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private output = '';
  private waiters: { pred: (m: ChildMessage) => boolean; resolve: (m: ChildMessage) => void }[] = [];
  private listeners: ((m: ChildMessage) => void)[] = [];

  private constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
    proc.on('message', (raw) => {
      const m = raw as ChildMessage;
      for (const l of this.listeners) l(m);
      const w = this.waiters.find((x) => x.pred(m));
      if (w) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(m);
      } else this.messages.push(m);
    });
    const keep = (d: Buffer) => {
      this.output = (this.output + d.toString()).slice(-20_000);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    proc.on('error', () => {});
  }

  /** Forks `children/<file>.js` with its config in BENCH_CONFIG and waits for its `ready` message. */
  static async start(file: string, name: string, config: Record<string, unknown>, options: StartOptions = {}): Promise<BenchChild> {
    const path = fileURLToPath(new URL(`../children/${file}.js`, import.meta.url));
    const execArgv: string[] = [...(options.nodeArgs ?? [])];
    if (options.cpuProfDir) {
      mkdirSync(options.cpuProfDir, { recursive: true });
      execArgv.push(
        '--cpu-prof',
        '--cpu-prof-interval',
        '100',
        '--cpu-prof-dir',
        options.cpuProfDir,
        '--cpu-prof-name',
        `${name}-${process.hrtime.bigint()}.cpuprofile`,
      );
    }
    const env: NodeJS.ProcessEnv = { ...process.env, BENCH_CONFIG: JSON.stringify(config) };
    delete env.NODE_OPTIONS;
    const proc = fork(path, [], { env, execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const child = new BenchChild(name, proc);
    running.add(child);
    void child.exited.then(() => running.delete(child));
    child.ready = await child.waitFor('ready', options.readyTimeoutMs ?? 30_000);
    return child;
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  get pid(): number {
    return this.proc.pid!;
  }

  send(m: ParentMessage): void {
    if (this.alive && this.proc.connected) this.proc.send(m);
  }

  /** Calls `fn` for every message from now on (messages are also kept for waitFor). */
  listen(fn: (m: ChildMessage) => void): void {
    this.listeners.push(fn);
  }

  /**
   * Resolves with the first message of `type` (already received or future) matching `pred`;
   * rejects when the child exits first or after `timeoutMs`, with the child's last output.
   */
  waitFor(type: string, timeoutMs: number, pred: (m: ChildMessage) => boolean = () => true): Promise<ChildMessage> {
    const match = (m: ChildMessage) => (m.type === type && pred(m)) || m.type === 'error';
    const seen = this.messages.findIndex(match);
    const check = (m: ChildMessage): ChildMessage => {
      if (m.type === 'error') throw new Error(`bench child ${this.name} failed: ${String(m.message)}\n--- output ---\n${this.output}`);
      return m;
    };
    if (seen >= 0) {
      try {
        return Promise.resolve(check(this.messages.splice(seen, 1)[0]));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        pred: match,
        resolve: (m: ChildMessage) => {
          clearTimeout(timer);
          try {
            resolve(check(m));
          } catch (err) {
            reject(err);
          }
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`bench child ${this.name}: no "${type}" message within ${timeoutMs} ms\n--- output ---\n${this.output}`));
      }, timeoutMs);
      this.waiters.push(waiter);
      void this.exited.then(({ code, signal }) => {
        if (!this.waiters.includes(waiter)) return;
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        clearTimeout(timer);
        reject(
          new Error(`bench child ${this.name} exited (code=${code} signal=${signal}) before "${type}"\n--- output ---\n${this.output}`),
        );
      });
    });
  }

  /** Resolves with `p`; rejects if this child exits first or `timeoutMs` passes. */
  async within<T>(p: Promise<T>, timeoutMs: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const fail = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`bench child ${this.name}: ${what} did not happen within ${timeoutMs} ms\n--- output ---\n${this.output}`)),
        timeoutMs,
      );
      void this.exited.then(({ code, signal }) =>
        reject(new Error(`bench child ${this.name} exited (code=${code} signal=${signal}) before ${what}\n--- output ---\n${this.output}`)),
      );
    });
    try {
      return await Promise.race([p, fail]);
    } finally {
      clearTimeout(timer);
    }
  }

  kill(signal: NodeJS.Signals): void {
    if (this.alive) this.proc.kill(signal);
  }

  /** Asks the child to exit (it closes its connections, and writes its CPU profile if any); SIGKILL after `graceMs`. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.alive) return;
    this.send({ type: 'exit' });
    const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  get lastOutput(): string {
    return this.output;
  }
}

/** SIGKILLs every bench child still running (on errors and at exit: never leave a process behind). */
export async function killAllChildren(): Promise<void> {
  const all = [...running];
  for (const c of all) c.kill('SIGKILL');
  await Promise.all(all.map((c) => c.exited));
}

export function killAllChildrenSync(): void {
  for (const c of running) c.kill('SIGKILL');
}
