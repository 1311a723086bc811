import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Inspector } from '../core/admin/inspector.js';
import type { TaskInfo } from '../core/admin/types.js';
import { ApiError, CONSOLE_ACTS, errorBody, errorReply, ROUTES as TASK_ROUTES, type ApiReply, type ConsoleAct, type Route } from './api.js';
import { OPS_ROUTES } from './routes-ops.js';
import { crossSite, securityHeaders } from './security.js';

/** Options of {@link createConsoleHandler}. @publicApi */
export interface ConsoleHandlerOptions {
  /** The only door to Redis: every read and act of the console goes through it. */
  inspector: Inspector;
  /** Refuse every act on the server (405) and hide them in the page. @defaultValue false */
  readOnly?: boolean;
  /**
   * Who may do what (roles). Called for every request (page, assets and API) before anything else
   * with `act` = `'read'`, then, for an act (a POST), again with the act (`queue.pause`,
   * `dead.retry`, … see {@link ConsoleAct}) once its body is read: false refuses it with 403, a
   * thrown error too. The page asks it of every act for its caller and hides those refused (a
   * viewer sees no buttons); the server refuses them whatever the page shows.
   * @defaultValue every request and act is allowed
   */
  authorize?: (req: IncomingMessage, act: ConsoleAct) => boolean | Promise<boolean>;
  /** Replaces a task's payload before it leaves the server (e.g. masks secrets). @defaultValue the payload as it is */
  redact?: (payload: unknown, task: TaskInfo) => unknown;
  /** Who acts, as named in the `operator.acted` events. @defaultValue `'console'` */
  actor?: (req: IncomingMessage) => string;
  /**
   * The path the console is served under (e.g. `'/chronos'`), stripped from `req.url` when present.
   * Mounted with `app.use(path, handler)` (express strips it itself) it may be left out. @defaultValue ''
   */
  basePath?: string;
}

/** A Node request handler; `next` (Connect/express style) is called for paths outside the console. */
export type ConsoleHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

const MAX_BODY = 64 * 1024;
/**
 * Deepest an act's body may nest (objects and arrays; the body itself is level 1). A limits update,
 * the deepest body an act takes, is 4 (`{ groups: { acme: { rate: { … } } } }`); JSON.parse takes any
 * depth, and 64 KB of `[[[…]]]` (30,000 levels) made the JSON.stringify of an audit entry or of an
 * error message throw a RangeError: a 500 (trial 45).
 */
const MAX_BODY_DEPTH = 32;
const ROUTES = [...TASK_ROUTES, ...OPS_ROUTES];
const HERE = fileURLToPath(new URL('./static/', import.meta.url));

/** The page's files, and the vendored ESM builds (copied into `static/vendor/` by the build). */
const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/lib.js': { file: 'lib.js', type: 'text/javascript; charset=utf-8' },
  '/tasks.js': { file: 'tasks.js', type: 'text/javascript; charset=utf-8' },
  '/schedules.js': { file: 'schedules.js', type: 'text/javascript; charset=utf-8' },
  '/limits.js': { file: 'limits.js', type: 'text/javascript; charset=utf-8' },
  '/styles.css': { file: 'styles.css', type: 'text/css; charset=utf-8' },
  '/vendor/preact.mjs': { file: 'vendor/preact.mjs', type: 'text/javascript; charset=utf-8' },
  '/vendor/hooks.mjs': { file: 'vendor/hooks.mjs', type: 'text/javascript; charset=utf-8' },
  '/vendor/htm.mjs': { file: 'vendor/htm.mjs', type: 'text/javascript; charset=utf-8' },
  '/vendor/uplot.mjs': { file: 'vendor/uplot.mjs', type: 'text/javascript; charset=utf-8' },
  '/vendor/uplot.css': { file: 'vendor/uplot.css', type: 'text/css; charset=utf-8' },
  '/charts.js': { file: 'charts.js', type: 'text/javascript; charset=utf-8' },
  '/audit.js': { file: 'audit.js', type: 'text/javascript; charset=utf-8' },
};

