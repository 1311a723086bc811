// The Redis the benchmark runs on: a private redis-server on a free loopback port (default), or an
// existing one given with --redis-url (then nothing is flushed or reset, and keys are deleted by prefix).
import { Redis } from 'ioredis';

interface RedisUtil {
  startRedisServer(extraArgs?: string[]): Promise<{ url: string; port: number; child: import('node:child_process').ChildProcess }>;
  hasRedisServer(): boolean;
  HOW_TO_GET_REDIS: string;
}

/** One reading of `INFO cpu commandstats`. */
export interface Snapshot {
  /** used_cpu_sys + used_cpu_user, seconds */
  cpuSec: number;
  /** calls per command (`cmdstat_<name>` → calls), inner calls of scripts included */
  calls: Record<string, number>;
  /** µs spent in each command (`cmdstat_<name>` → usec; a script's inner calls are in its own too) */
  usec: Record<string, number>;
  /** calls that failed or were rejected, per command (Redis >= 7: `rejected_calls` + `failed_calls`) */
  failed: Record<string, number>;
  /**
   * `INFO stats` counters (Redis >= 6 with `multiSection`): `total_reads_processed` and
   * `total_writes_processed` (socket reads and writes: one per event-loop wake per client with
   * input, one per reply flush), `total_net_input_bytes`, `total_net_output_bytes`; 0 when absent. `errors`: INFO errorstats, error replies by prefix (`MOVED`, `ASK`, `NOSCRIPT`…).
   */
  io: { reads: number; writes: number; inBytes: number; outBytes: number; errors: Record<string, number> };
  at: number;
}

/** What happened in Redis between two snapshots. */
export interface Delta {
  /** all commands, script-inner calls included, minus the benchmark's own (INFO snapshots, done-polling) */
  commands: number;
  byCommand: Record<string, number>;
  /** Redis CPU, µs */
  cpuUs: number;
  ms: number;
}

/** One `INFO cpu commandstats` reading on `admin` (`multiSection`: Redis >= 7 takes both sections in one INFO). */
export async function readSnapshot(admin: Redis, multiSection: boolean): Promise<Snapshot> {
  const text = multiSection
    ? ((await admin.call('INFO', 'cpu', 'commandstats', 'stats', 'errorstats')) as string)
    : (await admin.info('cpu')) + (await admin.info('commandstats'));
  const calls: Record<string, number> = {};
  const usec: Record<string, number> = {};
  const failed: Record<string, number> = {};
  const io = { reads: 0, writes: 0, inBytes: 0, outBytes: 0, errors: {} as Record<string, number> };
  const ioKeys: Record<string, 'reads' | 'writes' | 'inBytes' | 'outBytes'> = {
    total_reads_processed: 'reads',
    total_writes_processed: 'writes',
    total_net_input_bytes: 'inBytes',
    total_net_output_bytes: 'outBytes',
  };
  let cpuSec = 0;
  for (const line of text.split(/\r?\n/)) {
    const cmd = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (cmd) {
      calls[cmd[1]] = Number(cmd[2]);
      usec[cmd[1]] = Number(cmd[3]);
      const f = /rejected_calls=(\d+),failed_calls=(\d+)/.exec(line);
      if (f) failed[cmd[1]] = Number(f[1]) + Number(f[2]);
    }
    const cpu = /^used_cpu_(sys|user):([0-9.]+)/.exec(line);
    if (cpu) cpuSec += Number(cpu[2]);
    const stat = /^(total_\w+):(\d+)/.exec(line);
    if (stat && ioKeys[stat[1]]) io[ioKeys[stat[1]]] = Number(stat[2]);
    const err = /^errorstat_([^:]+):count=(\d+)/.exec(line);
    if (err) io.errors[err[1]] = Number(err[2]);
  }
  return { cpuSec, calls, usec, failed, io, at: Date.now() };
}

export class BenchRedis {
  private constructor(
    readonly url: string,
    readonly own: boolean,
    readonly version: string,
    private readonly admin: Redis,
    private readonly multiSectionInfo: boolean,
    private readonly server?: import('node:child_process').ChildProcess,
  ) {}

  /** Starts a private redis-server (default) or connects to `externalUrl`. */
  static async open(externalUrl?: string): Promise<BenchRedis> {
    let url = externalUrl;
    let server: import('node:child_process').ChildProcess | undefined;
    if (!url) {
      const util = (await import(new URL('../../../scripts/redis-util.mjs', import.meta.url).href)) as RedisUtil;
      if (!util.hasRedisServer()) {
        throw new Error(
          'redis-server is not installed, and the benchmark starts its own private Redis by default (so its command counts and CPU are not polluted). ' +
            "Install Redis >= 6.2, or run on an existing Redis with `npm run bench -- --redis-url redis://host:port` (numbers then include other clients' traffic).",
        );
      }
      const started = await util.startRedisServer();
      url = started.url;
      server = started.child;
    }
    const admin = new Redis(url, { maxRetriesPerRequest: 3 });
    const info = await admin.info('server');
    const version = /redis_version:([0-9.]+)/.exec(info)?.[1] ?? '0';
    const [major] = version.split('.').map(Number);
    return new BenchRedis(url, !externalUrl, version, admin, major >= 7, server);
  }

  /** Reads Redis CPU and per-command call counts. */
  snapshot(): Promise<Snapshot> {
    return readSnapshot(this.admin, this.multiSectionInfo);
  }

  /**
   * `after − before`, minus the benchmark's own commands: the INFO of the `before` snapshot (counted
   * once it has run) and whatever `harness` lists (e.g. a child's done-polling).
   */
  delta(before: Snapshot, after: Snapshot, harness: Record<string, number> = {}): Delta {
    const byCommand: Record<string, number> = {};
    const own: Record<string, number> = { info: this.multiSectionInfo ? 1 : 2 };
    for (const [k, v] of Object.entries(harness)) own[k] = (own[k] ?? 0) + v;
    let commands = 0;
    for (const [name, calls] of Object.entries(after.calls)) {
      const d = calls - (before.calls[name] ?? 0) - (own[name] ?? 0);
      if (d > 0) {
        byCommand[name] = d;
        commands += d;
      }
    }
    return { commands, byCommand, cpuUs: Math.max(0, (after.cpuSec - before.cpuSec) * 1e6), ms: after.at - before.at };
  }

  /**
   * Removes a finished run's keys: SCAN + UNLINK of `<prefix>:*` only (never a flush: runs of
   * workload 6 overlap, and an external Redis is not ours).
   */
  async clean(prefix: string): Promise<void> {
    let cursor = '0';
    do {
      const [next, keys] = await this.admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length) await this.admin.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  }

  /** The pid of the private redis-server (undefined on an external Redis). */
  get pid(): number | undefined {
    return this.server?.pid;
  }

  /** The admin connection (setup work outside measured windows only). */
  get client(): Redis {
    return this.admin;
  }

  async close(): Promise<void> {
    this.admin.disconnect();
    if (this.server && this.server.exitCode === null) {
      this.server.kill('SIGTERM');
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          this.server?.kill('SIGKILL');
          resolve();
        }, 2000);
        this.server!.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  killSync(): void {
    if (this.server && this.server.exitCode === null) this.server.kill('SIGKILL');
  }
}
