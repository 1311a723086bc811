/**
 * What an {@link Inspector} owns: its connection to Redis, the context its reads and acts run in
 * (namespace keys, liveness window, default actor, events), and the recording of its acts in the
 * audit trail. The Inspector's reads and acts (inspector.ts) are built on it.
 */
import { DEFAULTS } from '../runtime/defaults.js';
import type { OperatorAction } from '../runtime/events.js';
import { OptionProblems } from '../runtime/options.js';
import { closeConnection, openConnection, type ConnectionHandle, type RedisClient } from '../redis/connection.js';
import { actOptions, audited, auditedCheck, type ActOutcome, type AuditTarget } from './audited.js';
import { InspectorContext } from './context.js';
import * as fleet from './fleet.js';
import type { ActOptions, InspectorOptions } from './types.js';

/** The keys of {@link InspectorOptions}: any other is refused. */
const INSPECTOR_KEYS: ReadonlySet<string> = new Set<keyof InspectorOptions>([
  'connection',
  'namespace',
  'livenessWindow',
  'events',
  'actor',
  'origin',
  'compactSchedules',
  'maxPayloadBytes',
]);

/** The connection, context and act recording of an Inspector (see `Inspector`). @publicApi */
export class InspectorCore {
  /** Key prefix of the app inspected (`namespace` option, default `chronos`). */
  readonly namespace: string;
  private readonly conn: ConnectionHandle;
  /** The context every read and act runs in. @internal */
  protected readonly ctx: InspectorContext;
  private readonly origin?: string;

  /** @throws InvalidOptionsError for an unknown option (e.g. BullMQ's `prefix`: use `namespace`), an invalid namespace or a `maxPayloadBytes` that is not an integer >= 0. */
  constructor(options: InspectorOptions = {}) {
    this.namespace = options.namespace ?? DEFAULTS.namespace;
    const p = new OptionProblems();
    p.unknownKeys(options, INSPECTOR_KEYS); // an ignored `prefix` read the default namespace in silence (trial 21)
    p.name('namespace', this.namespace);
    p.int('maxPayloadBytes', options.maxPayloadBytes, 0);
    p.throwIfAny('inspector options');
    this.conn = openConnection(options.connection);
    const liveness = options.livenessWindow ?? DEFAULTS.instanceHeartbeatMs * 3;
    this.ctx = new InspectorContext(
      this.conn.client,
      this.namespace,
      liveness,
      options.actor ?? 'inspector',
      options.events,
      options.compactSchedules === true,
      options.maxPayloadBytes ?? DEFAULTS.maxPayloadBytes,
    );
    this.origin = options.origin;
  }

  /** The Redis client (shared when one was passed in). */
  get redis(): RedisClient {
    return this.conn.client;
  }

  /** Closes the connection if this Inspector opened it. */
  async close(): Promise<void> {
    await closeConnection(this.conn);
  }

  /**
   * Checks that Redis answers within `timeoutMs` and is >= 6.2 (one `INFO server`).
   * @returns the version. @throws RedisUnreachableError naming the address and the last error.
   */
  check(timeoutMs = 5000): Promise<string> {
    return fleet.check(this.ctx, timeoutMs);
  }

  /**
   * Runs the check a caller makes before an act (e.g. `requireQueue`, or finding the task an id
   * names) and, when it throws, records the act as `failed` in the audit trail with the check's
   * error message (emitting `audit.recorded`), then rethrows: an act refused before it ran (an
   * unknown queue, a task id found nowhere) is audited as one the act refused itself. A check that
   * passes records nothing: the act that follows records itself.
   * @param action the act refused, as the audit trail names it (`queue.pause`, `dead.retry`, …)
   * @param target what the act was on: `{ queue?, schedule?, taskId? }`
   * @returns what `check` returns.
   * @throws what `check` throws; InvalidOptionsError for bad `options` (an actor that is no name).
   */
  vetAct<T>(
    action: OperatorAction,
    target: { queue?: string; schedule?: string; taskId?: string },
    check: () => Promise<T>,
    options?: ActOptions,
  ): Promise<T> {
    const opts = actOptions(options, 'vetAct');
    const { queue, schedule, taskId } = target;
    return auditedCheck(this.ctx, this.origin, action, opts, { queue, schedule, taskId }, check);
  }

  /** Runs an act and records it in the audit trail (audited.ts). @internal */
  protected rec<T>(
    action: OperatorAction,
    opts: ActOptions,
    target: AuditTarget,
    run: () => Promise<T>,
    count?: (r: T) => number | ActOutcome | undefined,
  ): Promise<T> {
    return audited(this.ctx, this.origin, action, opts, target, run, count);
  }
}
