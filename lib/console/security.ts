import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The Content-Security-Policy of every console response: scripts and styles from the console
 * itself only (no inline script, no eval), no plugins, no framing, no `<base>` rewriting.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** Sets the security headers every console response carries (page, assets, API, errors). */
export function securityHeaders(res: ServerResponse): void {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Why a request is refused as cross-site, or undefined when it is not: `Sec-Fetch-Site` other than
 * `same-origin`/`none` (a browser telling us another site made it), or an `Origin` whose host is not
 * the request's `Host` (older browsers, or `null` origins from sandboxed frames).
 */
export function crossSite(req: IncomingMessage): string | undefined {
  const site = header(req, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `Sec-Fetch-Site: ${site}`;
  const origin = header(req, 'origin');
  if (origin === undefined) return undefined;
  const host = header(req, 'host');
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    return `Origin: ${origin}`;
  }
  return host !== undefined && originHost.toLowerCase() === host.toLowerCase()
    ? undefined
    : `Origin ${origin} is not ${host ?? 'this host'}`;
}

/** A host name as compared: lower-case, without brackets (`[::1]` → `::1`) nor a trailing dot. */
export function normalHostName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/**
 * The host name a request was sent to, from its `Host` header without the port, normalised by
 * {@link normalHostName}; undefined without a `Host` header.
 */
export function requestHostName(req: IncomingMessage): string | undefined {
  const host = header(req, 'host');
  if (host === undefined || host === '') return undefined;
  const m = /^\[([^\]]*)\](?::\d*)?$/.exec(host) ?? /^([^:]*)(?::\d*)?$/.exec(host);
  return normalHostName(m ? m[1] : host);
}

/** `user:password` of a `Basic` Authorization header, or undefined. */
export function basicCredentials(req: IncomingMessage): { user: string; password: string } | undefined {
  const auth = header(req, 'authorization');
  const m = auth && /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(auth);
  if (!m) return undefined;
  const text = Buffer.from(m[1], 'base64').toString('utf8');
  const i = text.indexOf(':');
  return i < 0 ? undefined : { user: text.slice(0, i), password: text.slice(i + 1) };
}
