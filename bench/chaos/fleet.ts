// The chaos rig's processes: forks the compiled fixtures of bench/chaos, counts their output lines
// per second (log floods), tracks who leads (from the replicas' IPC), and injects the faults —
// SIGKILL + restart, SIGTERM + restart, SIGSTOP … SIGCONT, a step of a replica's wall clock and back
// (IPC), a silent partition of a replica's Redis connection and its heal (each replica reaches the
// chaos Redis through its own loopback TCP proxy) — only ever on processes it forked.
import { fork, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { SchedulerKeys } from '../../lib/core/internal.js';
import { TcpProxy } from '../../test/helpers/tcp-proxy.js';
import { nowMs, sleep } from '../lib/time.js';
import { FLEET, type ProducerConfig, type ReplicaConfig } from './common.js';

export type FaultKind = 'sigkill' | 'sigstop' | 'sigterm' | 'clockstep' | 'partition';

/** A fault as injected: `at` and `contAt` are local epoch ms. */
export interface Fault {
  kind: FaultKind;
  at: number;
  name: string;
  /** The victim held the lease when it was signalled (read from Redis; from the replicas' IPC reports while Redis is down). */
  wasLeader: boolean;
  /** SIGSTOP: when SIGCONT was sent. */
  contAt?: number;
  /** Clock step: how far the wall clock was stepped, ms (+ ahead, − behind), and as the replica reported it (rounded). */
  stepMs?: number;
  stepSeenMs?: number;
  /** Clock step: when it was stepped back; partition: when it was healed. */
  endAt?: number;
  /** SIGTERM: exit code, and whether it had to be SIGKILLed after 15 s. */
  exitCode?: number | null;
  hung?: boolean;
}

/** An exit the rig did not cause. */
export interface Crash {
  name: string;
  at: number;
  code: number | null;
  signal: string | null;
  tail: string;
}

/** One process's output: lines per second (key: epoch second) and its most repeated messages. */
export interface OutputStats {
  name: string;
  lines: number;
  perSecond: Map<number, number>;
  messages: Map<string, number>;
}

/** A forked fixture with its output counted line by line from the first byte. */
export class ChaosProcess {
  readonly proc: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  readonly output: OutputStats;
  /** Set before the rig signals or stops it: its exit is then not a crash. */
  expectExit = false;
  /** Its `Date.now()` − its monotonic clock as it last reported after a clock step, ms (the step as seen). */
  wallMinusTrueMs?: number;
  private tail: string[] = [];
  private ready = false;
  /** Every line of its output, each prefixed with the rig's clock when it was read (see {@link logLine}). */
  private readonly log?: WriteStream;

  /** `logDir`: where its output is kept, as `<logDir>/<name>.log` (undefined: only counted). */
  constructor(
    readonly name: string,
    file: string,
    config: ReplicaConfig | ProducerConfig,
    onMessage: (p: ChaosProcess, m: { type: string; [k: string]: unknown }) => void,
    logDir?: string,
  ) {
    const path = fileURLToPath(new URL(`./${file}.js`, import.meta.url));
    const env: NodeJS.ProcessEnv = { ...process.env, BENCH_CONFIG: JSON.stringify(config) };
    delete env.NODE_OPTIONS;
    this.proc = fork(path, [], { env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    this.output = { name, lines: 0, perSecond: new Map(), messages: new Map() };
    if (logDir) this.log = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal, at: nowMs() })));
    // 'close': after the exit and the last output (its streams are closed)
    this.proc.on('close', (code, signal) => this.log?.end(logLine(`(exited: code=${code} signal=${signal})`)));
    this.proc.on('error', () => {});
    this.proc.on('message', (m) => {
      const msg = m as { type: string };
      if (msg.type === 'ready') this.ready = true;
      if (msg.type === 'stepped') this.wallMinusTrueMs = (msg as { wallMinusTrueMs?: number }).wallMinusTrueMs;
      onMessage(this, msg);
    });
    for (const stream of [this.proc.stdout!, this.proc.stderr!]) {
      let partial = '';
      stream.on('data', (d: Buffer) => {
        const parts = (partial + d.toString()).split('\n');
        partial = parts.pop()!;
        for (const line of parts) this.count(line);
      });
    }
  }

  private count(line: string): void {
    this.log?.write(logLine(line));
    const o = this.output;
    o.lines++;
    const second = Math.floor(nowMs() / 1000);
    o.perSecond.set(second, (o.perSecond.get(second) ?? 0) + 1);
    // a message's shape: no timestamp, numbers as #
    const shape = line
      .replace(/^\S+Z\s+/, '')
      .replace(/\d+/g, '#')
      .slice(0, 160);
    if (o.messages.has(shape) || o.messages.size < 1000) o.messages.set(shape, (o.messages.get(shape) ?? 0) + 1);
    this.tail = [...this.tail.slice(-19), line];
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  get lastLines(): string {
    return this.tail.join('\n');
  }

  /** Resolves once the fixture sent `ready`; rejects when it exits first or after `timeoutMs`. */
  async waitReady(timeoutMs = 60_000): Promise<void> {
    const until = nowMs() + timeoutMs;
    while (!this.ready) {
      if (!this.alive) throw new Error(`${this.name} exited before it was ready:\n${this.lastLines}`);
      if (nowMs() > until) throw new Error(`${this.name} was not ready within ${timeoutMs} ms:\n${this.lastLines}`);
      await sleep(20);
    }
  }

  signal(sig: NodeJS.Signals): void {
    if (this.alive) this.proc.kill(sig);
  }
}

