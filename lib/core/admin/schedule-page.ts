/**
 * A page of the schedule registry, filtered by labels, name prefix and state, over its indexes
 * (the `schedule-index` Lua snippet: in each shard, a names ZSET and one ZSET per label pair): the
 * shards' indexes are read in name order side by side and merged, and the view of {@link build} is
 * made for the page's schedules only, never the whole registry.
 */
import { InvalidOptionsError } from '../runtime/errors.js';
import { show } from '../runtime/options.js';
import { byShard, isStoredName, isValidName, shardKeysOf, type ShardKeys } from '../redis/keys.js';
import type { StoredSchedule } from '../scheduler/definition.js';
import { labelsProblem } from '../scheduler/labels.js';
import { decodeStored } from '../scheduler/stored-form.js';
import type { InspectorContext } from './context.js';
import { build } from './schedules.js';
import type { ScheduleInfo } from './types.js';

/**
 * A schedule's state for {@link SchedulePageQuery.state}, as the CLI's state column shows it: `paused`, `orphaned`
 * (a paused orphan is both), `ended` (neither, and past its `endAt` or its `maxRuns` reached: it fires no more),
 * `active` (none of these: it fires).
 */
export type ScheduleState = 'active' | 'paused' | 'orphaned' | 'ended';

/** What `Inspector.schedulePage` lists. @publicApi */
export interface SchedulePageQuery {
  /**
   * Only schedules with every one of these labels (`{ tenant: 'acme' }`: label tenant = acme); keys and
   * values follow the rules of `ScheduleDefinition.labels` (a filter that breaks them throws).
   */
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
const STATES: readonly ScheduleState[] = ['active', 'paused', 'orphaned', 'ended'];
const QUERY_KEYS = new Set(['labels', 'prefix', 'state', 'cursor', 'limit']);
/** Above every name character in byte order (names are ASCII): the upper bound of a prefix range. */
const PAST_NAMES = '\u00ff';

function bad(issue: string): never {
  throw new InvalidOptionsError([issue], 'schedule page options');
}

/** The query, checked. @throws InvalidOptionsError naming the offending option and value. */
function checked(q: SchedulePageQuery): { limit: number; after?: string; labels: [string, string][] } {
  if (typeof q !== 'object' || q === null || Array.isArray(q)) bad(`expected an object of options, got ${show(q)}`);
  // an option misspelt would otherwise be a filter silently not applied (trial 7)
  const unknown = Object.keys(q).filter((k) => !QUERY_KEYS.has(k));
  if (unknown.length > 0)
    bad(`unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')} (known: ${[...QUERY_KEYS].join(', ')})`);
  const limit = q.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) bad(`limit: expected an integer 1-1000, got ${show(q.limit)}`);
  // a prefix may be '.' or '..' (of '.x', '..x'), which are not names themselves
  const prefix: unknown = q.prefix;
  if (prefix !== undefined && (typeof prefix !== 'string' || prefix === '' || !isValidName(prefix.replace(/^\.{1,2}$/, '$&x'))))
    bad(`prefix: expected 1-200 characters of [A-Za-z0-9_.:-], got ${show(prefix)}`);
  if (q.state !== undefined && !STATES.includes(q.state)) bad(`state: expected one of ${STATES.join(', ')}, got ${show(q.state)}`);
  let after: string | undefined;
  if (q.cursor !== undefined) {
    after = typeof q.cursor === 'string' ? Buffer.from(q.cursor, 'base64url').toString('utf8') : '';
    // a stored name: a page may end at a schedule named '.' or '..' that an earlier version stored
    if (!isStoredName(after)) bad(`cursor: expected a cursor of a previous page, got ${show(q.cursor)}`);
  }
  // a filter is checked as a definition's labels are: one no schedule can carry matches none, and says so
  const problem = labelsProblem(q.labels);
  if (problem) bad(problem.issue);
  return { limit, after, labels: Object.entries(q.labels ?? {}) };
}

/**
 * A page of schedules by name (see {@link SchedulePageQuery}). In each shard, walks the smallest of
 * the filter's label ZSETs (by their size summed over the shards; else the names index) with
 * ZRANGEBYLEX from the cursor, merges the shards' names in byte order, checks the other labels and
 * the state on the definitions (HMGET per shard), and builds the view of the page's schedules only.
 * Cost: ZCARD per label and shard, then per batch one ZRANGEBYLEX and one HMGET per shard (all in
 * flight), at most {@link PAGE_SCAN_CAP} members looked at, and the view of the page. An index
 * member whose definition is gone or no longer carries the label is skipped, never removed here: a
 * removal could race a writer that just put it back.
 * @throws InvalidOptionsError naming a bad limit, prefix, state, cursor, label key or label value (labels as in
 *   `ScheduleDefinition.labels`: at most 16, keys of [A-Za-z0-9_./-], values without control characters or `=`).
 */
