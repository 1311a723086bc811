/**
 * A page of the schedule registry, filtered by labels, name prefix and state, over its indexes
 * (the `schedule-index` Lua snippet: a names ZSET and one ZSET per label pair, all in the
 * scheduler's slot): the view of {@link build} for the page's schedules only, never the whole
 * registry. A registry written without the indexes (a rolling deploy from a version before labels)
 * is backfilled first, in bounded steps (index-schedules.lua).
 */
import { InvalidOptionsError } from '../runtime/errors.js';
import { isValidName } from '../redis/keys.js';
import { indexSchedulesScript } from '../redis/commands/schedule.js';
import type { StoredSchedule } from '../scheduler/definition.js';
import type { InspectorContext } from './context.js';
import { build } from './schedules.js';
import type { ScheduleInfo } from './types.js';

/** A schedule's state for {@link SchedulePageQuery.state}: `paused`, `orphaned` (a paused orphan is both), `active` (neither). */
export type ScheduleState = 'active' | 'paused' | 'orphaned';

/** What `Inspector.schedulePage` lists. @publicApi */
export interface SchedulePageQuery {
  /** Only schedules with every one of these labels (`{ tenant: 'acme' }`: label tenant = acme). */
  labels?: Record<string, string>;
  /** Only schedules whose name starts with this (a name's characters, 1 to 200). */
  prefix?: string;
  /** Only schedules in this state (see {@link ScheduleState}). */
  state?: ScheduleState;
  /** Where to go on: the `cursor` of the previous page (opaque); absent for the first page. */
  cursor?: string;
  /** Most schedules in the page, 1 to 1000. @defaultValue 100 */
  limit?: number;
}

/** One page of schedules, by name. @publicApi */
export interface SchedulePage {
  /** The page's schedules, in name order (byte order); fewer than `limit` when the scan bound was reached. */
  items: ScheduleInfo[];
  /** Pass it as `cursor` for the next page; null when there is none. */
  cursor: string | null;
}

/** Most index members one page call looks at: a sparse filter returns a short page and a cursor. */
export const PAGE_SCAN_CAP = 5000;
/** Registry entries per backfill step (index-schedules.lua: a few ms of Redis each, under 10 ms with labels on every one). */
export const BACKFILL_COUNT = 250;
const STATES: readonly ScheduleState[] = ['active', 'paused', 'orphaned'];
/** Above every name character in byte order (names are ASCII): the upper bound of a prefix range. */
const PAST_NAMES = '\u00ff';

function bad(issue: string): never {
  throw new InvalidOptionsError([issue], 'schedule page options');
}

/** The query, checked. @throws InvalidOptionsError naming the offending option and value. */
function checked(q: SchedulePageQuery): { limit: number; after?: string; labels: [string, string][] } {
  const limit = q.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) bad(`limit: expected an integer 1-1000, got ${JSON.stringify(q.limit)}`);
  if (q.prefix !== undefined && (q.prefix === '' || !isValidName(q.prefix)))
    bad(`prefix: expected 1-200 characters of [A-Za-z0-9_.:-], got ${JSON.stringify(q.prefix)}`);
  if (q.state !== undefined && !STATES.includes(q.state))
    bad(`state: expected one of ${STATES.join(', ')}, got ${JSON.stringify(q.state)}`);
  let after: string | undefined;
  if (q.cursor !== undefined) {
    after = typeof q.cursor === 'string' ? Buffer.from(q.cursor, 'base64url').toString('utf8') : '';
    if (!isValidName(after)) bad(`cursor: expected a cursor of a previous page, got ${JSON.stringify(q.cursor)}`);
  }
  const labels = Object.entries(q.labels ?? {});
  for (const [k, v] of labels) if (typeof v !== 'string') bad(`labels.${k}: expected a string, got ${JSON.stringify(v)}`);
  return { limit, after, labels };
}

/**
 * Completes the registry's indexes when they are missing or behind (index-schedules.lua steps of
 * {@link BACKFILL_COUNT} entries until ready: one step when they are complete). Concurrent callers
 * share the progress (kept in Redis).
 */
export async function ensureIndexed(ctx: InspectorContext): Promise<void> {
  while (!(await indexSchedulesScript(ctx.client, ctx.sched, BACKFILL_COUNT)).ready);
}

