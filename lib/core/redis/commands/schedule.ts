/**
 * The typed wrappers of the scheduler's and the lease's Lua scripts (conventions as in index.ts):
 * fire, fence-schedules, the registry's register, declare and heartbeat, and schedule-admin (the
 * shard leases' are in shards.ts). Definitions are JSON text.
 */
import { codeNames, type EncodedTask } from './queue.js';
import type { QueueKeys, SchedulerKeys, ShardKeys } from '../keys.js';
import {
  ADMIN_RESULT,
  DECLARE_RESULT,
  FIRE_MODE,
  FIRE_RESULT,
  HEARTBEAT_RESULT,
  HISTORY,
  type AdminOp,
  type FireMode,
} from '../protocol.js';
import { runScript, type ScriptName, type ScriptWrapper } from '../scripts.js';
import type { RedisClient } from '../types.js';

export type FireResult = keyof typeof FIRE_RESULT;
const fireResult = codeNames('fire', FIRE_RESULT);

/**
 * One trigger for fire.lua. Its task id (and dedup key) is `<schedule>:<trigger-unix>`, built by the
 * script. Its `meta` is JSON text as `JSON.stringify` writes it, with no raw newline (the script
 * splits the task on newlines; a payload's newlines, whitespace in valid JSON, are made spaces).
 */
export interface FireTrigger extends EncodedTask {
  schedule: string;
  /** The trigger instant, epoch ms. */
  triggerAt: number;
  /** Lifetime of the dedup key, ms. */
  dedupTtlMs: number;
  mode: FireMode;
  /** The schedule's generation it was planned under (its stored definition's; 0 if it has none). */
  generation: number;
  /** Until when a live instance declares the schedule, epoch ms (undefined or Infinity: always, a runtime schedule); a later trigger is refused. */
  liveUntil?: number;
  /** When its task may start, epoch ms (the instant plus the schedule's jitter shift): a later one than Redis time makes it a delayed task. Undefined: at once. */
  dueAt?: number;
  /** The schedule's maxRuns (undefined: none): fire.lua refuses the trigger once the schedule's runs counter reached it. */
  maxRuns?: number;
  /**
   * Whether fire.lua records the outcome in the schedule's history (scheduler/history.ts), and how:
   * `r` record, `p` / `c` record an advance-only trigger as skipped by the pause / the catch-up
   * policy; upper case also renews the history's TTL. Undefined: no record.
   */
  history?: 'r' | 'p' | 'c' | 'R' | 'P' | 'C';
  /** With `history`: how many triggers the record stands for (its `count`), when more than 1. */
  historyCount?: number;
}

/** What fire.lua did: one result per trigger, in order, and Redis's `now` (epoch ms) it decided by. */
export interface FireOutcome {
  results: FireResult[];
  now: number;
}

/** JSON text on one line: a raw newline in valid JSON is whitespace, so a space stands for it (fire.lua splits the task on newlines). */
function oneLine(json: string): string {
  return json.includes('\n') ? json.replace(/\n/g, ' ') : json;
}

/**
 * Enqueues the triggers of one queue, each at most once ever, refusing those planned under an
 * older generation of their schedule and those dated after their liveUntil (fire.lua). Per trigger
 * three arguments go to the script (its name, its fields on one line, its task in the stored form
 * `<meta>\n<payload>\n<type>`); its keys are built there on the queue's key prefix.
 * @param nowMs the instant to decide by (a test clock's), or undefined for Redis server time.
 * @param leadMs how long before its instant a trigger may be enqueued, ms.
 * @param by who fires (the leader's instance id): the `by` of the history records of triggers with a `history` flag.
 * @param historyLimit most records a schedule's history keeps, 1–100 (trimmed once it holds a tenth more).
 * @param leaseUntil the instant the caller's shard lease expires in Redis (epoch ms, the clock of
 *   `nowMs`), or undefined for no lease fence: a call that runs at or after it changes nothing and
 *   answers `unleased` for every trigger (fire.lua ARGV[5]).
 */
export async function fireScript(
  client: RedisClient,
  keys: QueueKeys,
  nowMs: number | undefined,
  leadMs: number,
  triggers: readonly FireTrigger[],
  by = '',
  historyLimit: number = HISTORY.limit,
  leaseUntil?: number,
): Promise<FireOutcome> {
  const k = [keys.stream, keys.lastFired, keys.generation, keys.scheduled, keys.tasks, keys.base];
  const a: string[] = new Array(5 + 3 * triggers.length);
  a[0] = nowMs === undefined ? '' : String(nowMs);
  a[1] = String(leadMs);
  a[2] = by;
  a[3] = String(historyLimit);
  a[4] = leaseUntil === undefined ? '' : String(Math.floor(leaseUntil));
  let n = 5;
  for (const t of triggers) {
    const until = t.liveUntil ?? Infinity;
    const liveUntil = Number.isFinite(until) ? String(until) : until > 0 ? '' : '-1';
    const dueAt = t.dueAt === undefined ? '' : Math.floor(t.dueAt);
    a[n++] = t.schedule;
    a[n++] =
      `${t.triggerAt} ${t.dedupTtlMs} ${t.mode} ${t.generation} ${liveUntil} ${dueAt} ${t.maxRuns ?? ''} ${t.history ?? ''}${t.history && t.historyCount ? t.historyCount : ''}`;
    a[n++] = t.mode === FIRE_MODE.advanceOnly ? '' : `${t.meta}\n${oneLine(t.payload)}\n${t.type}`;
  }
  const reply = await runScript<number[]>(client, 'fire', k, a);
  const results: FireResult[] = new Array(triggers.length);
  for (let i = 0; i < triggers.length; i++) results[i] = fireResult(reply[i]);
  return { results, now: reply[triggers.length] };
}

