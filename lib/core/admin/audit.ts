import { OPERATOR_ACTIONS, type AuditEntry } from '../runtime/events.js';
import { ChronosError, InvalidOptionsError } from '../runtime/errors.js';
import { engineTime } from '../runtime/time.js';
import { isStoredName } from '../redis/keys.js';
import { SlotPipeline } from '../redis/cluster.js';
import type { InspectorContext } from './context.js';

/** Most entries the audit trail keeps (the oldest are trimmed at each append, `XADD … MAXLEN`). */
export const AUDIT_MAX_ENTRIES = 10_000;
/** Entries older than this are trimmed at each append (`XTRIM … MINID`), ms (30 days). */
export const AUDIT_MAX_AGE_MS = 30 * 24 * 60 * 60_000;
/** Entries one read looks at, at most, to find `limit` passing a filter (a page may be empty with a cursor). */
export const AUDIT_FILTER_SCAN = 2_000;
const SCAN_LIMIT = AUDIT_FILTER_SCAN;

/** What an act records; `at` and `id` come from the stream. */
export type AuditRecord = Omit<AuditEntry, 'id' | 'at'>;

const FIELDS = ['actor', 'action', 'origin', 'queue', 'schedule', 'taskId', 'result', 'count', 'error', 'detail'] as const;

/**
 * Appends an act to the audit trail (`<ns>:{<ns>:global}:audit`, a STREAM): `XADD … MAXLEN 10,000`
 * and `XTRIM … MINID <30 days ago>` (exact: acts are rare, each trims at most what aged out), one
 * pipeline on the global slot. Resolves to the entry as
 * read back (its id is when, Redis time); emits `audit.recorded` on the Inspector's bus.
 */
export async function recordAct(ctx: InspectorContext, r: AuditRecord): Promise<AuditEntry> {
  const fields: string[] = [];
  for (const f of FIELDS) {
    const v = r[f];
    if (v !== undefined && v !== '') fields.push(f, String(v).slice(0, 2000));
  }
  // a SlotPipeline: one told ASK while the global slot moves to a master just added is sent on to it
  // (a plain one went back to the old owner until its redirections ran out: the act went unrecorded)
  const key = ctx.global.audit;
  const replies = await new SlotPipeline(ctx.client)
    .add(key, (p) => p.xadd(key, 'MAXLEN', AUDIT_MAX_ENTRIES, '*', ...fields))
    .add(key, (p) => p.xtrim(key, 'MINID', Math.max(0, engineTime.now() - AUDIT_MAX_AGE_MS)))
    .exec();
  const [err, id] = replies[0] ?? [new ChronosError('REDIS_SCRIPT', 'audit: no reply to XADD')];
  if (err) throw err;
  const entry = entryOf(String(id), fields);
  ctx.emitEvent({ type: 'audit.recorded', entry });
  return entry;
}

function entryOf(id: string, flat: readonly string[]): AuditEntry {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]] = flat[i + 1];
  const e: AuditEntry = {
    id,
    at: Number(id.slice(0, id.indexOf('-'))),
    actor: f.actor ?? '',
    action: f.action as AuditEntry['action'],
    result: f.result === 'failed' ? 'failed' : 'done',
  };
  for (const k of ['origin', 'queue', 'schedule', 'taskId', 'error', 'detail'] as const) if (f[k] !== undefined) e[k] = f[k];
  if (f.count !== undefined) e.count = Number(f.count);
  return e;
}

/** A page of the audit trail, newest first, and the cursor of the next (absent at the end). @publicApi */
export interface AuditPage {
  /** The entries, newest first. */
  entries: AuditEntry[];
  /** Pass it back as `cursor` for older entries; absent when there are none. */
  cursor?: string;
}

