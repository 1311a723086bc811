import { spawn, type ChildProcess } from 'node:child_process';
import { ping, startRedisServer } from '../../scripts/redis-util.mjs';
import { waitFor } from './wait.js';

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
    this.child.kill('SIGCONT'); // a stopped server could not answer SHUTDOWN
    const exited = new Promise((r) => this.child.once('exit', r));
    const cli = spawn('redis-cli', ['-p', String(this.port), 'SHUTDOWN', 'NOSAVE'], { stdio: 'ignore' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(timer);
    cli.kill();
  }

  /** SIGSTOPs the server: connections stay open, nothing is answered (a hung Redis) until {@link cont}. */
  stop(): void {
    this.child.kill('SIGSTOP');
  }

  /** SIGCONTs a stopped server: every command queued meanwhile is answered at once. */
  cont(): void {
    this.child.kill('SIGCONT');
  }

  /**
   * `SHUTDOWN SAVE` (an RDB snapshot of everything: streams, pending entries lists, keys) into `dir`,
   * which it must have been started with (`start(['--dir', dir])`: Redis 7 refuses `CONFIG SET dir`),
   * then starts it again on the same port from that snapshot, with `extraArgs`. A restart that keeps
   * the data, as a persistent Redis does; clients see their connections drop and come back.
   */
  async restartKeepingData(dir: string, extraArgs: string[] = []): Promise<void> {
    await this.stopSaving();
    this.startFrom(dir, extraArgs);
    await this.answering();
  }

  /** The first half of {@link restartKeepingData}: `SHUTDOWN SAVE` into the directory it was started with; waits for the exit. */
  async stopSaving(): Promise<void> {
    this.child.kill('SIGCONT');
    const exited = new Promise((r) => this.child.once('exit', r));
    spawn('redis-cli', ['-p', String(this.port), 'SHUTDOWN', 'SAVE'], { stdio: 'ignore' });
    await exited;
  }

  /**
   * The second half: starts the server again on the same port from the snapshot in `dir`, with
   * `extraArgs`, and returns at once — while it loads the snapshot it accepts connections and
   * answers `INFO` (`loading:1`), other commands get `-LOADING`. Then {@link answering}.
   */
  startFrom(dir: string, extraArgs: string[] = []): void {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs];
    this.child = spawn('redis-server', args, { stdio: 'ignore' });
  }

  /** Resolves once the server answers `PING` (its data loaded), within 30 s. */
  async answering(): Promise<void> {
    await waitFor(() => ping('127.0.0.1', this.port, 200), {
      what: `redis-server to answer PING again on port ${this.port}`,
      timeoutMs: 30_000,
    });
  }

  /** Starts it again on the same port, empty. */
  async restart(): Promise<void> {
    await this.kill();
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await waitFor(() => ping('127.0.0.1', this.port, 200), {
      what: `redis-server to answer PING again on port ${this.port}`,
      timeoutMs: 10_000,
    });
  }
}