/** What one fence-schedules.lua call did. */
export interface FenceOutcome {
  /** Generations raised. */
  raised: number;
  /**
   * The schedules whose lastFired went back to now: their next trigger was decided ahead of its
   * instant under the old state (enqueued: its task retracted when it still waited in the scheduled
   * set; or refused by maxRuns), so it is planned again (fence-schedules.lua).
   */
  rewound: string[];
}

/**
 * Raises schedules' generations in one queue's slot (fence-schedules.lua): from then on fire.lua
 * refuses their triggers planned under an older generation. Never lowers one. A raised schedule's
 * trigger decided ahead of its instant is planned again (its task retracted while it waits in the scheduled set).
 * @param by who changed them, for the `retracted` history records ("" = not named)
 */
export async function fenceSchedulesScript(
  client: RedisClient,
  keys: QueueKeys,
  fences: readonly (readonly [schedule: string, generation: number])[],
  by = '',
): Promise<FenceOutcome> {
  const k = [keys.generation, keys.lastFired, keys.scheduled, keys.tasks, keys.base];
  const [raised, ...rewound] = await runScript<[number, ...string[]]>(client, 'fence-schedules', k, [by, ...fences.flat()]);
  return { raised, rewound };
}

/**
 * Deletes the maxRuns counters of schedules in one queue's slot (drop-runs.lua), each only while its
 * stored generation is at most the one given (no later change was fenced since).
 * @returns how many counters were deleted
 */
export function dropRunsScript(
  client: RedisClient,
  keys: QueueKeys,
  drops: readonly (readonly [schedule: string, generation: number])[],
): Promise<number> {
  return runScript<number>(client, 'drop-runs', [keys.generation, keys.base], drops.flat());
}

/** Most counters of one read-runs.lua call. */
const READ_RUNS_CHUNK = 1000;

/**
 * How many triggers each schedule of one queue's slot has enqueued toward its maxRuns, in order: its
 * runs counter's count (fire.lua's `runs:<schedule>`, read by read-runs.lua, {@link READ_RUNS_CHUNK}
 * per call) when it was taken under this maxRuns, else 0 (fire.lua starts a count taken under another
 * maxRuns afresh at its next fire). The one read of the counters: the leader's (a spent schedule is
 * not planned) and the Inspector's (`runsLeft`).
 */
export async function readRunsScript(
  client: RedisClient,
  keys: QueueKeys,
  schedules: readonly { name: string; maxRuns: number }[],
): Promise<number[]> {
  const out: number[] = [];
  for (let c = 0; c < schedules.length; c += READ_RUNS_CHUNK) {
    const chunk = schedules.slice(c, c + READ_RUNS_CHUNK);
    const flat = await runScript<string[]>(
      client,
      'read-runs',
      [keys.base],
      chunk.map((s) => s.name),
    );
    chunk.forEach((s, i) => out.push(flat[2 * i] !== '' && Number(flat[2 * i]) === s.maxRuns ? Number(flat[2 * i + 1]) : 0));
  }
  return out;
}

/** One chunk of the definitions an instance declares, for register-schedules.lua. */
export interface RegisterArgs {
  /** The instant to register at (a test clock's), or undefined for Redis server time. */
  nowMs: number | undefined;
  /** Name, fingerprint (`fp`) and definition JSON of each declared schedule (a few hundred per call). */
  definitions: readonly (readonly [name: string, fp: string, json: string])[];
  /** Write only the definitions not stored at all, leaving stored ones as they are (a re-publish); default false. */
  missingOnly?: boolean;
}

/** A changed schedule whose generation is to be raised in the slot of the queue it targeted before the change. */
export interface Fence {
  schedule: string;
  queue: string;
  generation: number;
}

/**
 * Stores the definitions of one chunk (of one shard) that changed (the last writer wins), under a
 * new version of the shard if any did (register-schedules.lua); with `missingOnly`, only those not
 * stored at all. The caller announces the change.
 * @returns how many stored definitions changed, Redis's (or the test clock's) `now` (epoch ms), and
 * the fences to raise for the definitions that replaced stored ones.
 */
