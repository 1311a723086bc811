import { META } from '../redis/protocol.js';
import { InvalidOptionsError, InvalidTaskStateError } from '../runtime/errors.js';
import type { ChronosEvent, EventBus, OperatorAction } from '../runtime/events.js';
import type { RedisClient } from '../redis/connection.js';
import { assertName, show } from '../runtime/options.js';
import type { TaskSet } from '../redis/commands/admin.js';
import { sampleRedisTime } from '../redis/commands/time.js';
import { GlobalKeys, QueueKeys, SchedulerKeys, isGroupName, isStoredName, shardKeysFor, type ShardKeys } from '../redis/keys.js';
import { checkStoredScheduleName } from '../scheduler/definition-check.js';
import { decodeEntry, decodeStored, type TaskMessage } from '../queue/codec.js';
import { TASK_STATES, type TaskFilter, type TaskInfo, type TaskState } from './types.js';

/** Most tasks one act script moves or deletes per call (bounded batches). */
export const ACT_BATCH = 200;
/** Ids an {@link ActResult} lists at most. */
export const MAX_LISTED_IDS = 1000;

/**
 * What every part of the Inspector shares: the client, the key builders, the event bus and the
 * default actor. Only the Inspector's modules touch Redis (the faces never do).
 */
export class InspectorContext {
  readonly global: GlobalKeys;
  readonly sched: SchedulerKeys;
  private readonly queueKeyCache = new Map<string, QueueKeys>();

  constructor(
    readonly client: RedisClient,
    readonly namespace: string,
    readonly livenessMs: number,
    readonly actor: string,
    private readonly events?: EventBus,
    /** Whether schedule definitions are written in the compact stored form (stored-form.ts; `compactSchedules`). */
    readonly compactSchedules = false,
    /** The most UTF-8 bytes of a schedule's payload as JSON, as an enqueue's (`maxPayloadBytes`); 0 = no limit. */
    readonly maxPayloadBytes = 0,
  ) {
    this.global = new GlobalKeys(namespace);
    this.sched = new SchedulerKeys(namespace);
  }

  /** The keys of a queue. @throws InvalidOptionsError for a name that cannot be a queue. */
  keys(queue: string): QueueKeys {
    let k = this.queueKeyCache.get(queue);
    if (!k) {
      if (!isStoredName(queue)) assertName('queue', queue, 'queue name'); // '.' and '..' of before still read
      k = new QueueKeys(this.namespace, queue);
      this.queueKeyCache.set(queue, k);
    }
    return k;
  }

  /**
   * The keys of the shard that holds schedule `name`: the one door of the acts and reads on one
   * schedule by name, so each refuses a name no schedule can have (null, `'a b'`) alike.
   * @throws InvalidScheduleError naming the value, for a name no schedule can have.
   */
  shard(name: string): ShardKeys {
    return shardKeysFor(this.namespace, checkStoredScheduleName(name));
  }

  /** Redis server time, epoch ms (one `TIME`, also a round trip for the process's time source). */
  redisNow(): Promise<number> {
    return sampleRedisTime(this.client);
  }

  /** Emits an event on the Inspector's bus (when it has one with listeners). */
  emitEvent(e: ChronosEvent): void {
    if (this.events?.active) this.events.emit(e);
  }

  /** Emits an `operator.acted` event naming the actor. */
  emit(
    action: OperatorAction,
    actor: string | undefined,
    fields: { queue?: string; schedule?: string; taskId?: string; count: number },
  ): void {
    if (this.events?.active) this.events.emit({ type: 'operator.acted', action, actor: actor ?? this.actor, ...fields });
  }
}

/** Checks a state name. @throws InvalidTaskStateError naming the value and the valid states. */
export function checkState(state: unknown, allowed: readonly TaskState[] = TASK_STATES): TaskState {
  if (typeof state !== 'string' || !(allowed as readonly string[]).includes(state)) throw new InvalidTaskStateError(state, allowed);
  return state as TaskState;
}

/**
 * Checks a task id at the Inspector's door, for every read of and act on one task by id: no task can
 * have an id that is not a non-empty string (unchecked, it was looked for through every queue's stream
 * and answered as not found; an act sent it to Redis as text and recorded that). `what` names the call
 * in the error. @throws InvalidOptionsError naming the value
 */
