import type { FailureLog } from '../runtime/logger.js';
import type { Service, ServiceHealth } from '../runtime/service.js';
import { closeClient, duplicateConnection, type RedisClient } from '../redis/connection.js';
import type { SchedulerKeys } from '../redis/keys.js';
import type { ShardLeases } from '../leadership/shards.js';
import type { Firing } from './firing.js';
import type { Declarations } from './registry.js';

/** The health of a service that is `started`, judged by `failures` (undefined: it never fails on its own). */
function healthOf(name: string, started: boolean, failures?: FailureLog): ServiceHealth {
  if (!started) return { name, state: 'stopped' };
  const s = failures?.status;
  return s && !s.ok ? { name, state: 'failing', lastError: s.lastError } : { name, state: 'running' };
}

/**
 * The declarations heartbeat: publishes this instance's declared schedules every `heartbeatMs`
 * (registry.ts), and declares again at once when the connection is back (a Redis restart may have
 * emptied the registry).
 */
export class HeartbeatService implements Service {
  readonly name = 'heartbeat';
  private started = false;
  private readonly onReady = () => this.o.declarations.reconnected();

  constructor(private readonly o: { client: RedisClient; declarations: Declarations }) {}

  start(): void {
    this.started = true;
    this.o.declarations.startHeartbeat();
    this.o.client.on('ready', this.onReady);
  }

  stop(): void {
    this.started = false;
    this.o.client.off('ready', this.onReady);
    this.o.declarations.stopHeartbeat();
  }

  health(): ServiceHealth {
    return healthOf(this.name, this.started, this.o.declarations.failures);
  }
}

/** The leader's firing loop (firing.ts), driven by the lease; stopping halts it and waits for the work under way. */
export class FiringService implements Service {
  readonly name = 'firing';
  private started = false;

  constructor(private readonly o: { firing: Firing }) {}

  start(): void {
    this.started = true;
  }

  async stop(): Promise<void> {
    this.o.firing.halt();
    if (!this.started) return;
    this.started = false;
    await this.o.firing.idle();
  }

  health(): ServiceHealth {
    return healthOf(this.name, this.started, this.o.firing.failures);
  }
}

/** The shard leases' keeper (leadership/shards.ts): campaigns for a fair share, renews; stopping releases its shards at once. */
export class LeaseService implements Service {
  readonly name = 'lease';
  private started = false;

  constructor(private readonly o: { leases: ShardLeases }) {}

  start(): void {
    this.started = true;
    this.o.leases.start();
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.o.leases.stop();
  }

  /** `failing` while its lease calls fail (Redis unreachable or refusing writes), with the last error. */
  health(): ServiceHealth {
    return healthOf(this.name, this.started, this.o.leases.failures);
  }
}

/**
 * The shards named by a changes notice (`3` or `1,5,7`); undefined when the message is not such a
 * list (an older version's notice: a schedule or instance name).
 */
export function noticeShards(message: string): number[] | undefined {
  if (!/^\d+(,\d+)*$/.test(message)) return undefined;
  return message.split(',').map(Number);
}

/**
 * The notice subscriber: its own connection, subscribed to the resignation channel (a shard was
 * released: campaign at once) and the registry's changes channel (the named shards' loops tick at
 * once; an older version's notice starts a migration pass, then ticks them all). When its
 * connection is back after a loss, every loop ticks (a notice may have been lost meanwhile).
 */
export class NoticeService implements Service {
  readonly name = 'notices';
  private subscriber?: RedisClient;

  constructor(
    private readonly o: { client: RedisClient; keys: SchedulerKeys; firing: Firing; leases: ShardLeases; migrate(): Promise<void> },
  ) {}

  async start(): Promise<void> {
    const { keys, firing, leases, migrate } = this.o;
    const subscriber = (this.subscriber = duplicateConnection(this.o.client, { subscriber: true }));
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== keys.changesChannel) return leases.onResignation();
      const shards = noticeShards(message);
      if (shards !== undefined) return firing.changed(shards);
      void migrate().then(() => firing.changed());
    });
    let connected = false;
    subscriber.on('ready', () => {
      if (connected) firing.changed();
      connected = true;
    });
    await subscriber.subscribe(keys.resignChannel, keys.changesChannel);
  }

  async stop(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber) await closeClient(subscriber);
  }

  health(): ServiceHealth {
    return healthOf(this.name, this.subscriber !== undefined);
  }
}
