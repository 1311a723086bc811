import { TaskCancelledError } from '../runtime/errors.js';
import type { ChronosLogger } from '../runtime/logger.js';
import { closeClient, duplicateConnection, type RedisClient } from '../redis/connection.js';
import { GlobalKeys } from '../redis/keys.js';
import type { SupersedeNotice } from '../redis/protocol.js';

/** The notice an operator's cancel publishes on `<ns>:cancel` (after the task was dead-lettered). */
export interface CancelNotice {
  /** Queue of the cancelled task. */
  queue: string;
  /** Redis Stream entry id (`<ms>-<seq>`) of the running task: how a server finds it among its own. */
  entryId: string;
  /** Id of the cancelled task. */
  taskId: string;
  /** Who cancelled it (the act's actor, e.g. `cli:ada@host`). */
  actor: string;
}

/** What the listener needs of a running task: its id, and a way to abort its signal. */
export interface Cancellable {
  /** Id of the running task; a notice for the same entry but another task id is ignored. */
  readonly id: string;
  /** Aborts the task's `AbortSignal` with `reason` (a {@link TaskCancelledError}). */
  abort(reason: unknown): void;
}

/** Another channel the listener's subscriber connection holds (sharing the connection). */
export interface ExtraChannel {
  /** The channel name. */
  readonly channel: string;
  /** Called with each message's text. */
  onMessage(text: string): void;
  /** Called each time the subscriber connection is ready again after a reconnect (messages published meanwhile were lost). */
  onResubscribed?(): void;
}

/** A running subscription; `close()` ends it (idempotent). */
export interface CancelListener {
  /** Unsubscribes and closes the listener's subscriber connection; safe to call twice. */
  close(): Promise<void>;
}

/**
 * Aborts `run`'s signal with a {@link TaskCancelledError} for an operator's cancel by `actor`, and logs
 * it at info level (an operator's act, not a fault). `missed`: learned by a claims round (the
 * recoverer's extendClaims), its notice never arrived.
 */
export function abortCancelled(run: Cancellable, queue: string, actor: string, logger?: ChronosLogger, missed = false): void {
  const how = missed ? ' (its notice was missed; found by the claims round)' : '';
  logger?.log(
    `Task cancelled by an operator${how}: its signal is aborted; it is dead already (id=${run.id} queue=${queue} actor=${actor})`,
  );
  run.abort(new TaskCancelledError(run.id, actor));
}

/**
 * The actor of a cancel, read back from the cancelled task's last error (`TaskCancelledError: Task <id>
 * was cancelled by <actor>`, as task-acts.ts cancelTask writes it); `an operator` when it says otherwise.
 */
export function cancelActorOf(taskId: string, lastError: unknown): string {
  const head = `${TaskCancelledError.name}: Task ${taskId} was cancelled by `;
  return typeof lastError === 'string' && lastError.startsWith(head) ? lastError.slice(head.length) : 'an operator';
}

/**
 * Subscribes a worker server to cancel notices: for a notice about an entry this server runs
 * (`find(entryId, queue)` returns it), aborts the task's signal with a {@link TaskCancelledError}.
 * A leader's supersede notice (protocol.ts SupersedeNotice, overlap `cancel-previous`) goes to
 * `superseded` instead.
 * The Inspector has already dead-lettered the task when the notice arrives, so whatever the
 * handler does next is ignored (its entry is gone: the ack, retry or kill finds nothing). Uses its
 * own subscriber connection (a duplicate of `client`, owned and closed by {@link CancelListener.close}).
 *
 * `cancelled(run, actor)` is called after each abort (the server emits `task.cancelled` there). A
 * notice published while the subscriber reconnects is lost: the recoverer's claims round finds such a
 * task dead as cancelled and does the same (recovery/recoverer.ts extendClaims).
 * `extra` channels are subscribed on the same connection (the server's due-time wakes: keys.ts
 * GlobalKeys.dueWake), each with its handler. ChronosServer subscribes at start and closes the
 * listener at shutdown.
 */
export async function listenForCancels<R extends Cancellable>(
  client: RedisClient,
  namespace: string,
  find: (entryId: string, queue: string) => R | undefined,
  logger?: ChronosLogger,
  cancelled?: (run: R, actor: string) => void,
  extra: readonly ExtraChannel[] = [],
  superseded?: (notice: SupersedeNotice) => void,
): Promise<CancelListener> {
  const channel = new GlobalKeys(namespace).cancelChannel;
  const sub = duplicateConnection(client, { subscriber: true });
  const others = new Map(extra.map((e) => [e.channel, e]));
  sub.on('message', (ch: string, text: string) => {
    if (ch !== channel) {
      others.get(ch)?.onMessage(text);
      return;
    }
    let n: CancelNotice & Partial<SupersedeNotice>;
    try {
      n = JSON.parse(text) as CancelNotice & Partial<SupersedeNotice>;
    } catch {
      return; // not ours
    }
    if (typeof n?.supersededBy === 'string') {
      if (typeof n.schedule === 'string' && typeof n.queue === 'string' && typeof n.triggerAt === 'number') {
        superseded?.(n as SupersedeNotice);
      }
      return;
    }
    const run = typeof n?.entryId === 'string' ? find(n.entryId, n.queue) : undefined;
    if (!run || run.id !== n.taskId) return;
    abortCancelled(run, n.queue, String(n.actor), logger);
    cancelled?.(run, String(n.actor));
  });
  let subscribed = false;
  // ioredis resubscribes by itself after a reconnect; what was published while away is lost
  sub.on('ready', () => {
    if (subscribed) for (const e of extra) e.onResubscribed?.();
  });
  await sub.subscribe(channel, ...others.keys());
  subscribed = true;
  let closed = false;
  return {
    async close() {
      if (closed) return;
      closed = true;
      await closeClient(sub);
    },
  };
}
