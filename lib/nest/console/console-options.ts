import type { CanActivate, Type } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { TaskInfo } from '../../core/admin/types.js';
import type { ConsoleAct } from '../../console/api.js';

/** The `console` option of `ChronosModule`: the web console mounted in the app (express only). @publicApi */
export interface ChronosConsoleOptions {
  /** Where it is served, under the app's global prefix. @defaultValue '/chronos' */
  path?: string;
  /** Show everything, refuse every act on the server (405). @defaultValue false */
  readOnly?: boolean;
  /**
   * Guards run before every console request (page, assets, API), after the app's global guards
   * (`APP_GUARD`, `useGlobalGuards`), which run too. A class is instantiated by Nest. Refusal: 403,
   * or the status of the exception the guard throws.
   */
  guard?: Type<CanActivate> | CanActivate | (Type<CanActivate> | CanActivate)[];
  /**
   * Roles: called for every console request after the guards with `act` = `'read'` (false → 403),
   * and for every act (a POST) with the act (`queue.pause`, `dead.retry`, `schedule.trigger`, …:
   * {@link ConsoleAct}): false → 403 for that act. The page hides the acts its caller may not do.
   * E.g. `(req, act) => act === 'read' || req.user?.roles.includes('operator')`.
   */
  authorize?: (req: IncomingMessage, act: ConsoleAct) => boolean | Promise<boolean>;
  /** Replaces a task's payload before it leaves the server (e.g. masks secrets). */
  redact?: (payload: unknown, task: TaskInfo) => unknown;
  /**
   * Who acts, as named in the `operator.acted` events and the audit trail. @defaultValue
   * `console:<name>` of the `req.user` the guard set (its `username`, `name`, `email`, `id` or
   * `sub`), else `console:<instanceId>`
   */
  actor?: (req: IncomingMessage) => string;
}

/** The console options after validation. @internal */
export interface ResolvedConsoleOptions {
  enabled: boolean;
  path: string;
  readOnly: boolean;
  guards: (Type<CanActivate> | CanActivate)[];
  authorize?: ChronosConsoleOptions['authorize'];
  redact?: ChronosConsoleOptions['redact'];
  actor?: ChronosConsoleOptions['actor'];
}

const KEYS = new Set(['path', 'readOnly', 'guard', 'authorize', 'redact', 'actor']);

/** Validates the `console` option (off unless `true` or an object), pushing problems to `issues`. @internal */
export function resolveConsole(c: unknown, issues: string[]): ResolvedConsoleOptions {
  const out: ResolvedConsoleOptions = { enabled: false, path: '/chronos', readOnly: false, guards: [] };
  if (c === undefined || c === false) return out;
  out.enabled = true;
  if (c === true) return out;
  if (typeof c !== 'object' || c === null || Array.isArray(c)) {
    issues.push(`console: expected true, false or { path?, readOnly?, guard?, authorize?, redact?, actor? }, got ${typeof c}`);
    return out;
  }
  const o = c as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!KEYS.has(key)) issues.push(`console: unknown option "${key}"`);
  if (o.path !== undefined) {
    if (typeof o.path !== 'string' || !/^\/[A-Za-z0-9._~\-/]*$/.test(o.path) || o.path.includes('//')) {
      issues.push(`console.path: expected a path such as "/chronos", got ${JSON.stringify(o.path)}`);
    } else out.path = o.path.replace(/\/+$/, '') || '/';
  }
  if (o.readOnly !== undefined && typeof o.readOnly !== 'boolean')
    issues.push(`console.readOnly: expected true or false, got ${JSON.stringify(o.readOnly)}`);
  else out.readOnly = o.readOnly === true;
  const guards = o.guard === undefined ? [] : Array.isArray(o.guard) ? o.guard : [o.guard];
  for (const g of guards) {
    const ok = typeof g === 'function' || (typeof g === 'object' && g !== null && typeof (g as CanActivate).canActivate === 'function');
    if (!ok) issues.push('console.guard: expected a guard class or instance (with canActivate)');
  }
  out.guards = guards as ResolvedConsoleOptions['guards'];
  for (const key of ['authorize', 'redact', 'actor'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'function') issues.push(`console.${key}: expected a function`);
    else (out as unknown as Record<string, unknown>)[key] = o[key];
  }
  return out;
}
