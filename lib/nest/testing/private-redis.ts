import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { ChronosTestingError } from './testing-error.js';

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
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

/** PING on host:port; true on +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(200, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/**
 * A private, non-persistent `redis-server` on a free loopback port, for `mode: 'redis'` of the
 * testing module: started when the module is created, stopped (SIGTERM, no save) at shutdown.
 * @internal
 */
export class PrivateRedisServer {
  private constructor(
    /** The port it listens on (127.0.0.1). */
    readonly port: number,
    private readonly child: ChildProcess,
  ) {}

  /** `redis://127.0.0.1:<port>`. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /**
   * Checks that `command` runs (`--version`), so a missing redis-server is reported when the
   * testing module is declared, before Nest builds anything.
   * @throws ChronosTestingError when `command` cannot be run.
   */
  static check(command = 'redis-server'): void {
    if (spawnSync(command, ['--version'], { stdio: 'ignore' }).status !== 0) {
      throw new ChronosTestingError(
        `ChronosTestingModule mode 'redis' starts a private redis-server, but \`${command}\` ${command.includes('/') ? 'cannot be run' : 'is not on the PATH'}: ` +
          "install Redis >= 6.2 (e.g. `apt-get install redis-server`, `brew install redis`) or pass its path as `redisServer`, or use mode 'manual' or 'inline', which need no Redis.",
      );
    }
  }

  /**
   * Starts one and waits until it answers PING (up to 10 s). It does not keep the process alive, and
   * it ends with the process, however that ends (exit, a signal, SIGKILL): it is started by a `sh`
   * that stops it when its stdin, a pipe from this process, closes — the OS closes the pipe when
   * this process is gone. (A `process.on('exit')` listener does not do: a signal ends the process
   * without it, and Jest's test context has a process object of its own whose 'exit' never fires.)
   * On Windows the server is started directly and killed at the process's exit.
   * @param command the redis-server executable: a name looked up on the PATH, or a path.
   * @param at `port`: the port to try first instead of a free one (tests of the port race).
   * @throws ChronosTestingError when `command` cannot be run, the test has fake timers on, or the server does not answer.
   */
  static async start(command = 'redis-server', at: { port?: number } = {}): Promise<PrivateRedisServer> {
    PrivateRedisServer.check(command);
    if (fakeTimersOn())
      throw new ChronosTestingError(
        "ChronosTestingModule mode 'redis' runs the real engine, on real timers (connections, leases, heartbeats, retries), " +
          'but this test has fake timers on (jest.useFakeTimers() or vi.useFakeTimers(); fakeTimers in the config): nothing would ever answer. ' +
          "Use real timers in the tests of a redis-mode module (jest.useRealTimers()), or mode 'manual' or 'inline', whose virtual clock needs no timers.",
      );
    const port = at.port ?? (await freePort());
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    let child: ChildProcess;
    if (process.platform === 'win32') {
      child = spawn(command, args, { stdio: 'ignore' });
      const kill = () => child.kill('SIGKILL');
      process.once('exit', kill);
      child.once('exit', () => process.off('exit', kill));
    } else {
      child = spawn('sh', ['-c', SUPERVISOR, command, ...args], { stdio: ['pipe', 'ignore', 'ignore'] });
      (child.stdin as unknown as { unref(): void }).unref();
    }
    child.unref(); // never what keeps the test process alive; stop() waits for it with a timer of its own
    const deadline = performance.now() + 10_000;
    while (performance.now() < deadline && child.exitCode === null) {
      if (await ping(port)) return new PrivateRedisServer(port, child);
      await new Promise((r) => setTimeout(r, 25));
    }
    end(child);
    throw new ChronosTestingError(`the private redis-server did not answer PING on 127.0.0.1:${port} within 10 s`);
  }

  /** Stops it (it exits without saving) and waits for the exit (SIGKILL after 2 s). */
  async stop(): Promise<void> {
    const c = this.child;
    if (c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    end(c);
    const timer = setTimeout(() => c.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(timer);
  }
}

/** Whether the test runner's fake timers replace setTimeout now (@sinonjs/fake-timers, behind Jest's and Vitest's, marks its fakes with `clock`; Jest's legacy fakes are mocks). */
function fakeTimersOn(): boolean {
  const t = globalThis.setTimeout as unknown as { clock?: unknown; _isMockFunction?: boolean };
  return t.clock !== undefined || t._isMockFunction === true;
}

/** Asks a server (its supervisor: by closing its stdin) to stop. */
function end(child: ChildProcess): void {
  if (child.stdin) child.stdin.end();
  else child.kill('SIGTERM');
}

/**
 * `sh -c` script that runs `$0 $@` (redis-server and its arguments) and stops it (SIGTERM, then
 * waits for it) when its stdin reaches its end — this process closed the pipe, or is gone — or when
 * it is sent SIGTERM itself.
 */
const SUPERVISOR = [
  '"$0" "$@" </dev/null &',
  'pid=$!',
  "trap 'kill -TERM $pid 2>/dev/null; wait $pid; exit 0' TERM",
  'while read -r _; do :; done',
  'kill -TERM $pid 2>/dev/null',
  'wait $pid',
].join('\n');
