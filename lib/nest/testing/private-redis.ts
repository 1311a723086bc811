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
   * Starts one and waits until it answers PING (up to 10 s). It does not keep the process alive,
   * and is killed when the process exits, should the module never be closed.
   * @param command the redis-server executable: a name looked up on the PATH, or a path.
   * @throws ChronosTestingError when `command` cannot be run or the server does not answer.
   */
  static async start(command = 'redis-server'): Promise<PrivateRedisServer> {
    PrivateRedisServer.check(command);
    const port = await freePort();
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    const child = spawn(command, args, { stdio: 'ignore' });
    // never what keeps the test process alive (a boot that failed after the start runs no shutdown
    // hook): the process's exit kills it; stop() waits for it with a timer of its own
    child.unref();
    const kill = () => child.kill('SIGKILL');
    process.once('exit', kill);
    child.once('exit', () => process.off('exit', kill));
    const deadline = performance.now() + 10_000;
    while (performance.now() < deadline && child.exitCode === null) {
      if (await ping(port)) return new PrivateRedisServer(port, child);
      await new Promise((r) => setTimeout(r, 25));
    }
    child.kill('SIGKILL');
    throw new ChronosTestingError(`the private redis-server did not answer PING on 127.0.0.1:${port} within 10 s`);
  }

  /** Stops it (SIGTERM: it exits without saving) and waits for the exit (SIGKILL after 2 s). */
  async stop(): Promise<void> {
    const c = this.child;
    if (c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(timer);
  }
}
