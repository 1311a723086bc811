import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Inspector } from '../core/admin/inspector.js';
import type { TaskInfo } from '../core/admin/types.js';
import { createConsoleHandler } from './handler.js';
import { errorBody } from './api.js';
import { basicCredentials, normalHostName, requestHostName, securityHeaders } from './security.js';

/** Options of {@link startConsoleServer}. @publicApi */
export interface ConsoleServerOptions {
  /** The Inspector the console reads and acts through (its only door to Redis). */
  inspector: Inspector;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Address to bind. Without `basicAuth` only a loopback address is allowed. @defaultValue '127.0.0.1' */
  host?: string;
  /** Hide every action in the page and refuse it on the server (405). @defaultValue false */
  readOnly?: boolean;
  /** `user:password` every request must present (HTTP Basic; 401 otherwise). */
  basicAuth?: string;
  /** Applied to every payload before it leaves the server (keep secrets out of the page). @defaultValue none */
  redact?: (payload: unknown, task: TaskInfo) => unknown;
  /**
   * Host names (as in the `Host` header, without the port) the console answers to besides the bound
   * address and `localhost`, e.g. `['ops.example.com']`. A request for any other name gets 421, so
   * that a hostile page whose domain is re-pointed at this address (DNS rebinding) cannot use it.
   * Checked always without `basicAuth`; with `basicAuth`, only when given. @defaultValue []
   */
  allowedHosts?: string[];
  /** Where the warning about a console without authentication goes. @defaultValue console.warn */
  warn?: (line: string) => void;
}

/** A running standalone console. */
export interface ConsoleServer {
  /** The node:http server. */
  server: Server;
  /** `http://host:port/` */
  url: string;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Whether two secrets are equal, in a time that tells nothing of either: their SHA-256 digests are
 * compared with `timingSafeEqual` (comparing lengths first, as before, told how long the secret is).
 */
function same(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/**
 * Serves the console on its own `node:http` server (`chronos console`). With `basicAuth` every
 * request (page, assets, API) needs the credentials (401 with a `WWW-Authenticate` challenge
 * otherwise); without it the server binds to a loopback address only, and says so on `warn`.
 * Without `basicAuth` (or with `allowedHosts`) a request whose `Host` is not the bound address,
 * `localhost` or one of `allowedHosts` is refused with 421 (DNS rebinding).
 * @throws Error when `host` is not loopback and no `basicAuth` is given, `basicAuth` has no `:` or
 * an empty (or blank) user or password, or an `allowedHosts` entry is not a host name.
 */
export async function startConsoleServer(o: ConsoleServerOptions): Promise<ConsoleServer> {
  const host = o.host ?? '127.0.0.1';
  for (const name of o.allowedHosts ?? []) {
    if (typeof name !== 'string' || !/^(\[[0-9a-f:.]+\]|[0-9a-f.]*:[0-9a-f.]*:[0-9a-f:.]*|[a-z0-9_.-]+)$/i.test(name))
      throw new Error(`allowed host: expected a host name without port such as "ops.example.com", got ${JSON.stringify(name)}`);
  }
  let auth: { user: string; password: string } | undefined;
  if (o.basicAuth !== undefined) {
    const i = o.basicAuth.indexOf(':');
    if (i < 1) throw new Error('basic auth: expected user:password');
    auth = { user: o.basicAuth.slice(0, i), password: o.basicAuth.slice(i + 1) };
    // "admin:" (a `$PASS` that was unset) would serve every interface behind a password anyone guesses
    if (auth.user.trim() === '') throw new Error('basic auth: the user is empty (expected user:password)');
    if (auth.password.trim() === '') {
      throw new Error(`basic auth: the password of user "${auth.user}" is empty (expected user:password with a non-empty password)`);
    }
  } else if (!isLoopback(host)) {
    throw new Error(`refusing to serve the console on ${host} without authentication: pass --basic-auth user:pass, or bind to 127.0.0.1`);
  } else {
    (o.warn ?? console.warn)(
      `warning: the console has no authentication; it is bound to ${host} only (use --basic-auth to require credentials)`,
    );
  }
  const handler = createConsoleHandler({
    inspector: o.inspector,
    readOnly: o.readOnly,
    redact: o.redact,
    actor: (req) => `console:${basicCredentials(req)?.user ?? 'anonymous'}`,
  });
  const names = new Set([host, 'localhost', ...(o.allowedHosts ?? [])].map(normalHostName));
  const checkHost = auth === undefined || o.allowedHosts !== undefined;
  const server = createServer((req, res) => {
    const asked = requestHostName(req);
    if (checkHost && (asked === undefined || !names.has(asked))) {
      securityHeaders(res);
      res.writeHead(421, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
      const hint = asked === undefined ? 'no Host header' : `Host ${JSON.stringify(asked)} is not a name this console serves`;
      return void res.end(JSON.stringify(errorBody(421, `${hint} (serve it with --allowed-host <name>)`)));
    }
    if (auth) {
      const c = basicCredentials(req);
      const userOk = c !== undefined && same(c.user, auth.user);
      const passOk = c !== undefined && same(c.password, auth.password);
      if (!userOk || !passOk) {
        securityHeaders(res);
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="chronos", charset="UTF-8"', 'Content-Type': 'application/json' });
        return void res.end(JSON.stringify(errorBody(401, 'authentication required')));
      }
    }
    handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  names.add(normalHostName(addr.address));
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    server,
    url: `http://${shown}:${addr.port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
