import type { OperatorAction } from '../runtime/events.js';
import { InvalidOptionsError } from '../runtime/errors.js';
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

/** A bulk act's filter in words, for its audit entry (`type=mail.send error~"timeout"`). */
export const filterText = (f: TaskFilter): string =>
  [f.type !== undefined ? `type=${f.type}` : '', f.error !== undefined ? `error~${JSON.stringify(f.error)}` : ''].filter(Boolean).join(' ');

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

/**
 * Runs an act and records it in the audit trail, done (with its count) or failed (with the error's
 * message); the record emits `audit.recorded`. A failure to record is not the act's: it is ignored
 * (the act's own outcome, or its error, is what the caller gets).
 */
export async function audited<T>(
  ctx: InspectorContext,
  defaultOrigin: string | undefined,
  action: OperatorAction,
  opts: ActOptions,
  target: AuditTarget,
  run: () => Promise<T>,
  count: (r: T) => number | undefined = () => undefined,
): Promise<T> {
  const who = { actor: opts.actor ?? ctx.actor, origin: opts.origin ?? defaultOrigin, action, ...target };
  let r: T;
  try {
    r = await run();
  } catch (err) {
    await recordAct(ctx, { ...who, result: 'failed', error: err instanceof Error ? err.message : String(err) }).catch(() => {});
    throw err;
  }
  await recordAct(ctx, { ...who, result: 'done', count: count(r) }).catch(() => {});
  return r;
}
