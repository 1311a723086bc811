// The console's API routes for charts and schedule activity (docs/console.md), beside the task and
// schedule routes of api.ts.
import type { HistoryWindow } from '../core/admin/types.js';
import { ApiError, intParam, pageQueryOf, type ApiContext, type Route } from './api.js';
import { sharedRead } from './shared-read.js';

function windowOf(query: URLSearchParams): HistoryWindow {
  const w = query.get('window') ?? 'hour';
  if (w === 'hour' || w === 'day') return w;
  throw new ApiError(400, `window: expected hour or day, got ${JSON.stringify(w)}`);
}

/**
 * GET schedule-activity: `?name=<schedule>` that one schedule's (404 when there is none); with a page
 * query (`label`, `prefix`, `state`, `cursor`, `limit`, as schedule-page) the schedules of that page;
 * with neither every schedule's (O(schedules): the page asks for its page only).
 */
async function scheduleActivity(ctx: ApiContext): Promise<unknown> {
  const i = ctx.inspector;
  const name = ctx.query.get('name');
  if (name) return i.scheduleActivity([await i.schedule(name, 1)]);
  const query = pageQueryOf(ctx.query, true);
  if (!query) return sharedRead(i, 'schedule-activity', () => i.scheduleActivity()); // O(schedules): one at a time, shared
  return i.scheduleActivity((await i.schedulePage(query)).items);
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
  { method: 'GET', pattern: re('/schedule-activity'), run: (ctx: ApiContext) => scheduleActivity(ctx) },
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
        result: (result || undefined) as 'done' | 'failed' | undefined, // checked by the engine: another value is a 400
      });
    },
  },
];