export async function schedulePage(ctx: InspectorContext, q: SchedulePageQuery = {}, n = 5): Promise<SchedulePage> {
  const { limit, after, labels } = checked(q);
  const shards = shardKeysOf(ctx.namespace);
  let source = (k: ShardKeys): string => k.nameIndex;
  if (labels.length > 0) {
    const sizes = await Promise.all(
      labels.map(async ([key, value]) => {
        const each = await Promise.all(shards.map((k) => ctx.client.zcard(k.label(key, value))));
        return each.reduce((a, b) => a + b, 0);
      }),
    );
    const i = sizes.indexOf(Math.min(...sizes));
    if (sizes[i] === 0) return { items: [], cursor: null };
    const [key, value] = labels[i];
    source = (k) => k.label(key, value);
  }
  const prefix = q.prefix;
  let min = after !== undefined && (prefix === undefined || after >= prefix) ? `(${after}` : prefix ? `[${prefix}` : '-';
  const max = prefix ? `[${prefix}${PAST_NAMES}` : '+';
  const needsView = q.state === 'active' || q.state === 'orphaned' || q.state === 'ended';
  const items: ScheduleInfo[] = [];
  let scanned = 0;
  let last: string | undefined;
  let more = true;
  while (items.length < limit && scanned < PAGE_SCAN_CAP && more) {
    const want = Math.min(1000, PAGE_SCAN_CAP - scanned, Math.max(limit - items.length, 50) * (labels.length > 1 || q.state ? 4 : 1));
    // each shard's next names, one more than wanted (to know whether anything follows: no empty last
    // page); merged in byte order (names are ASCII), the first `want` of them are this batch
    const lists = await Promise.all(shards.map((k) => ctx.client.zrangebylex(source(k), min, max, 'LIMIT', 0, want + 1)));
    const merged = lists.flat().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    more = merged.length > want;
    const names = merged.slice(0, want);
    if (names.length === 0) break;
    const raws = await definitionsOf(ctx, names);
    const candidates: [string, string][] = [];
    names.forEach((name) => {
      const raw = raws.get(name);
      if (raw == null) return; // deleted meanwhile
      let s: StoredSchedule;
      try {
        s = decodeStored(name, raw);
      } catch {
        if (labels.length === 0 && q.state === undefined) candidates.push([name, raw]); // shown as unreadable, unfiltered lists only
        return;
      }
      if (!labels.every(([k, v]) => s.labels?.[k] === v)) return;
      if (q.state === 'paused' && s.paused !== true) return;
      if ((q.state === 'active' || q.state === 'ended') && s.paused === true) return;
      candidates.push([name, raw]);
    });
    // the view of a batch's candidates when the state needs it (orphaned: declarations), else of the page's only
    const views = await view(ctx, needsView ? candidates : candidates.slice(0, limit - items.length), n);
    let consumed = names.length;
    for (const info of views) {
      if (items.length === limit) break;
      if (q.state === 'active' && (info.orphaned || info.ended)) continue;
      if (q.state === 'orphaned' && !info.orphaned) continue;
      if (q.state === 'ended' && (info.orphaned || !info.ended)) continue;
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

/** The stored definitions of `names`, by name (HMGET per shard, all in flight); a name with none is absent. */
export async function definitionsOf(ctx: InspectorContext, names: readonly string[]): Promise<Map<string, string>> {
  const groups = [...byShard(ctx.namespace, names, (name) => name)];
  const replies = await Promise.all(groups.map(([k, group]) => ctx.client.hmget(k.schedules, ...group)));
  const out = new Map<string, string>();
  groups.forEach(([, group], i) => group.forEach((name, j) => replies[i][j] != null && out.set(name, replies[i][j]!)));
  return out;
}

/** The view of `defs` (name, stored JSON), with their pause notes (HMGET). */
async function view(ctx: InspectorContext, defs: [string, string][], n: number): Promise<ScheduleInfo[]> {
  if (defs.length === 0) return [];
  const notes = await ctx.client.hmget(ctx.sched.pauseNotes, ...defs.map(([name]) => name));
  const byName: Record<string, string> = {};
  defs.forEach(([name], i) => notes[i] != null && (byName[name] = notes[i]!));
  return build(ctx, defs, byName, n);
}