/** Where a vendored file comes from in node_modules (used when running from source, before a build). */
const VENDOR_SOURCES: Record<string, string> = {
  'vendor/preact.mjs': 'preact/dist/preact.mjs',
  'vendor/hooks.mjs': 'preact/hooks/dist/hooks.mjs',
  'vendor/htm.mjs': 'htm/dist/htm.mjs',
  'vendor/uplot.mjs': 'uplot/dist/uPlot.esm.js',
  'vendor/uplot.css': 'uplot/dist/uPlot.min.css',
};

/** The vendored hooks build imports the bare specifier `preact`: point it at the vendored file (no import map: CSP). */
export function relinkVendor(text: string): string {
  return text.replace(/from\s*["']preact["']/g, 'from"./preact.mjs"');
}

const cache = new Map<string, Buffer>();
function staticFile(file: string): Buffer | undefined {
  const hit = cache.get(file);
  if (hit) return hit;
  let data: Buffer | undefined;
  if (existsSync(HERE + file)) data = readFileSync(HERE + file);
  else if (VENDOR_SOURCES[file]) {
    try {
      const [pkg, ...rest] = VENDOR_SOURCES[file].split('/');
      const dir = dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)); // `exports` hides dist/ from resolve()
      data = Buffer.from(relinkVendor(readFileSync(join(dir, ...rest), 'utf8')));
    } catch {
      data = undefined;
    }
  }
  if (data) cache.set(file, data);
  return data;
}

/** Where a request comes from, for the audit trail: `console <client address>`. */
function originOf(req: IncomingMessage): string {
  return `console ${req.socket?.remoteAddress ?? 'unknown'}`;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.end();
  securityHeaders(res);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

/** A path parameter, %-decoded. @throws ApiError 400 naming it when an escape is malformed (`%E0%A4%A`). */
function decodeParam(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ApiError(400, `path: malformed %-escape in ${JSON.stringify(text)}`);
  }
}

/**
 * The request's body as text. @throws ApiError 413 past {@link MAX_BODY} bytes: the rest is then
 * read and dropped (not destroyed), so that the client gets the 413 rather than a reset connection.
 */
function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= MAX_BODY) return void chunks.push(chunk);
      req.off('data', onData);
      req.resume();
      reject(new ApiError(413, `body: more than ${MAX_BODY} bytes`));
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
    req.once('close', () => reject(new ApiError(400, 'body: the request was closed before its end')));
  });
}

/**
 * The first field of an act's body that its route does not take, as a 400 naming it and the known
 * ones: a misspelt filter (`{ all: true, Type: 'x' }`) would otherwise be dropped, and the act done
 * on every task of the state (trial 25). @throws ApiError 400
 */
function unknownFields(body: Record<string, unknown>, known: readonly string[]): void {
  const bad = Object.keys(body).find((k) => !known.includes(k));
  if (bad === undefined) return;
  const expected = known.length ? `known: ${known.join(', ')}` : 'this act takes none: send {}';
  throw new ApiError(400, `body: unknown field ${JSON.stringify(bad)} (${expected})`);
}

/** True when `value` nests objects or arrays more than `max` levels deep (walked without recursion). */
function deeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * An act's body: the JSON object a framework parsed, or the request's text parsed here.
 * @throws ApiError 413 past {@link MAX_BODY} bytes; 400 when it is not JSON, not an object, or nests
 * more than {@link MAX_BODY_DEPTH} levels
 */
