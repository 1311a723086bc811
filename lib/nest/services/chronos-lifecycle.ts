import { Injectable } from '@nestjs/common';

/**
 * @internal What Chronos opened in this app, closed together when one of its roles fails to start.
 * Nest runs no shutdown hook after a failed `onApplicationBootstrap`, so an app that catches the
 * error without `app.close()` would otherwise keep Redis connections — and the process — alive.
 * Roles are stopped first, then the connections they share.
 */
@Injectable()
export class ChronosLifecycle {
  private readonly roles: (() => Promise<unknown>)[] = [];
  private readonly connections: (() => Promise<unknown>)[] = [];
  private failure?: Promise<void>;

  /** True once a role failed to start: a role that finishes starting afterwards stops at once. */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** Registers how to stop a role (worker, scheduler) if the boot fails. */
  onFailedStart(stop: () => Promise<unknown>): void {
    this.roles.push(stop);
  }

  /** Registers a connection to close if the boot fails, after the roles. */
  closeOnFailedStart(close: () => Promise<unknown>): void {
    this.connections.push(close);
  }

  /** A role failed to start: stops every role and closes every connection (once; later calls wait for it). */
  startFailed(): Promise<void> {
    this.failure ??= (async () => {
      await Promise.allSettled(this.roles.map((stop) => stop()));
      await Promise.allSettled(this.connections.map((close) => close()));
    })();
    return this.failure;
  }
}
