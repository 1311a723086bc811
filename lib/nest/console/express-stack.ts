// How the console takes its place in an express app's middleware stack: the app's body parsers pass
// over the console's path (the console reads its own body, after the guards, with its own limit),
// and every response under the path carries the console's security headers, whoever writes it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { securityHeaders } from '../../console/security.js';

type Next = (err?: unknown) => void;
type Handler = (req: IncomingMessage, res: ServerResponse, next: Next) => unknown;

/** The express app as far as the mount needs it (express 5 `router`, express 4 `_router`). */
export interface ExpressLike {
  use(path: string, fn: Handler): unknown;
  router?: { stack?: { handle: unknown }[] };
  _router?: { stack?: { handle: unknown }[] };
}

/** The names body-parser gives its middleware (`express.json()` is `jsonParser`, and so on). */
const BODY_PARSERS = new Set(['jsonParser', 'urlencodedParser', 'textParser', 'rawParser']);

/**
 * The part of the app the console owns: its whole mount path, or only `<mount>/api` when its own
 * `path` is `/`, the app's root (under the global prefix, if any: `/admin` → `/admin/api`), where
 * the app's own pages and routes are too and keep their parsers and headers (trial 31: with
 * `setGlobalPrefix('admin')` and `path: '/'` every `/admin/…` route of the app lost its JSON body).
 * @param mountPath the global prefix and the console's path joined (`mountPath()`)
 * @param consolePath the console's own `path` option (`/chronos`, `/`)
 */
export function consolePrefix(mountPath: string, consolePath: string): string {
  if (consolePath !== '/') return mountPath;
  return mountPath === '/' ? '/api' : `${mountPath}/api`;
}

/** True when the request's path is `prefix` or under it, without regard to case (as express routes). */
export function isUnder(req: IncomingMessage, prefix: string): boolean {
  const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  const path = url.split('?')[0].toLowerCase();
  const base = prefix.toLowerCase();
  return path === base || path.startsWith(base + '/');
}

function stackOf(app: ExpressLike): { handle: unknown }[] {
  const stack = (app.router ?? app._router)?.stack;
  return Array.isArray(stack) ? stack : [];
}

/**
 * Makes the app's body parsers (Nest's `express.json()`/`urlencoded()` and any added with
 * `useBodyParser`) pass over requests under `prefix`, so that no body is read before the console's
 * guards run. Returns how many parsers were wrapped. The wrapper keeps the parser's name (Nest
 * looks layers up by it).
 */
export function skipBodyParsers(app: ExpressLike, prefix: string): number {
  let wrapped = 0;
  for (const layer of stackOf(app)) {
    const parser = layer.handle as Handler;
    if (typeof parser !== 'function' || !BODY_PARSERS.has(parser.name)) continue;
    const skip: Handler = (req, res, next) => (isUnder(req, prefix) ? next() : parser(req, res, next));
    Object.defineProperty(skip, 'name', { value: parser.name });
    layer.handle = skip;
    wrapped++;
  }
  return wrapped;
}

/**
 * Puts a middleware first in the app's stack that sets the console's security headers on every
 * response under `prefix` (Nest's 404, error replies, other middleware's refusals included).
 */
export function headersFirst(app: ExpressLike, prefix: string): void {
  const stack = stackOf(app);
  const before = stack.length;
  app.use('/', function chronosConsoleHeaders(req: IncomingMessage, res: ServerResponse, next: Next) {
    if (isUnder(req, prefix)) securityHeaders(res);
    next();
  });
  if (stack.length === before + 1) stack.unshift(stack.pop()!);
}
