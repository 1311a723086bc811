import { Inject, Injectable, Logger, type CanActivate, type OnModuleInit, type Type } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost, ModuleRef } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { lastValueFrom, isObservable } from 'rxjs';
import { createConsoleHandler } from '../../console/handler.js';
import { errorBody } from '../../console/api.js';
import { securityHeaders } from '../../console/security.js';
import { consolePrefix, headersFirst, skipBodyParsers, type ExpressLike } from './express-stack.js';
import { CHRONOS_OPTIONS } from '../chronos.constants.js';
import type { ResolvedChronosOptions } from '../options/resolve-options.js';
import { InspectorService } from '../services/inspector.service.js';

type Next = (err?: unknown) => void;

/**
 * The actor a guard named: `console:<name>` of the `req.user` a guard (e.g. Passport's) set, by its
 * `username`, `name`, `email`, `id` or `sub`; undefined when there is none.
 */
export function userActor(req: IncomingMessage): string | undefined {
  const user = (req as { user?: unknown }).user;
  if (typeof user === 'string' && user !== '') return `console:${user}`;
  if (typeof user !== 'object' || user === null) return undefined;
  const u = user as Record<string, unknown>;
  for (const k of ['username', 'name', 'email', 'id', 'sub']) {
    const v = u[k];
    if ((typeof v === 'string' && v !== '') || typeof v === 'number') return `console:${String(v)}`;
  }
  return undefined;
}

/** Joins the global prefix and the console path into one mount path (`/api` + `/chronos` → `/api/chronos`). */
export function mountPath(prefix: string, path: string): string {
  const joined = `/${prefix}/${path}`.replace(/\/+/g, '/').replace(/\/$/, '');
  return joined || '/';
}

/**
 * Mounts the web console on the app's express instance when the `console` option is set (at
 * module init, before Nest's not-found handler): behind the app's global guards, the `guard`
 * option and `authorize(req)`. The app's body parsers pass over the console's path (the console
 * reads an act's body itself, after the guards, up to 64 KB), and every response under the path
 * carries the console's security headers. Does nothing without an HTTP adapter (e.g. a bare testing module)
 * and, with a warning, on a non-express one.
 */
@Injectable()
export class ChronosConsoleMount implements OnModuleInit {
  private readonly logger = new Logger('ChronosConsole');
  /** The full mount path, once mounted. */
  mountedAt?: string;

  constructor(
    @Inject(CHRONOS_OPTIONS) private readonly options: ResolvedChronosOptions,
    private readonly inspector: InspectorService,
    private readonly adapterHost: HttpAdapterHost,
    private readonly appConfig: ApplicationConfig,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onModuleInit(): Promise<void> {
    const c = this.options.console;
    const adapter = this.adapterHost?.httpAdapter;
    if (!c.enabled || !adapter) return;
    if (adapter.getType() !== 'express') {
      this.logger.warn(`the console needs @nestjs/platform-express (this app runs on ${adapter.getType()}): not mounted`);
      return;
    }
    const guards: CanActivate[] = [];
    for (const g of c.guards) guards.push(typeof g === 'function' ? await this.guardInstance(g) : g);
    const global = this.appConfig.getGlobalGuards() as CanActivate[];
    const instanceId = this.options.instanceId;
    const handler = createConsoleHandler({
      inspector: this.inspector.inspector,
      readOnly: c.readOnly,
      authorize: c.authorize,
      redact: c.redact,
      actor: c.actor ?? ((req) => userActor(req) ?? `console:${instanceId}`),
    });
    const path = mountPath(this.appConfig.getGlobalPrefix(), c.path);
    const all = [...global, ...guards];
    const self = this; // eslint-disable-line @typescript-eslint/no-this-alias -- a named function (for stack traces) that needs the mount
    const mounted = async function chronosConsole(req: IncomingMessage, res: ServerResponse, next: Next): Promise<void> {
      for (const guard of all) {
        const ctx = new ExecutionContextHost([req, res, next], ChronosConsoleMount as Type, chronosConsole);
        ctx.setType('http');
        let ok = false;
        let status = 403;
        try {
          const r = guard.canActivate(ctx);
          ok = Boolean(isObservable(r) ? await lastValueFrom(r) : await r);
        } catch (err) {
          const s = (err as { getStatus?: () => number }).getStatus?.();
          if (typeof s === 'number') status = s;
          else self.logger.error(`a console guard threw: ${err instanceof Error ? err.message : String(err)}`);
        }
        if (!ok) {
          securityHeaders(res);
          res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
          return void res.end(JSON.stringify(errorBody(status, status === 401 ? 'unauthorized' : 'forbidden')));
        }
      }
      handler(req, res, next);
    };
    const app = adapter.getInstance() as ExpressLike;
    app.use(path, (req: IncomingMessage, res: ServerResponse, next: Next) => {
      mounted(req, res, next).catch(next);
    });
    // authentication first: no body is read under the console's path before its guards have run
    const owned = consolePrefix(path, c.path);
    skipBodyParsers(app, owned);
    headersFirst(app, owned);
    this.mountedAt = path;
    const guarded = all.length > 0 || c.authorize !== undefined;
    const mode = c.readOnly ? ', read-only' : '';
    this.logger.log(`Console mounted at ${path}${mode}${guarded ? '' : ' (no guard nor authorize: open to anyone who reaches the app)'}`);
  }

  private async guardInstance(type: Type<CanActivate>): Promise<CanActivate> {
    try {
      return this.moduleRef.get(type, { strict: false });
    } catch {
      return this.moduleRef.create(type);
    }
  }
}
