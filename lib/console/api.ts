import type { QueueLimitsUpdate } from '../core/queue/limits.js';
import { ChronosError } from '../core/runtime/errors.js';
import { isRedisUnavailable } from '../core/redis/connection.js';
import type { Inspector } from '../core/admin/inspector.js';
import { TASK_STATES, type ActResult, type TaskInfo, type TaskState } from '../core/admin/types.js';
import { describeSpec } from './describe.js';
import { labelFilterOf } from '../core/scheduler/labels.js';
import type { SchedulePageQuery } from '../core/admin/inspector.js';
import { overview } from './overview.js';
import { previewChars, withPreview } from './preview.js';
import { sharedRead } from './shared-read.js';

/** An API answer: HTTP status and JSON body. */
export interface ApiReply {
  status: number;
  body: unknown;
}

/** What an API route gets: the Inspector, the redaction hook, who acts, the query and the JSON body. */
export interface ApiContext {
  inspector: Inspector;
  redact: (payload: unknown, task: TaskInfo) => unknown;
  actor: string;
  /** Where the request comes from, for the audit trail: `console <client address>`. */
  origin: string;
  /** Which acts this caller may do (`authorize(req, act)`; all false when read-only): the page hides the others. */
  can: Record<string, boolean>;
  readOnly: boolean;
  query: URLSearchParams;
  body: Record<string, unknown>;
}

/**
 * The `code` of an error reply that no Chronos error names, by HTTP status: every error reply carries
 * a code (a Chronos error's own, e.g. `TASK_NOT_FOUND`, else one of these).
 */
export const HTTP_ERROR_CODES: Readonly<Record<number, string>> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  421: 'MISDIRECTED_REQUEST',
  500: 'INTERNAL',
  503: 'REDIS_UNAVAILABLE',
};

/** The body of an error reply: `{ error, code }`, the code {@link HTTP_ERROR_CODES} gives `status`. */
export function errorBody(status: number, message: string): { error: string; code: string } {
  return { error: message, code: HTTP_ERROR_CODES[status] ?? 'INTERNAL' };
}

/** A route's problem with the request: answered with its status, message and the status's code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const STATUS_OF: Record<string, number> = {
  TASK_NOT_FOUND: 404,
  SCHEDULE_NOT_FOUND: 404,
  QUEUE_NOT_FOUND: 404,
  INVALID_OPTIONS: 400,
  INVALID_TASK_STATE: 400,
  INVALID_SCHEDULE: 400,
  STATE: 409,
};

/**
 * The reply of a failed route: its status, or the Chronos error's (404 not found, 400 bad input, 409
 * state), 503 `REDIS_UNAVAILABLE` when Redis did not serve the request within the client's retry bound
 * (down, restarting: the console answers again once it is back), else 500.
 */
export function errorReply(err: unknown): ApiReply {
  if (err instanceof ApiError) return { status: err.status, body: errorBody(err.status, err.message) };
  if (err instanceof ChronosError) return { status: STATUS_OF[err.code] ?? 500, body: { error: err.message, code: err.code } };
  if (isRedisUnavailable(err)) {
    const error = `Redis is unavailable: it did not serve this request within the client's retry bound (${err.message})`;
    return { status: 503, body: errorBody(503, error) };
  }
  return { status: 500, body: errorBody(500, err instanceof Error ? err.message : String(err)) };
}

function state(text: unknown): TaskState {
  if (typeof text === 'string' && (TASK_STATES as readonly string[]).includes(text)) return text as TaskState;
  throw new ApiError(400, `state: expected one of ${TASK_STATES.join(', ')}, got ${JSON.stringify(text)}`);
}

/** A boolean body field: absent is false; anything but true or false is a 400 (trial 9: "yes" read as false). */
function flag(v: unknown, what: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new ApiError(400, `${what}: expected true or false, got ${JSON.stringify(v)}`);
  return v;
}

