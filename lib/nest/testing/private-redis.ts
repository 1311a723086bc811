import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
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
    const deadline = performance.now() + 10_000;
    let port = at.port ?? (await freePort());
    for (let tries = 1; ; tries++) {
      const tag = `chronos-kit-${process.pid}-${randomUUID()}.rdb`; // never written: the server saves nothing
      const child = spawnServer(command, [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dbfilename',
        tag,
      ]);
      const answer = await answered(port, tag, child, deadline);
      if (answer === 'ours') return new PrivateRedisServer(port, child);
      end(child);
      // another server holds the port (taken between freePort() and the bind): its PONG is not ours
      if (answer === 'timeout' || tries === 5)
        throw new ChronosTestingError(
          answer === 'timeout'
            ? `the private redis-server did not answer PING on 127.0.0.1:${port} within 10 s`
            : `the private redis-server could not take a free port: ${tries} ports were taken by other servers before it bound them`,
        );
      port = await freePort();
    }
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

/** Starts `command` with `args`, supervised (see {@link SUPERVISOR}); never keeps this process alive. */
function spawnServer(command: string, args: string[]): ChildProcess {
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
  child.unref(); // stop() waits for it with a timer of its own
  return child;
}

/**
 * Waits until the server on `port` answers and says whether it is the one started with `tag` as its
 * `dbfilename` ('ours'), another one ('foreign': ours failed to bind the port), or nothing answered by
 * `deadline` or our child exited without a foreign answer ('timeout').
 */
async function answered(port: number, tag: string, child: ChildProcess, deadline: number): Promise<'ours' | 'foreign' | 'timeout'> {
  while (performance.now() < deadline && child.exitCode === null) {
    const reply = await ask(port, 'PING\r\nCONFIG GET dbfilename\r\n', tag);
    if (reply !== undefined) return reply.includes(tag) ? 'ours' : 'foreign';
    await new Promise((r) => setTimeout(r, 25));
  }
  return 'timeout';
}

/**
 * Sends `commands` (inline) to 127.0.0.1:port and resolves what came back: once it holds `until`, an
 * error reply (`-NOAUTH`…: a server, not ours) or the `CONFIG GET` reply, else after 200 ms;
 * undefined when nothing answered.
 */
function ask(port: number, commands: string, until: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let got = '';
    const done = () => {
      socket.destroy();
      resolve(got === '' ? undefined : got);
    };
    socket.setTimeout(200, done);
    socket.on('error', done);
    socket.on('connect', () => socket.write(commands));
    socket.on('data', (d) => {
      got += d.toString();
      if (got.includes(until) || got.startsWith('-') || /\r\n\*2\r\n\$\d+\r\ndbfilename\r\n\$\d+\r\n[^\r]*\r\n$/.test(got)) done();
    });
  });
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
