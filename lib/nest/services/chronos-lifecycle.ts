import { Injectable, type OnModuleInit } from '@nestjs/common';

/**
 * How to stop one role (worker, scheduler): resolves true when Redis answered its stop, false when it
 * gave up on Redis (it did not answer within the role's bound).
 */
export type RoleStop = () => Promise<boolean>;

/**
 * @internal What Chronos opened in this app, and how it closes.
 * - The roles stop together (the app's shutdown, or a failed start), so their bounds do not add
 *   up: the app's close waits for the longer one only.
 * - Nest runs no shutdown hook after a failed `onApplicationBootstrap`, so an app that catches the
 *   error without `app.close()` would otherwise keep Redis connections — and the process — alive:
 *   after a failed start the connections are closed too.
 * - When a role gave up on Redis (it did not answer within the role's bound), the connections are
 *   closed right after the roles, before Nest closes the HTTP server: a request waiting on Redis
 *   (the console's, an enqueue) then fails at once instead of holding `app.close()` until Redis
 *   answers. Otherwise they stay open until `onApplicationShutdown` (handlers and requests may
 *   still enqueue meanwhile).
 * - A Chronos provider that fails after the client connected does not throw while Nest creates the
 *   providers (Nest runs no hook then, so nothing would close what the others opened): it hands its
 *   error to {@link ChronosLifecycle.failBoot}, and `onModuleInit` closes everything, then throws it.
 */
@Injectable()
export class ChronosLifecycle implements OnModuleInit {
  private readonly roles: RoleStop[] = [];
  private readonly connections: (() => Promise<unknown>)[] = [];
  private failure?: Promise<void>;
  private stopping?: Promise<void>;
  private bootError?: Error;

  /** A provider could not be built: the boot fails at `onModuleInit` with `err` (the first one given). */
  failBoot(err: Error): void {
    this.bootError ??= err;
  }

  /** Throws the error a provider handed to {@link failBoot}, once everything Chronos opened is closed. */
  async onModuleInit(): Promise<void> {
    if (!this.bootError) return;
    await this.startFailed();
    throw this.bootError;
  }

  /** True once a role failed to start: a role that finishes starting afterwards stops at once. */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  /**
   * True once the roles were told to stop (the app's close, or a failed start). Chronos's boot hooks
   * then do nothing: an HTTP app's `init()` does not make a `close()` wait for it (Nest's
   * `NestApplication.init` sets no initialization promise, `NestApplicationContext.init` does), so a
   * Ctrl-C while `app.listen()` runs may stop the roles before their `onModuleInit` or
   * `onApplicationBootstrap` has run, and a role must not start after its stop.
   */
  get stopRequested(): boolean {
    return this.stopping !== undefined || this.failure !== undefined;
  }

  /** Registers how to stop a role (worker, scheduler), at the shutdown or if the boot fails. */
  onStop(stop: RoleStop): void {
    this.roles.push(stop);
  }

  /** Registers a connection to close after the roles if the boot fails or a role gave up on Redis. */
  closeAfterRoles(close: () => Promise<unknown>): void {
    this.connections.push(close);
  }

  /** A role failed to start: stops every role and closes every connection (once; later calls wait for it). */
  startFailed(): Promise<void> {
    this.failure ??= (async () => {
      await this.stopRoles();
      await this.closeConnections();
    })();
    return this.failure;
  }

  /**
   * Stops every role at once (once; later calls wait for it); when one gave up on Redis, closes the
   * connections too.
   */
  stopRoles(): Promise<void> {
    this.stopping ??= (async () => {
      const answered = await Promise.all(this.roles.map((stop) => stop().catch(() => true)));
      if (answered.includes(false)) await this.closeConnections();
    })();
    return this.stopping;
  }

  private async closeConnections(): Promise<void> {
    await Promise.allSettled(this.connections.map((close) => close()));
  }
}
