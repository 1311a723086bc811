// The console's API routes for charts and schedule activity (docs/console.md), beside the task and
// schedule routes of api.ts.
import type { HistoryWindow } from '../core/admin/types.js';
import { ApiError, intParam, type ApiContext, type Route } from './api.js';

function windowOf(query: URLSearchParams): HistoryWindow {
  const w = query.get('window') ?? 'hour';
  if (w === 'hour' || w === 'day') return w;
  throw new ApiError(400, `window: expected hour or day, got ${JSON.stringify(w)}`);
}

const seg = '([^/]+)';
const re = (path: string) => new RegExp(`^${path.replaceAll(':p', seg)}$`);

/** GET history (every queue and the total) or one queue's; GET schedule activity (sparklines, expected vs fired, silent); GET the audit trail. */
export const OPS_ROUTES: Route[] = [
  { method: 'GET', pattern: re('/history'), run: (ctx: ApiContext) => ctx.inspector.history(windowOf(ctx.query)) },
  {
    method: 'GET',
    pattern: re('/queues/:p/history'),
    run: async (ctx: ApiContext, [queue]) => {
      const window = windowOf(ctx.query);
      await ctx.inspector.requireQueue(queue); // a typo is a 404, not a chart of zeros
      return ctx.inspector.queueHistory(queue, window);
    },
  },
  { method: 'GET', pattern: re('/schedule-activity'), run: (ctx: ApiContext) => ctx.inspector.scheduleActivity() },
  {
    method: 'GET',
    pattern: re('/audit'),
    run: (ctx: ApiContext) => {
      const q = ctx.query;
      const result = q.get('result');
      return ctx.inspector.audit({
        limit: intParam(q, 'limit', 50),
        cursor: q.get('cursor') || undefined,
        actor: q.get('actor') || undefined,
        action: q.get('action') || undefined,
        queue: q.get('queue') || undefined,
        schedule: q.get('schedule') || undefined,
        result: result === 'done' || result === 'failed' ? result : undefined,
      });
    },
  },
];