/**
 * One line of a kept log: the rig's clock when the line was read (`nowMs()`, epoch ms: the clock of
 * the records' `t`, which no clock step of a replica moves) as ISO time, then the line.
 */
export function logLine(line: string): string {
  return `${new Date(nowMs()).toISOString()} | ${line}\n`;
}

interface Slot {
  index: number;
  incarnation: number;
  proc: ChaosProcess;
  /** The slot's proxy to the chaos Redis (kept across incarnations): a partition blackholes it. */
  proxy: TcpProxy;
  /** 'up', or busy with a fault (stopped, stopping, restarting): not a target meanwhile. */
  state: 'up' | 'busy';
}

/** The five replicas (slots r1 … r5, each process named `r<slot>.<incarnation>`), restarted after faults and crashes. */
export class Fleet {
  readonly faults: Fault[] = [];
  readonly crashes: Crash[] = [];
  /** Every process ever started, for the output statistics. */
  readonly processes: ChaosProcess[] = [];
  /** The leader by the replicas' own IPC reports (acquired / lost). */
  leader?: string;
  private readonly slots: Slot[] = [];
  private closing = false;
  private readonly admin: Redis;
  private readonly leaseKey: string;

  /** `logDir`: where each replica's output is kept (`<logDir>/r<slot>.<incarnation>.log`); undefined: not kept. */
  constructor(
    private readonly base: Omit<ReplicaConfig, 'name' | 'clockUrl'>,
    private readonly logDir?: string,
  ) {
    this.admin = new Redis(base.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 300 });
    this.admin.on('error', () => {});
    this.leaseKey = new SchedulerKeys(base.namespace).shards;
  }

  /**
   * Who leads shard 0 now (its lease `<instance>|<term>|<expiresAtMs>` in Redis): "the leader" the
   * faults aim at (every replica leads about 16 ÷ 5 shards); the IPC view when Redis does not answer.
   */
  async holder(): Promise<string | undefined> {
    try {
      const v = await this.admin.hget(this.leaseKey, '0');
      return v ? v.split('|').slice(0, -2).join('|') : undefined;
    } catch {
      return this.leader;
    }
  }

  /** Starts the five replicas, each behind its own proxy to the chaos Redis, and waits until all are ready. */
  async start(): Promise<void> {
    const { hostname, port } = new URL(this.base.url);
    for (let index = 1; index <= FLEET.replicas; index++) {
      const proxy = await TcpProxy.start({ host: hostname, port: Number(port) });
      const slot: Slot = { index, incarnation: 0, proc: undefined as unknown as ChaosProcess, proxy, state: 'busy' };
      this.slots.push(slot);
      this.launch(slot);
    }
    await Promise.all(this.slots.map((s) => s.proc.waitReady()));
    for (const s of this.slots) s.state = 'up';
  }

  private launch(slot: Slot): void {
    slot.incarnation++;
    const name = `r${slot.index}.${slot.incarnation}`;
    // the engine goes through the slot's proxy; the replica's Redis-time measurement (the judge of early) does not
    const config: ReplicaConfig = { ...this.base, url: slot.proxy.url, clockUrl: this.base.url, name };
    const p = new ChaosProcess(
      name,
      'replica',
      config,
      (proc, m) => {
        if (m.type !== 'leader' || !(m.shards as number[] | undefined)?.includes(0)) return;
        if (m.acquired) this.leader = proc.name;
        else if (this.leader === proc.name) this.leader = undefined;
      },
      this.logDir,
    );
    slot.proc = p;
    this.processes.push(p);
    void p.exited.then(({ code, signal, at }) => {
      if (this.leader === p.name) this.leader = undefined;
      if (p.expectExit || this.closing) return;
      this.crashes.push({ name: p.name, at, code, signal, tail: p.lastLines });
      if (slot.proc !== p) return;
      slot.state = 'busy';
      void sleep(500).then(() => this.restart(slot));
    });
  }

  private async restart(slot: Slot): Promise<void> {
    if (this.closing) return;
    this.launch(slot);
    await slot.proc.waitReady().catch(() => {}); // a replica that fails to start is a crash (restarted above)
    if (slot.proc.alive) slot.state = 'up';
  }

  /**
   * The slot a fault hits: the leader's when `preferLeader` and it is up, else slot `fallback`
   * (0-based) or the next one that is up; undefined when none is up.
   */
  async target(preferLeader: boolean, fallback: number): Promise<Slot | undefined> {
    if (preferLeader) {
      const leader = await this.holder();
      const s = this.slots.find((x) => x.proc.name === leader && x.state === 'up');
      if (s) return s;
    }
    for (let k = 0; k < this.slots.length; k++) {
      const s = this.slots[(fallback + k) % this.slots.length];
      if (s.state === 'up') return s;
    }
    return undefined;
  }

  /** Injects one fault on `slot` and resolves when it is over (the replica restarted or continued). */
  async inject(slot: Slot, kind: FaultKind, stopMs: number, stepMs: number): Promise<void> {
    const p = slot.proc;
    slot.state = 'busy';
    const wasLeader = (await this.holder()) === p.name;
    const fault: Fault = { kind, at: nowMs(), name: p.name, wasLeader };
    this.faults.push(fault);
    if (kind === 'clockstep' || kind === 'partition') {
      const step = (ms: number) => p.alive && p.proc.connected && p.proc.send({ type: 'step', ms });
      if (kind === 'clockstep') {
        fault.stepMs = stepMs;
        step(stepMs);
      } else slot.proxy.blackhole();
      await sleep(stopMs);
      if (kind === 'clockstep') fault.stepSeenMs = p.wallMinusTrueMs === undefined ? undefined : Math.round(p.wallMinusTrueMs);
      if (kind === 'clockstep') step(0);
      else slot.proxy.heal();
      fault.endAt = nowMs();
      if (slot.proc === p && p.alive) slot.state = 'up';
      return;
    }
    if (kind === 'sigstop') {
      p.signal('SIGSTOP');
      await sleep(stopMs);
      p.signal('SIGCONT');
      fault.contAt = nowMs();
      if (slot.proc === p && p.alive) slot.state = 'up';
      return;
    }
    p.expectExit = true;
    p.signal(kind === 'sigkill' ? 'SIGKILL' : 'SIGTERM');
    const timer = setTimeout(() => {
      fault.hung = true;
      p.signal('SIGKILL');
    }, 15_000);
    const { code } = await p.exited;
    clearTimeout(timer);
    if (kind === 'sigterm') fault.exitCode = code;
    await this.restart(slot);
  }

  /** SIGTERMs every replica (a graceful stop) and waits for the exits; SIGKILL after 15 s. */
  async stop(): Promise<void> {
    this.closing = true;
    const live = this.processes.filter((p) => p.alive);
    for (const p of live) {
      p.expectExit = true;
      p.signal('SIGCONT');
      p.signal('SIGTERM');
    }
    const timer = setTimeout(() => live.forEach((p) => p.signal('SIGKILL')), 15_000);
    await Promise.all(live.map((p) => p.exited));
    clearTimeout(timer);
    this.admin.disconnect();
    await Promise.all(this.slots.map((s) => s.proxy.close()));
  }

  /** On errors and at exit: never leave a process behind (stopped ones are continued first). */
  killSync(): void {
    this.closing = true;
    this.admin.disconnect();
    for (const p of this.processes) {
      p.expectExit = true;
      p.signal('SIGCONT');
      p.signal('SIGKILL');
    }
  }
}
