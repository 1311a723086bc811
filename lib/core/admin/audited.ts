import type { OperatorAction } from '../runtime/events.js';
import { InvalidOptionsError } from '../runtime/errors.js';
import { OptionProblems } from '../runtime/options.js';
import { databaseChecked } from '../redis/server-check.js';
import { recordAct } from './audit.js';
import type { InspectorContext } from './context.js';
import { HISTORY_WINDOWS } from './history.js';
import type { ActOptions, ActResult, HistoryWindow, TaskFilter } from './types.js';

/** What an act is on, for its audit entry. */
export interface AuditTarget {
  queue?: string;
  schedule?: string;
  taskId?: string;
  detail?: string;
}

/** The count of an act's result. */
export const counted = (r: ActResult): number => r.count;

/** What an act did, for its audit entry: its count, and why it did nothing (put before the target's detail). */
export interface ActOutcome {
  count: number;
  /** Why nothing was done (`already paused`), when so. */
  unchanged?: string;
}

/**
 * The outcome of a pause or resume that reports whether it changed the state: count 1, or count 0
 * with `unchanged` (`already paused`, `not paused`) when the queue or schedule was so already.
 */
export const toggled =
  (unchanged: string) =>
  (changed: boolean): ActOutcome =>
    changed ? { count: 1 } : { count: 0, unchanged };

/** A bulk act's filter in words, for its audit entry (`type=mail.send error~"timeout" group=acme`). */
export const filterText = (f: TaskFilter): string =>
  [
    f.type !== undefined ? `type=${f.type}` : '',
    f.error !== undefined ? `error~${JSON.stringify(f.error)}` : '',
    f.group !== undefined ? `group=${f.group}` : '',
  ]
    .filter(Boolean)
    .join(' ');

/** Checks a history window. @throws InvalidOptionsError naming the value. */
export function checkWindow(window: unknown): HistoryWindow {
  if (!(HISTORY_WINDOWS as unknown[]).includes(window)) {
    throw new InvalidOptionsError(
      [`window: expected one of ${HISTORY_WINDOWS.join(', ')}, got ${JSON.stringify(window)}`],
      'history options',
    );
  }
  return window as HistoryWindow;
}

/** The options every act takes ({@link ActOptions}). */
const ACT_KEYS: readonly string[] = ['actor', 'origin'];

/**
 * Checks the options of an Inspector act at its door, before anything reads them (the audit entry's
 * `note`, `force`, a filter) or touches Redis: undefined is `{}`; `null`, a non-object or an unknown
 * key is refused (a misspelt filter key such as `typ` would widen a bulk act to the whole state), as
 * are an `actor` that is not a non-empty string (the audit trail names it), an `origin` that is not a
 * string and a `force` that is not true or false. Nothing is recorded for options refused here.
 * @param call the act's name, for the message (`Invalid pauseSchedule options`)
 * @param keys the act's own keys besides `actor` and `origin` (`note`, `force`, `state`, `queue`, `type`, `error`)
 * @returns the options, `{}` for undefined
 * @throws InvalidOptionsError naming the offending value or key
 */
export function actOptions<T extends ActOptions>(opts: T | undefined, call: string, keys: readonly string[] = []): T {
  if (opts === undefined) return {} as T;
  const p = new OptionProblems();
  const known = new Set([...ACT_KEYS, ...keys]);
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
    p.expected('', `an object { ${[...known].map((k) => `${k}?`).join(', ')} } or undefined`, opts);
  } else {
    const o = opts as Record<string, unknown>;
    p.unknownKeys(o, known);
    if (o.actor !== undefined && (typeof o.actor !== 'string' || o.actor.trim() === '')) p.expected('actor', 'a non-empty name', o.actor);
    if (o.origin !== undefined && typeof o.origin !== 'string') p.expected('origin', 'a string', o.origin);
    if (known.has('force')) p.bool('force', o.force);
  }
  p.throwIfAny(`${call} options`);
  return opts;
}

/**
 * Runs an act and records it in the audit trail, done (with its count, and when `count` gives an
 * {@link ActOutcome} that says nothing was done, why, before the target's detail: `already paused;
 * <note>`) or failed (with the error's message); the record emits `audit.recorded`. A failure to record is not the act's: it is ignored
 * (the act's own outcome, or its error, is what the caller gets).
 */
export async function audited<T>(
  ctx: InspectorContext,
  defaultOrigin: string | undefined,
  action: OperatorAction,
  opts: ActOptions,
  target: AuditTarget,
  run: () => Promise<T>,
  count: (r: T) => number | ActOutcome | undefined = () => undefined,
): Promise<T> {
  await databaseChecked(ctx.client); // a wrong database is refused before the act, and not recorded there
  const who = { actor: opts.actor ?? ctx.actor, origin: opts.origin ?? defaultOrigin, action, ...target };
  let r: T;
  try {
    r = await run();
  } catch (err) {
    await recordAct(ctx, { ...who, result: 'failed', error: err instanceof Error ? err.message : String(err) }).catch(() => {});
    throw err;
  }
  const c = count(r);
  const o: Partial<ActOutcome> = typeof c === 'object' ? c : { count: c };
  const detail = o.unchanged !== undefined ? [o.unchanged, target.detail].filter(Boolean).join('; ') : target.detail;
  await recordAct(ctx, { ...who, result: 'done', count: o.count, detail }).catch(() => {});
  return r;
}

/**
 * Runs the check a caller makes before an act (the queue it names must exist, the task its id names
 * must be found) and, when the check throws, records the act as failed with the check's error before
 * rethrowing it: an act refused at its caller's door is in the audit trail as one refused by the act
 * itself. A check that passes records nothing (the act that follows does).
 */
export async function auditedCheck<T>(
  ctx: InspectorContext,
  defaultOrigin: string | undefined,
  action: OperatorAction,
  opts: ActOptions,
  target: AuditTarget,
  check: () => Promise<T>,
): Promise<T> {
  await databaseChecked(ctx.client);
  try {
    return await check();
  } catch (err) {
    const who = { actor: opts.actor ?? ctx.actor, origin: opts.origin ?? defaultOrigin, action, ...target };
    await recordAct(ctx, { ...who, result: 'failed', error: err instanceof Error ? err.message : String(err) }).catch(() => {});
    throw err;
  }
}
