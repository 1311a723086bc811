// The two private redis-servers of a chaos run, both on free loopback ports (never the shared 6379):
// the chaos Redis (AOF on, appendfsync everysec, in a temporary directory; stopped and started
// again on the same port with the same directory during the run) and the records Redis (no
// persistence, never restarted). Both are stopped by their pid; nothing else is ever signalled.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, ping, startRedisServer } from '../../scripts/redis-util.mjs';
import { sleep } from '../lib/time.js';

/** How the chaos Redis is stopped: `SHUTDOWN` and SIGTERM fsync the AOF before exiting; SIGKILL does not. */
export type RedisStop = 'shutdown' | 'sigterm' | 'sigkill';

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export class ChaosRedis {
  private child?: ChildProcess;
  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  /** Starts a redis-server with AOF on, on a free port, in a fresh temporary directory. */
  static async start(): Promise<ChaosRedis> {
    const r = new ChaosRedis(await freePort(), mkdtempSync(join(tmpdir(), 'chronos-chaos-')));
    await r.launch();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the server (again) on the same port with the same AOF directory; resolves once it answers PING (AOF loaded). */
  async launch(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec'];
    args.push('--dir', this.dir, '--logfile', join(this.dir, 'redis.log'));
    this.child = spawn('redis-server', args, { stdio: 'ignore' });
    for (let n = 0; n < 400; n++) {
      if (await ping('127.0.0.1', this.port, 200)) return;
      if (!this.running) break;
      await sleep(25);
    }
    throw new Error(`chaos redis-server did not answer on 127.0.0.1:${this.port} (log: ${join(this.dir, 'redis.log')})`);
  }

  /** Stops the server the given way and waits for its exit (SIGKILL after 10 s). */
  async stop(how: RedisStop): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const done = exited(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    if (how === 'shutdown') {
      const admin = new Redis(this.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
      admin.on('error', () => {});
      await admin.call('SHUTDOWN').catch(() => {}); // the reply is the closed connection
      admin.disconnect();
    } else child.kill(how === 'sigterm' ? 'SIGTERM' : 'SIGKILL');
    await done;
    clearTimeout(timer);
  }

  /** Stops it (gracefully) and removes its directory. */
  async close(): Promise<void> {
    await this.stop('sigterm');
    rmSync(this.dir, { recursive: true, force: true });
  }

  killSync(): void {
    if (this.running) this.child!.kill('SIGKILL');
  }
}

/** The records Redis: a plain private redis-server (scripts/redis-util.mjs), never restarted. */
export class RecordsRedis {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
  ) {}

  static async start(): Promise<RecordsRedis> {
    const { url, child } = await startRedisServer();
    return new RecordsRedis(url, child);
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const done = exited(this.child);
    this.child.kill('SIGTERM');
    await done;
  }

  killSync(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}