export function checkTaskId(id: unknown, what = 'task lookup'): asserts id is string {
  if (typeof id !== 'string' || id === '') throw new InvalidOptionsError([`id: expected a non-empty string, got ${show(id)}`], what);
}

/** The set (ZSET) and hash of a state kept outside the stream. */
export function setOf(k: QueueKeys, state: 'scheduled' | 'retry' | 'dead'): TaskSet {
  if (state === 'dead') return { zset: k.dead, hash: k.deadTasks };
  return { zset: state === 'retry' ? k.retry : k.scheduled, hash: k.tasks };
}

function decodePayload(text: string): { payload: unknown; payloadError?: string } {
  try {
    return { payload: JSON.parse(text) as unknown };
  } catch (err) {
    return { payload: text, payloadError: `invalid JSON payload: ${(err as Error).message}` };
  }
}

/** A task message as the Inspector shows it (payload decoded). */
export function toInfo(queue: string, state: TaskState, m: TaskMessage, at?: number): TaskInfo {
  const info: TaskInfo = {
    id: m.id,
    type: m.type,
    queue,
    state,
    ...decodePayload(m.payload),
    retried: m.meta[META.retried] ?? 0,
    maxRetry: m.meta[META.maxRetry] ?? 0,
    timeoutMs: m.meta[META.timeoutMs] ?? 0,
    enqueuedAt: m.meta[META.enqueuedAt] ?? 0,
  };
  const optional: Partial<TaskInfo> = {
    group: m.meta[META.group],
    schedule: m.meta[META.schedule],
    triggerAt: m.meta[META.triggerAt],
    at,
    lastError: m.meta[META.lastError],
    failedAt: m.meta[META.failedAt],
    reason: m.meta[META.deadReason],
    crashes: m.meta[META.crashes],
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) (info as unknown as Record<string, unknown>)[key] = value;
  return info;
}

/** A stored task (scheduled, retry, dead), or undefined when its text is garbage. */
export function storedInfo(queue: string, state: TaskState, id: string, raw: string | null | undefined, at?: number): TaskInfo | undefined {
  if (!raw) return undefined;
  try {
    return toInfo(queue, state, decodeStored(raw, id), at);
  } catch {
    return undefined;
  }
}

/** A stream entry as the Inspector shows it. */
export function entryInfo(queue: string, state: TaskState, entryId: string, fields: string[] | null): TaskInfo {
  const d = decodeEntry(entryId, fields);
  const info = toInfo(queue, state, d.task);
  info.entryId = entryId;
  if (!d.ok) info.lastError = d.error.message;
  return info;
}

/**
 * Checks a task filter at the Inspector's door: an empty `type` would match no task and an empty
 * `error` every one (a bulk delete of a whole state: trial 8). @throws InvalidOptionsError naming it
 */
export function checkFilter(f: TaskFilter): void {
  const issues: string[] = [];
  if (f.type !== undefined && (typeof f.type !== 'string' || f.type === ''))
    issues.push(`type: expected a non-empty task type, got ${JSON.stringify(f.type)}`);
  if (f.error !== undefined && (typeof f.error !== 'string' || f.error === ''))
    issues.push(`error: expected non-empty text, got ${JSON.stringify(f.error)}`);
  if (f.group !== undefined && !isGroupName(f.group))
    issues.push(`group: expected a group name (1 to 200 characters), got ${JSON.stringify(f.group)}`);
  if (issues.length > 0) throw new InvalidOptionsError(issues, 'task filter');
}

/** True when a task passes a filter (type equal; error a case-insensitive substring of the last error). */
export function matches(t: TaskInfo, f: TaskFilter | undefined): boolean {
  if (!f) return true;
  if (f.type !== undefined && t.type !== f.type) return false;
  if (f.error !== undefined && !(t.lastError ?? '').toLowerCase().includes(f.error.toLowerCase())) return false;
  if (f.group !== undefined && t.group !== f.group) return false;
  return true;
}

/** The epoch ms of a stream entry id `<ms>-<seq>`. */
export function entryMs(entryId: string): number {
  return Number(entryId.slice(0, entryId.indexOf('-')));
}