async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parsed = (req as { body?: unknown }).body; // a framework (express.json in Nest) may have read it already
  let value: unknown = parsed;
  if (parsed === undefined || Buffer.isBuffer(parsed) || typeof parsed === 'string') {
    let text = typeof parsed === 'string' ? parsed : Buffer.isBuffer(parsed) ? parsed.toString('utf8') : '';
    if (parsed === undefined && !req.readableEnded) text = await readText(req);
    try {
      value = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      throw new ApiError(400, 'body: not valid JSON');
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ApiError(400, 'body: expected a JSON object');
  if (deeperThan(value, MAX_BODY_DEPTH)) throw new ApiError(400, `body: nested more than ${MAX_BODY_DEPTH} levels deep`);
  return value as Record<string, unknown>;
}

/**
 * The request target as a URL. A target in origin form is a path whatever it starts with:
 * `new URL('//x/api/overview', base)` would take `x` for a host and `/api/overview` for the path,
 * so a request that a front check by path prefix (`/chronos`) let pass would reach the API (trial 41).
 */
function requestUrl(target = '/'): URL {
  return new URL(target.startsWith('/') ? `http://console.invalid${target}` : target, 'http://console.invalid/');
}

/**
 * Why a request target is refused, or undefined: a path with a `.` or `..` segment (also written
 * `%2e`) or a backslash. URL parsing resolves them (`/chronos/x/%2e%2e/api/…` and `/chronos/x\..\api/…`
 * are `/chronos/api/…`), but a proxy or router in front that does not saw another path, and its rules
 * for `/chronos/api/…` did not apply (trial 45). A browser resolves them before it sends a request.
 */
function pathTrick(target = '/', base: string): string | undefined {
  let raw = target.split('?')[0];
  if (!raw.includes('\\') && !raw.split('/').some((seg) => /^(\.|%2e){1,2}$/i.test(seg))) return undefined;
  if (base && raw.toLowerCase().startsWith(base.toLowerCase() + '/')) raw = raw.slice(base.length);
  return `path: ${JSON.stringify(raw)} has a "." or ".." segment or a backslash: not served (ask for the path they resolve to)`;
}

/** The `Allow` header of a 405: every method the path's routes answer, HEAD with GET (as the route lookup takes it). */
function allowOf(routes: readonly Route[]): string {
  const methods = new Set(routes.flatMap((r) => (r.method === 'GET' ? ['GET', 'HEAD'] : [r.method])));
  return [...methods].join(', ');
}

/**
 * The web console as a framework-free Node handler: the page (`GET <base>/`), its assets, and the
 * JSON API under `<base>/api/` that the page uses (docs/console.md). Usable with `node:http`,
 * express/Connect (`app.use('/chronos', handler)`) and the Nest module's `console` option.
 *
 * Every response carries a strict Content-Security-Policy (no inline script) and `nosniff`. Reads
 * are GET; acts are POST with a JSON body (`Content-Type: application/json`, else 415), refused
 * with 405 when `readOnly`. A cross-site request (by `Sec-Fetch-Site`, or an `Origin` that is not
 * the `Host`) is refused with 403 on every API route. `authorize(req)` false → 403 on every route.
 * A path with a `.`/`..` segment (or `%2e`) or a backslash is a 400, and so is an act's body over
 * 64 KB (413), not JSON or nested more than 32 levels.
 * @publicApi
 */
export function createConsoleHandler(options: ConsoleHandlerOptions): ConsoleHandler {
  const { inspector, readOnly = false, authorize } = options;
  const redact = options.redact ?? ((p: unknown) => p);
  const actorOf = options.actor ?? (() => 'console');
  const base = (options.basePath ?? '').replace(/\/+$/, '');

  const allowed = async (req: IncomingMessage, act: ConsoleAct): Promise<boolean> => {
    if (!authorize) return true;
    try {
      return (await authorize(req, act)) === true;
    } catch {
      return false;
    }
  };
  /** What the caller may do, for the page (all false when read-only). */
  const can = async (req: IncomingMessage): Promise<Record<string, boolean>> => {
    const out: Record<string, boolean> = {};
    for (const a of CONSOLE_ACTS) out[a] = !readOnly && (await allowed(req, a));
    return out;
  };

  const serve = async (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): Promise<void> => {
    const url = requestUrl(req.url);
    let path = url.pathname;
    if (base && (path === base || path.startsWith(base + '/'))) path = path.slice(base.length);
    else if (base && next) return next();
    const trick = pathTrick(req.url, base);
    if (trick) return send(res, 400, errorBody(400, trick));
    if (!(await allowed(req, 'read'))) return send(res, 403, errorBody(403, 'forbidden'));
    const method = req.method ?? 'GET';
    if (path.startsWith('/api/')) {
      const why = crossSite(req);
      if (why) return send(res, 403, errorBody(403, `cross-site request refused (${why})`));
      return api(req, res, method, path.slice(4), url.searchParams);
    }
    if (method !== 'GET' && method !== 'HEAD') return send(res, 405, errorBody(405, `${method} not allowed`), { Allow: 'GET, HEAD' });
    // express's app.use('/chronos') hands '/chronos' over as '/': tell it from '/chronos/' by originalUrl
    const here = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
    if (path === '' || (path === '/' && !here.split('?')[0].endsWith('/'))) {
      // `/chronos` → `/chronos/`, so that the page's relative URLs (app.js, api/…) resolve under it
      securityHeaders(res);
      res.writeHead(308, { Location: here.replace(/^([^?]*?)\/*(\?.*)?$/, '$1/$2'), 'Cache-Control': 'no-store' });
      return void res.end();
    }
    const entry = FILES[path];
    const data = entry && staticFile(entry.file);
    if (!entry || !data) {
      if (next) return next();
      return send(res, 404, errorBody(404, `not found: ${path}`));
    }
    securityHeaders(res);
    res.writeHead(200, { 'Content-Type': entry.type, 'Cache-Control': 'no-cache', 'Content-Length': String(data.length) });
    res.end(method === 'HEAD' ? undefined : data);
  };

  const api = async (req: IncomingMessage, res: ServerResponse, method: string, path: string, query: URLSearchParams): Promise<void> => {
    const candidates = ROUTES.filter((r) => r.pattern.test(path));
    if (candidates.length === 0) return send(res, 404, errorBody(404, `no API route ${path}`));
    const route = candidates.find((r) => r.method === method || (r.method === 'GET' && method === 'HEAD'));
    if (!route) return send(res, 405, errorBody(405, `${method} not allowed on ${path}`), { Allow: allowOf(candidates) });
    let reply: ApiReply;
    try {
      if (route.method === 'POST') {
        if (readOnly) return send(res, 405, errorBody(405, 'the console is read-only: acts are refused'), { Allow: 'GET, HEAD' });
        const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        if (type !== 'application/json') return send(res, 415, errorBody(415, 'acts need Content-Type: application/json'));
      }
      const params = route.pattern.exec(path)!.slice(1).map(decodeParam);
      const body = route.method === 'POST' ? await readBody(req) : {};
      // every POST is an act, asked of authorize (Route's type makes a POST name it); a GET is a read
      const act = route.method === 'POST' ? route.act(params, body) : undefined;
      if (act !== undefined && !(await allowed(req, act))) return send(res, 403, errorBody(403, `forbidden: you may not ${act}`));
      if (route.method === 'POST' && route.fields !== 'checked') unknownFields(body, route.fields(params));
      const caps = path === '/overview' ? await can(req) : {};
      const ctx = { inspector, redact, actor: actorOf(req), origin: originOf(req), readOnly, can: caps, query, body };
      reply = { status: 200, body: await route.run(ctx, params) };
    } catch (err) {
      reply = errorReply(err);
    }
    send(res, reply.status, reply.body);
  };

  return (req, res, next) => {
    serve(req, res, next).catch((err) => (next ? next(err) : send(res, 500, errorBody(500, String(err)))));
  };
}
