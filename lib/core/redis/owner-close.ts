/**
 * Closing the connections Chronos owns, and the one rule for calls made after such a close: every
 * object using a connection that the part of Chronos which opened it has closed refuses its calls with
 * a `ChronosStateError` naming the call, before it looks at anything else (the arguments included),
 * instead of meeting ioredis's bare "Connection is closed." (trial 32). The QueueClient (and the Nest
 * client and the testing kit's), the Inspector, the Nest `InspectorService` and `SchedulerService`
 * and the server's `pause`/`resume` are guarded by {@link refuseWhenClosed}.
 */
import { ChronosStateError } from '../runtime/errors.js';
import type { RedisClient } from './types.js';

/** An open client plus whether Chronos owns (and so closes) it. */
export interface ConnectionHandle {
  readonly client: RedisClient;
  readonly owned: boolean;
}

/** How long a close waits for Redis to answer its QUIT before it disconnects, ms. */
export const QUIT_WAIT_MS = 1000;

/** Clients closed by the part of Chronos that opened them (see {@link closedByOwner}). */
const ownerClosed = new WeakSet<object>();

/**
 * Closes an owned client (QUIT, falling back to disconnect) and remembers it as closed by its owner
 * (every part sharing it then refuses its calls by name: {@link refuseWhenClosed}); a shared one is
 * left alone.
 */
export async function closeConnection(handle: ConnectionHandle): Promise<void> {
  if (!handle.owned) return;
  ownerClosed.add(handle.client);
  await closeClient(handle.client);
}

/**
 * True once the part of Chronos that opened `client` closed it (`closeConnection`): a QueueClient's
 * or an Inspector's `close()`, a server's `shutdown()`, a scheduler's `stop()`, in a Nest app
 * `app.close()`. A client the user passed in is never closed by Chronos, so this stays false for it.
 */
export function closedByOwner(client: RedisClient): boolean {
  return ownerClosed.has(client);
}

/** Closes a client Chronos owns: QUIT, then disconnect (`QUIT_WAIT_MS` after it when Redis does not answer). */
export async function closeClient(client: RedisClient): Promise<void> {
  if (client.status === 'end') {
    // ended by itself (reopen.ts): a disconnect marks it closed on purpose, so its reopen timer leaves it ended
    client.disconnect();
    return;
  }
  if (client.status === 'wait') {
    // opened lazily and never used: a QUIT would connect first
    client.disconnect();
    return;
  }
  try {
    await Promise.race([client.quit(), new Promise((r) => setTimeout(r, QUIT_WAIT_MS).unref())]);
  } catch {
    /* already closed or unreachable: disconnect below */
  }
  client.disconnect();
  settleStranded(client);
}

/**
 * ioredis 5 (redis/ioredis#2169, open): a `disconnect()` between two reconnect attempts (status
 * `reconnecting`: Redis down) emits no close event, so the commands queued since the connection
 * dropped are never settled (an `enqueue` awaited across a close during a Redis outage hung for
 * good) and the status stays `reconnecting`. Ends the client as ioredis's close handler would:
 * status `end`, its queues rejected with ioredis's own "Connection is closed.". A Cluster client
 * closes its nodes itself and is left alone.
 */
function settleStranded(client: RedisClient): void {
  if (client.status !== 'reconnecting' || (client as { isCluster?: boolean }).isCluster) return;
  const internals = client as unknown as { setStatus?: (status: string) => void; flushQueue?: (error: Error) => void };
  if (typeof internals.setStatus !== 'function' || typeof internals.flushQueue !== 'function') return;
  internals.setStatus('end');
  internals.flushQueue(new Error('Connection is closed.'));
}

/**
 * What a refused call says about the close: `<method>: <what> (<by>; in a Nest app, at app.close()): <then>`.
 * One per kind of object and close (see the constants below).
 */
export interface Closure {
  /** The object and its state, e.g. `this client was closed`. */
  readonly what: string;
  /** The call that closed it, e.g. `close()`. */
  readonly by: string;
  /** What follows: that the connection is gone and what to do instead. */
  readonly then: string;
}

/** The closure of an object whose connection another part of Chronos (its owner) opened and closed. */
export function sharedClosure(object: string): Closure {
  return {
    what: `${object}'s connection was closed by its owner`,
    by: 'close()',
    then: 'it is gone. Call before the close, or on an instance that is open.',
  };
}

/** A QueueClient (and the Nest and testing kit's `ChronosClient`) after its own `close()`. */
export const CLIENT_CLOSED: Closure = {
  what: 'this client was closed',
  by: 'close()',
  then: 'its connection is gone. Enqueue before the close, or use a client that is open.',
};

/** A ChronosServer after its `shutdown()` closed the connection it opened. */
export const SERVER_SHUT_DOWN: Closure = {
  what: 'this server was shut down',
  by: 'shutdown()',
  then: 'its connection is gone. Call before the shutdown, or through a running server (or the Inspector).',
};

/**
 * A Scheduler after its `stop()` closed the connection it opened: the message of its runtime schedule
 * API (schedule-writes.ts).
 */
export const SCHEDULER_STOPPED: Closure = {
  what: 'this scheduler was stopped',
  by: 'stop()',
  then: 'its connection is gone. Change schedules before the stop, or through a running instance (or the Inspector).',
};

/** The `ChronosStateError` a call `method` gets once its object's connection was closed as `closure` says. */
export function closedError(method: string, closure: Closure): ChronosStateError {
  return new ChronosStateError(`${method}: ${closure.what} (${closure.by}; in a Nest app, at app.close()): ${closure.then}`);
}

/**
 * Makes the methods of `proto` that `pick` accepts (own and inherited ones; never `constructor`)
 * reject with {@link closedError} when `closure(this)` returns one, before the method runs. Applied to a
 * subclass's prototype as well, it guards the subclass's overrides too (each checks before its own
 * argument checks). The methods wrapped must return promises.
 */
export function refuseWhenClosed<T extends object>(
  proto: T,
  closure: (self: T) => Closure | undefined,
  pick: (name: string) => boolean,
): void {
  const seen = new Set<string>(['constructor']);
  for (let p: object | null = proto; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const name of Object.getOwnPropertyNames(p)) {
      const d = Object.getOwnPropertyDescriptor(p, name);
      if (seen.has(name) || !d || typeof d.value !== 'function' || !pick(name)) continue;
      seen.add(name);
      const method = d.value as (...args: unknown[]) => unknown;
      Object.defineProperty(proto, name, {
        ...d,
        value: function (this: T, ...args: unknown[]): unknown {
          const closed = closure(this);
          if (closed) return Promise.reject(closedError(name, closed));
          return method.apply(this, args);
        },
      });
    }
  }
}

/**
 * The closure of an object on `conn`: undefined while open; `own` when it opened the connection and
 * closed it; {@link sharedClosure} of `object` when another part of Chronos did.
 */
export function ownerClosure(conn: ConnectionHandle, own: Closure, object: string): Closure | undefined {
  if (!closedByOwner(conn.client)) return undefined;
  return conn.owned ? own : sharedClosure(object);
}