/** A text body field: absent, null or '' is undefined; anything but a string of at most 1000 characters is a 400 naming what came. */
function str(v: unknown, what: string, required = false): string | undefined {
  if (v === undefined || v === null || v === '') {
    if (required) throw new ApiError(400, `${what}: required`);
    return undefined;
  }
  if (typeof v !== 'string' || v.length > 1000) {
    const got = typeof v === 'string' ? `${v.length} characters` : shown(v);
    throw new ApiError(400, `${what}: expected a string of at most 1000 characters, got ${got}`);
  }
  return v;
}

/** A value as an error message shows it: its JSON, cut at 100 characters. */
function shown(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

/**
 * The `ids` of a task act: 1 to 1000 non-empty strings.
 * @throws ApiError 400 naming what is wrong: the value given, how many there are, or the id that is not one (`ids[2]: …, got 7`)
 */
function taskIds(v: unknown): string[] {
  if (!Array.isArray(v)) throw new ApiError(400, `ids: expected an array of 1-1000 task ids (or all: true), got ${shown(v)}`);
  if (v.length === 0 || v.length > 1000) throw new ApiError(400, `ids: expected 1-1000 task ids, got ${v.length}`);
  const bad = v.findIndex((id) => typeof id !== 'string' || id === '');
  if (bad >= 0) throw new ApiError(400, `ids[${bad}]: expected a task id (a non-empty string), got ${shown(v[bad])}`);
  return v as string[];
}

function redacted(ctx: ApiContext, task: TaskInfo): TaskInfo {
  return { ...task, payload: ctx.redact(task.payload, task) };
}

function withWords<T extends { expression: string; timeZone: string; offsetMs?: number }>(s: T): T & { description: string } {
  return { ...s, description: describeSpec(s.expression, s.timeZone, s.offsetMs) };
}

function merge(results: ActResult[]): ActResult {
  const skipped = results.flatMap((r) => r.skipped ?? []);
  return {
    count: results.reduce((n, r) => n + r.count, 0),
    ids: results.flatMap((r) => r.ids).slice(0, 1000),
    ...(skipped.length ? { skipped } : {}),
  };
}

/**
 * POST a task act on a queue: `{ action: 'retry'|'delete'|'run'|'cancel', state, ids: [...] }` for
 * a selection (at most 1000 ids) or `{ action, state, all: true, type?, error?, group? }` for every task of
 * the state passing the filter. A body with both `ids` and `all: true`, or a filter with `ids`, is a
 * 400 (`BAD_REQUEST`) naming the conflict.
 */
async function taskAct(ctx: ApiContext, queue: string): Promise<ActResult> {
  const b = ctx.body;
  const action = str(b.action, 'action', true)!;
  const st = state(b.state);
  const actor = { actor: ctx.actor, origin: ctx.origin };
  const filter = { type: str(b.type, 'type'), error: str(b.error, 'error'), group: str(b.group, 'group') };
  const i = ctx.inspector;
  // Both shapes at once is ambiguous: never widen a named selection to the whole state (as the CLI's
  // "give a task id or --all, not both"); a filter goes with `all` only, never silently ignored.
  const all = flag(b.all, 'all'); // "yes" is a 400 naming it, not read as "no all" (trial 15)
  if (all && b.ids !== undefined) throw new ApiError(400, 'give ids or all: true, not both');
  if (!all && (filter.type !== undefined || filter.error !== undefined || filter.group !== undefined)) {
    throw new ApiError(400, 'type, error and group go with all: true, not with ids');
  }
  // a typo is a 404, never "0 tasks deleted"; audited as the act refused, as a missing task id is
  await i.vetAct(taskActOf(b), { queue }, () => i.requireQueue(queue), actor);
  if (all) {
    if (action === 'retry' && st === 'dead') return i.retryAllDead(queue, { ...filter, ...actor });
    if (action === 'delete' && st !== 'active') return i.deleteAllTasks(queue, st, { ...filter, ...actor });
    if (action === 'run' && (st === 'scheduled' || st === 'retry')) return i.runAllTasks(queue, st, { ...filter, ...actor });
    throw new ApiError(400, `action "${action}" on all ${st} tasks is not possible`);
  }
  const ids = taskIds(b.ids);
  const one = (id: string): Promise<ActResult> => {
    if (action === 'retry' && st === 'dead') return i.retryDead(queue, id, actor);
    if (action === 'delete' && st !== 'active') return i.deleteTask(queue, id, { state: st, ...actor });
    // the state named is the one acted on, as for delete (trial 9: run with state retry ran a scheduled task)
    if (action === 'run' && (st === 'scheduled' || st === 'retry')) return i.runTask(queue, id, { state: st, ...actor });
    if (action === 'cancel' && st === 'active') return i.cancelTask(id, { queue, ...actor });
    throw new ApiError(400, `action "${action}" on a ${st} task is not possible`);
  };
  const results: ActResult[] = [];
  for (const id of ids) {
    if (ids.length === 1) results.push(await one(id));
    // one of many that cannot be done is named with why, not dropped (trial 9: all failed was { count: 0, ids: [] })
    else
      results.push(
        await one(id).catch((err: unknown) => ({ count: 0, ids: [], skipped: [{ id, reason: (err as Error).message ?? String(err) }] })),
      );
  }
  return merge(results);
}

type Handler = (ctx: ApiContext, params: string[]) => Promise<unknown>;

/**
 * What a request does, as `authorize(req, act)` is asked: `read` (the page, its assets and every GET),
 * or the act of a POST, named as its audit entry (`dead.retry`, `task.delete`, `task.run`,
 * `task.cancel`, `queue.pause`, `queue.resume`, `queue.limits`, `schedule.pause`, `schedule.resume`,
 * `schedule.trigger`, `schedule.remove`). @publicApi
 */
export type ConsoleAct =
  | 'read'
  | 'dead.retry'
  | 'task.delete'
  | 'task.run'
  | 'task.cancel'
  | 'queue.pause'
  | 'queue.resume'
  | 'queue.limits'
  | 'schedule.pause'
  | 'schedule.resume'
  | 'schedule.trigger'
  | 'schedule.remove';

/** Every act a POST may be (what the page asks `can` of). */
export const CONSOLE_ACTS: readonly Exclude<ConsoleAct, 'read'>[] = [
  'dead.retry',
  'task.delete',
  'task.run',
  'task.cancel',
  'queue.pause',
  'queue.resume',
  'queue.limits',
  'schedule.pause',
  'schedule.resume',
  'schedule.trigger',
  'schedule.remove',
];

/** The act of a task act's body (`{ action: 'retry' | 'delete' | 'run' | 'cancel' }`). @throws ApiError 400 */
function taskActOf(body: Record<string, unknown>): Exclude<ConsoleAct, 'read'> {
  const a = body.action;
  if (a === 'retry') return 'dead.retry';
  if (a === 'delete' || a === 'run' || a === 'cancel') return `task.${a}`;
  throw new ApiError(400, `action: expected retry, delete, run or cancel, got ${JSON.stringify(a)}`);
}

/**
 * An integer query parameter (`limit=25`), `fallback` when absent; the engine checks its range.
 * @throws ApiError 400 naming the text when it is not an integer (`limit: expected an integer, got "abc"`)
 */
export function intParam(q: URLSearchParams, name: string, fallback: number): number {
  const text = q.get(name);
  if (text === null) return fallback;
  if (!/^-?\d{1,15}$/.test(text)) throw new ApiError(400, `${name}: expected an integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

/**
 * The page query of `label=k=v&label=…&prefix=&state=&cursor=&limit=` (limit 100 when absent), as
 * GET schedule-page and GET schedule-activity take it; undefined when `orUndefined` and none of them
 * is given. The engine checks the state, cursor and limit. @throws ApiError 400 naming a bad label or limit
 */
export function pageQueryOf(q: URLSearchParams, orUndefined = false): SchedulePageQuery | undefined {
  if (orUndefined && !['label', 'prefix', 'state', 'cursor', 'limit'].some((k) => q.has(k))) return undefined;
  const filter = labelFilterOf(q.getAll('label'));
  if ('problem' in filter) throw new ApiError(400, filter.problem);
  return {
    labels: filter.labels,
    prefix: q.get('prefix') || undefined,
    state: (q.get('state') || undefined) as SchedulePageQuery['state'],
    cursor: q.get('cursor') || undefined,
    limit: intParam(q, 'limit', 100),
  };
}

/**
 * GET schedule-page?label=k=v&label=…&prefix=&state=&cursor=&limit=: one page of
 * `Inspector.schedulePage` (`{ items, cursor }`, items with the spec in words); a bad value is a 400 naming it.
 */
async function schedulePage(ctx: ApiContext): Promise<unknown> {
  const page = await ctx.inspector.schedulePage(pageQueryOf(ctx.query));
  return { items: page.items.map(withWords), cursor: page.cursor };
}

/**
 * One API route: its method, its path pattern under `<base>/api`, what it runs, and (POST) which act
 * it is. Every POST names its act, so `authorize(req, act)` is asked before any change: a POST
 * without one does not type-check (trial 9: the limits route had none, so a viewer could set limits).
 */
export type Route =
  | { method: 'GET'; pattern: RegExp; run: Handler; act?: undefined }
  | {
      method: 'POST';
      pattern: RegExp;
      run: Handler;
      /** The act, from its path parameters and body (asked of `authorize(req, act)` before it runs). */
      act: (params: string[], body: Record<string, unknown>) => ConsoleAct;
      /**
       * The body's fields, from the path parameters: any other is a 400 naming it (handler.ts unknownFields).
       * 'checked' when the whole body goes to an Inspector call that refuses a key it does not know (limits).
       */
      fields: ((params: string[]) => readonly string[]) | 'checked';
    };

const TASK_ACT_FIELDS = ['action', 'state', 'ids', 'all', 'type', 'error', 'group'] as const;
const SCHEDULE_ACT_FIELDS: Record<string, readonly string[]> = { pause: ['note'], remove: ['force'], resume: [], trigger: [] };

const seg = '([^/]+)';
const re = (path: string) => new RegExp(`^${path.replaceAll(':p', seg)}$`);

/** The routes under `<base>/api`; `:p` is one URL-encoded path segment. Documented in docs/console.md. */
export const ROUTES: Route[] = [
  { method: 'GET', pattern: re('/overview'), run: (ctx) => overview(ctx) },
  {
    method: 'GET',
    pattern: re('/queues/:p/tasks'),
    run: async (ctx, [queue]) => {
      const q = ctx.query;
      const limit = intParam(q, 'limit', 25);
      const preview = previewChars(q); // the page's listing: 120 characters of each payload, not the payloads
      await ctx.inspector.requireQueue(queue); // a typo is a 404, not an empty queue
      const page = await ctx.inspector.taskPage(queue, state(q.get('state')), {
        cursor: q.get('cursor') ?? undefined,
        limit,
        type: q.get('type') || undefined,
        error: q.get('error') || undefined,
        group: q.get('group') || undefined,
      });
      const tasks = page.tasks.map((t) => redacted(ctx, t));
      return { ...page, tasks: preview === undefined ? tasks : tasks.map((t) => withPreview(t, preview)) };
    },
  },
  {
    method: 'GET',
    pattern: re('/tasks/:p'),
    run: async (ctx, [id]) => {
      return redacted(ctx, await ctx.inspector.requireTask(id, ctx.query.get('queue') || undefined));
    },
  },
  {
    method: 'GET',
    pattern: re('/dead-groups'),
    run: async (ctx) => {
      const q = ctx.query;
      const queue = q.get('queue') || undefined;
      if (queue !== undefined) await ctx.inspector.requireQueue(queue); // as for tasks: a typo is a 404, not "no dead tasks"
      return ctx.inspector.deadGroups({
        queue,
        type: q.get('type') || undefined,
        error: q.get('error') || undefined,
        group: q.get('group') || undefined,
      });
    },
  },
  {
    method: 'GET',
    pattern: re('/schedules'),
    // every schedule (O(schedules)): one read at a time, shared by the requests that ask meanwhile
    run: (ctx) => sharedRead(ctx.inspector, 'schedules', async () => (await ctx.inspector.schedules(5)).map(withWords)),
  },
  { method: 'GET', pattern: re('/schedule-page'), run: (ctx) => schedulePage(ctx) },
  {
    method: 'GET',
    pattern: re('/schedules/:p'),
    run: async (ctx, [name]) => {
      const [schedule, history] = await Promise.all([ctx.inspector.schedule(name, 5), ctx.inspector.scheduleHistory(name, 20)]);
      return { schedule: withWords(schedule), history };
    },
  },
  {
    method: 'POST',
    pattern: re('/queues/:p/tasks/act'),
    run: (ctx, [queue]) => taskAct(ctx, queue),
    act: (_p, body) => taskActOf(body),
    fields: () => TASK_ACT_FIELDS,
  },
  {
    method: 'POST',
    pattern: re('/queues/:p/(pause|resume)'),
    act: ([, verb]) => `queue.${verb as 'pause' | 'resume'}`,
    fields: () => [],
    run: async (ctx, [queue, verb]) => {
      const by = { actor: ctx.actor, origin: ctx.origin };
      // as the CLI without --force: a typo is a 404 (audited as the act refused), never a paused name
      await ctx.inspector.vetAct(`queue.${verb as 'pause' | 'resume'}`, { queue }, () => ctx.inspector.requireQueue(queue), by);
      const changed = verb === 'pause' ? await ctx.inspector.pauseQueue(queue, by) : await ctx.inspector.resumeQueue(queue, by);
      return { ok: true, changed };
    },
  },
  {
    method: 'POST',
    pattern: re('/queues/:p/limits'),
    act: () => 'queue.limits',
    fields: 'checked', // the engine's check of a QueueLimitsUpdate refuses an unknown key
    // the body is a QueueLimitsUpdate, checked by the engine (a bad value is a 400 naming it)
    run: async (ctx, [queue]) => {
      const by = { actor: ctx.actor, origin: ctx.origin };
      // as pause: a typo is a 404 (audited as the act refused), never limits on a name no task uses
      await ctx.inspector.vetAct('queue.limits', { queue }, () => ctx.inspector.requireQueue(queue), by);
      const limits = await ctx.inspector.setQueueLimits(queue, ctx.body as QueueLimitsUpdate, by);
      return { ok: true, limits };
    },
  },
  {
    method: 'POST',
    pattern: re('/schedules/:p/(pause|resume|trigger|remove)'),
    act: ([, verb]) => `schedule.${verb as 'pause' | 'resume' | 'trigger' | 'remove'}`,
    fields: ([, verb]) => SCHEDULE_ACT_FIELDS[verb],
    run: async (ctx, [name, verb]) => {
      const actor = { actor: ctx.actor, origin: ctx.origin };
      if (verb === 'pause')
        return { ok: true, changed: await ctx.inspector.pauseSchedule(name, { note: str(ctx.body.note, 'note'), ...actor }) };
      if (verb === 'resume') return { ok: true, changed: await ctx.inspector.resumeSchedule(name, actor) };
      if (verb === 'remove') await ctx.inspector.removeSchedule(name, { force: flag(ctx.body.force, 'force'), ...actor });
      else return { ok: true, taskId: await ctx.inspector.triggerSchedule(name, actor) };
      return { ok: true };
    },
  },
];