export async function registerSchedulesScript(
  client: RedisClient,
  keys: ShardKeys,
  r: RegisterArgs,
): Promise<{ changed: number; now: number; fences: Fence[] }> {
  const a: string[] = [r.nowMs === undefined ? '' : String(r.nowMs), r.missingOnly ? '1' : ''];
  for (const [name, fp, json] of r.definitions) a.push(name, fp, json);
  const [changed, now, flat] = await runScript<[number, number, (string | number)[]]>(
    client,
    'register-schedules',
    [keys.schedules, keys.version, keys.prefix],
    a,
  );
  const fences: Fence[] = [];
  for (let i = 0; i + 2 < flat.length; i += 3) {
    fences.push({ schedule: String(flat[i]), queue: String(flat[i + 1]), generation: Number(flat[i + 2]) });
  }
  return { changed, now, fences };
}

export type DeclareStatus = keyof typeof DECLARE_RESULT;
const declareStatus = codeNames('declare-schedules', DECLARE_RESULT);

/**
 * Records an instance's declaration (declare-schedules.lua): its digest, with the names set of the
 * digest made from the instance's building set unless it exists; `digest` undefined = declares
 * nothing. `declaredTtlMs` in ms; `nowMs` a test clock's epoch ms, or undefined for Redis time.
 */
export async function declareSchedulesScript(
  client: RedisClient,
  keys: SchedulerKeys,
  instanceId: string,
  digest: string | undefined,
  declaredTtlMs: number,
  nowMs: number | undefined,
): Promise<{ status: DeclareStatus; now: number }> {
  const d = digest ?? '';
  const [code, now] = await runScript<[number, number]>(
    client,
    'declare-schedules',
    [keys.instances, keys.declaration(instanceId), keys.names(d), keys.namesBuilding(d, instanceId)],
    [instanceId, declaredTtlMs, nowMs === undefined ? '' : String(nowMs), d],
  );
  return { status: declareStatus(code), now };
}

export type HeartbeatStatus = keyof typeof HEARTBEAT_RESULT;
const heartbeatStatus = codeNames('heartbeat', HEARTBEAT_RESULT);

/**
 * Records that an instance is alive and keeps its declaration and the names set of its digest
 * (heartbeat.lua); `digest` undefined = it declares nothing. `declaredTtlMs` in ms.
 */
export async function heartbeatScript(
  client: RedisClient,
  keys: SchedulerKeys,
  instanceId: string,
  declaredTtlMs: number,
  digest: string | undefined,
): Promise<{ status: HeartbeatStatus; redisNow: number }> {
  const [code, redisNow] = await runScript<[number, number]>(
    client,
    'heartbeat',
    [keys.instances, keys.declaration(instanceId), keys.names(digest ?? '')],
    [instanceId, declaredTtlMs, digest === undefined ? '0' : '1'],
  );
  return { status: heartbeatStatus(code), redisNow };
}

export type AdminStatus = keyof typeof ADMIN_RESULT;
const adminStatus = codeNames('schedule-admin', ADMIN_RESULT);

/** What schedule-admin.lua did. */
export interface AdminOutcome {
  status: AdminStatus;
  redisNow: number;
  /** The schedule's new generation (0 when not found). */
  generation: number;
  /** The queue the schedule targeted before the change; undefined for a new one (or when not found). */
  previousQueue: string | undefined;
}

/**
 * Changes the schedule registry (the schedule's shard, `keys`) and announces it on the changes
 * channel with the shard's number (schedule-admin.lua); `definition` is JSON, for `put` only, and
 * `force` lets a put replace a definition declared in code (else its status is `declared`).
 */
export async function scheduleAdminScript(
  client: RedisClient,
  keys: ShardKeys,
  sched: SchedulerKeys,
  op: AdminOp,
  name: string,
  definition?: string,
  force = false,
): Promise<AdminOutcome> {
  const args = [op, name, sched.changesChannel, String(keys.shard)];
  if (definition !== undefined) args.push(definition, force ? '1' : '');
  const [code, redisNow, generation, queue] = await runScript<[number, number, number, string]>(
    client,
    'schedule-admin',
    [keys.schedules, keys.version, keys.prefix],
    args,
  );
  return { status: adminStatus(code), redisNow, generation, previousQueue: queue === '' ? undefined : queue };
}

/** The wrapper of each script of this area (the registry in index.ts). */
export const SCHEDULE_SCRIPTS = {
  fire: fireScript,
  'fence-schedules': fenceSchedulesScript,
  'drop-runs': dropRunsScript,
  'read-runs': readRunsScript,
  'register-schedules': registerSchedulesScript,
  'declare-schedules': declareSchedulesScript,
  heartbeat: heartbeatScript,
  'schedule-admin': scheduleAdminScript,
} as const satisfies Partial<Record<ScriptName, ScriptWrapper>>;