/**
 * A page of schedules by name (see {@link SchedulePageQuery}). Walks the smallest of the filter's
 * label ZSETs (else the names index) with ZRANGEBYLEX from the cursor, checks the other labels and
 * the state on the definitions (HMGET), and builds the view of the page's schedules only. Cost:
 * one index step (more while a backfill runs), ZCARD per label, then per batch one ZRANGEBYLEX and
 * one HMGET, at most {@link PAGE_SCAN_CAP} members looked at, and the view of the page. An index
 * member whose definition is gone or no longer carries the label (a version without the indexes
 * changed it) is skipped, never removed here: a removal could race a writer that just put it back.
 * @throws InvalidOptionsError naming a bad limit, prefix, state, cursor or label value.
 */
export async function schedulePage(ctx: InspectorContext, q: SchedulePageQuery = {}, n = 5): Promise<SchedulePage> {
  const { limit, after, labels } = checked(q);
  await ensureIndexed(ctx);
  let source = ctx.sched.nameIndex;
  if (labels.length > 0) {
    const sizes = (await Promise.all(labels.map(([k, v]) => ctx.client.zcard(ctx.sched.label(k, v))))) as number[];
    const i = sizes.indexOf(Math.min(...sizes));
    if (sizes[i] === 0) return { items: [], cursor: null };
    source = ctx.sched.label(...labels[i]);
  }
  const prefix = q.prefix;
  let min = after !== undefined && (prefix === undefined || after >= prefix) ? `(${after}` : prefix ? `[${prefix}` : '-';
  const max = prefix ? `[${prefix}${PAST_NAMES}` : '+';
  const needsView = q.state === 'active' || q.state === 'orphaned';
  const items: ScheduleInfo[] = [];
  let scanned = 0;
  let last: string | undefined;
  let more = true;
  while (items.length < limit && scanned < PAGE_SCAN_CAP && more) {
    const want = Math.min(1000, PAGE_SCAN_CAP - scanned, Math.max(limit - items.length, 50) * (labels.length > 1 || q.state ? 4 : 1));
    // one more than wanted, looked at only to know whether anything follows (no empty last page)
    const names = await ctx.client.zrangebylex(source, min, max, 'LIMIT', 0, want + 1);
    more = names.length > want;
    if (more) names.length = want;
    if (names.length === 0) break;
    const raws = await ctx.client.hmget(ctx.sched.schedules, ...names);
    const candidates: [string, string][] = [];
    names.forEach((name, i) => {
      const raw = raws[i];
      if (raw == null) return; // deleted by a version without the indexes (the backfill's prune drops it)
      let s: StoredSchedule;
      try {
        s = JSON.parse(raw) as StoredSchedule;
      } catch {
        if (labels.length === 0 && q.state === undefined) candidates.push([name, raw]); // shown as unreadable, unfiltered lists only
        return;
      }
      if (!labels.every(([k, v]) => s.labels?.[k] === v)) return;
      if (q.state === 'paused' && s.paused !== true) return;
      if (q.state === 'active' && s.paused === true) return;
      candidates.push([name, raw]);
    });
    // the view of a batch's candidates when the state needs it (orphaned: declarations), else of the page's only
    const views = await view(ctx, needsView ? candidates : candidates.slice(0, limit - items.length), n);
    let consumed = names.length;
    for (const info of views) {
      if (items.length === limit) break;
      if (q.state === 'active' && info.orphaned) continue;
      if (q.state === 'orphaned' && !info.orphaned) continue;
      items.push(info);
      if (items.length === limit) consumed = names.indexOf(info.name) + 1;
    }
    last = names[consumed - 1];
    scanned += consumed;
    if (consumed < names.length) more = true;
    min = `(${last}`;
  }
  return { items, cursor: more && last !== undefined ? Buffer.from(last, 'utf8').toString('base64url') : null };
}

/** The view of `defs` (name, stored JSON), with their pause notes (HMGET). */
async function view(ctx: InspectorContext, defs: [string, string][], n: number): Promise<ScheduleInfo[]> {
  if (defs.length === 0) return [];
  const notes = await ctx.client.hmget(ctx.sched.pauseNotes, ...defs.map(([name]) => name));
  const byName: Record<string, string> = {};
  defs.forEach(([name], i) => notes[i] != null && (byName[name] = notes[i]!));
  return build(ctx, defs, byName, n);
}
