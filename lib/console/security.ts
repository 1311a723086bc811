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

/** The port a scheme implies when a URL or a `Host` names none. */
const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };

/**
 * `host:port` of a `Host`-like value (`ops.example.com`, `ops.example.com:443`, `[::1]:8080`), lower
 * case, the port filled in from `protocol`'s default when it names none.
 */
function hostAndPort(value: string, protocol: string): string {
  const v = value.trim().toLowerCase();
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(v);
  return m ? `${m[1]}:${m[2] || DEFAULT_PORT[protocol] || ''}` : v;
}

/**
 * Why a request is refused as cross-site, or undefined when it is not:
 * - `Sec-Fetch-Site` other than `same-origin`/`none`: a browser telling us another site made it.
 *   `same-origin` is taken as said (no page can set a `Sec-Fetch-` header): the browser compared the
 *   page's origin with the URL it asked for, which behind a reverse proxy that rewrites `Host` (nginx's
 *   `proxy_pass` default) is the public name, not the `Host` the console gets.
 * - Otherwise (older browsers, non-browser clients) the `Origin`, or without one the `Referer`, must
 *   name the request's `Host` or its `X-Forwarded-Host` (first entry; a page cannot send that header
 *   cross-site without a CORS preflight, which the console does not grant), ports compared with the
 *   scheme's default filled in (`Host: ops.example.com:443` is `https://ops.example.com`). An `Origin`
 *   that is not an http(s) URL (`null` from a sandboxed frame or a redirect) is refused. A request
 *   with neither `Origin` nor `Referer` (curl, `Referrer-Policy: no-referrer`) is not cross-site.
 */
export function crossSite(req: IncomingMessage): string | undefined {
  const site = header(req, 'sec-fetch-site');
  if (site === 'same-origin') return undefined;
  if (site !== undefined && site !== 'none') return `Sec-Fetch-Site: ${site}`;
  const origin = header(req, 'origin');
  const label = origin !== undefined ? 'Origin' : 'Referer';
  const from = origin ?? header(req, 'referer');
  if (from === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(from);
  } catch {
    return `${label}: ${from}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${label}: ${from}`;
  const at = `${url.hostname}:${url.port || DEFAULT_PORT[url.protocol]}`;
  const hosts = [header(req, 'host'), header(req, 'x-forwarded-host')?.split(',')[0]].filter((h): h is string => !!h?.trim());
  if (hosts.some((h) => hostAndPort(h, url.protocol) === at)) return undefined;
  return `${label} ${url.origin} is not ${hosts.map((h) => h.trim()).join(' nor ') || 'this host'}`;
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
