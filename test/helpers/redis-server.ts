import { spawn, type ChildProcess } from 'node:child_process';
import { ping, startRedisServer } from '../../scripts/redis-util.mjs';

/**
 * A private, non-persistent redis-server on a free loopback port that a test may shut down and
 * start again on the same port (dist-cases B04). Stopped by pid; never touches another Redis.
 */
export class PrivateRedis {
  private constructor(
    readonly port: number,
    private child: ChildProcess,
  ) {}

  /** @param extraArgs redis-server arguments, e.g. `['--maxmemory-policy', 'allkeys-lru']`. */
  static async start(extraArgs: string[] = []): Promise<PrivateRedis> {
    const { port, child } = await startRedisServer(extraArgs);
    return new PrivateRedis(port, child);
  }

  /** SIGSTOP: the server stops answering, its sockets stay open (a stalled Redis, a long fork, a VM pause). */
  pause(): void {
    this.child.kill('SIGSTOP');
  }

  /** SIGCONT after {@link pause}. */
  resume(): void {
    this.child.kill('SIGCONT');
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** `SHUTDOWN NOSAVE` (all data is lost), SIGKILL if it does not exit; waits for the exit. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    const cli = spawn('redis-cli', ['-p', String(this.port), 'SHUTDOWN', 'NOSAVE'], { stdio: 'ignore' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(timer);
    cli.kill();
  }

  /** Starts it again on the same port, empty. */
  async restart(): Promise<void> {
    await this.kill();
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    for (let i = 0; i < 200; i++) {
      if (await ping('127.0.0.1', this.port, 200)) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`redis-server did not come back on port ${this.port}`);
  }
}