/** Which entries of the audit trail `Inspector.audit()` returns. @publicApi */
export interface AuditQuery {
  /** Most entries returned (1-500). @defaultValue 50 */
  limit?: number;
  /** Only entries older than this cursor (the `cursor` of the previous page). */
  cursor?: string;
  /** Only this actor's acts (exact). */
  actor?: string;
  /** Only this action (e.g. `queue.pause`). */
  action?: string;
  /** Only acts on this queue. */
  queue?: string;
  /** Only acts on this schedule. */
  schedule?: string;
  /** Only `done` or `failed` acts. */
  result?: 'done' | 'failed';
}

/**
 * The audit trail, newest first: `XREVRANGE … COUNT`, at most 2,000 entries looked at per call when
 * filtering (an empty page with a cursor: none of those matched, more to look at); `cursor` for the next page (absent
 * at the end). @throws InvalidOptionsError for a bad limit, cursor, result or action, a queue or schedule name none
 * can have, or an empty actor.
 */
export async function readAudit(ctx: InspectorContext, q: AuditQuery = {}): Promise<AuditPage> {
  const limit = q.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw new InvalidOptionsError([`limit: expected an integer 1-500, got ${JSON.stringify(q.limit)}`], 'audit options');
  if (q.cursor !== undefined && !/^\d+-\d+$/.test(q.cursor))
    throw new InvalidOptionsError([`cursor: expected <ms>-<seq>, got ${JSON.stringify(q.cursor)}`], 'audit options');
  // a filter no entry can match is a mistake, not an empty page (trial 9: result=maybe listed everything)
  if (q.result !== undefined && q.result !== 'done' && q.result !== 'failed')
    throw new InvalidOptionsError([`result: expected 'done' or 'failed', got ${JSON.stringify(q.result)}`], 'audit options');
  if (q.action !== undefined && !(OPERATOR_ACTIONS as readonly string[]).includes(q.action))
    throw new InvalidOptionsError(
      [`action: expected one of ${OPERATOR_ACTIONS.join(', ')}, got ${JSON.stringify(q.action)}`],
      'audit options',
    );
  // a queue or schedule name none can have (`'a b'`), an empty actor: no entry has them (trial 37)
  for (const [key, what] of [
    ['queue', 'a queue name'],
    ['schedule', 'a schedule name'],
  ] as const) {
    const v = q[key];
    if (v !== undefined && !isStoredName(v))
      throw new InvalidOptionsError(
        [`${key}: expected ${what} (1-200 characters of [A-Za-z0-9_.:-]), got ${JSON.stringify(v)}`],
        'audit options',
      );
  }
  if (q.actor !== undefined && (typeof q.actor !== 'string' || q.actor.trim() === ''))
    throw new InvalidOptionsError([`actor: expected a name, got ${JSON.stringify(q.actor)}`], 'audit options');
  const filtered =
    q.actor !== undefined || q.action !== undefined || q.queue !== undefined || q.schedule !== undefined || q.result !== undefined;
  const out: AuditEntry[] = [];
  let end = q.cursor === undefined ? '+' : `(${q.cursor}`;
  let looked = 0;
  for (;;) {
    const count = filtered ? Math.min(500, SCAN_LIMIT - looked) : limit - out.length + 1;
    const rows = (await ctx.client.xrevrange(ctx.global.audit, end, '-', 'COUNT', count)) as [string, string[]][];
    looked += rows.length;
    for (const [id, flat] of rows) {
      const e = entryOf(id, flat);
      if (q.actor !== undefined && e.actor !== q.actor) continue;
      if (q.action !== undefined && e.action !== q.action) continue;
      if (q.queue !== undefined && e.queue !== q.queue) continue;
      if (q.schedule !== undefined && e.schedule !== q.schedule) continue;
      if (q.result !== undefined && e.result !== q.result) continue;
      if (out.length === limit) return { entries: out, cursor: out[out.length - 1].id };
      out.push(e);
    }
    if (rows.length < count || looked >= SCAN_LIMIT) {
      const more = rows.length === count && looked >= SCAN_LIMIT;
      return more && rows.length > 0 ? { entries: out, cursor: rows[rows.length - 1][0] } : { entries: out };
    }
    end = `(${rows[rows.length - 1][0]}`;
  }
}
