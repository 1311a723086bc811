import type { FailureLog } from '../runtime/logger.js';
import type { Service, ServiceHealth } from '../runtime/service.js';
import { closeClient, duplicateConnection, type RedisClient } from '../redis/connection.js';
import type { SchedulerKeys } from '../redis/keys.js';
import type { LeaderLease } from '../leadership/lease.js';
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

/** The lease keeper (leadership/lease.ts): campaigns, renews while leading; stopping resigns. */
export class LeaseService implements Service {
  readonly name = 'lease';
  private started = false;

  constructor(private readonly o: { lease: LeaderLease }) {}

  start(): void {
    this.started = true;
    this.o.lease.start();
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.o.lease.stop();
  }

  health(): ServiceHealth {
    return healthOf(this.name, this.started);
  }
}

/**
 * The notice subscriber: its own connection, subscribed to the resignation channel (campaign at
 * once) and the registry's changes channel (the leader reloads its table).
 */
export class NoticeService implements Service {
  readonly name = 'notices';
  private subscriber?: RedisClient;

  constructor(private readonly o: { client: RedisClient; keys: SchedulerKeys; firing: Firing; lease: LeaderLease }) {}

  async start(): Promise<void> {
    const { keys, firing, lease } = this.o;
    const subscriber = (this.subscriber = duplicateConnection(this.o.client));
    subscriber.on('message', (channel: string) => {
      if (channel === keys.changesChannel) firing.changed();
      else lease.onResignation();
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
