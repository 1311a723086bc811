/**
 * The check of a Redis URL that every door shares (the core's `connection`, the Nest module's, the
 * CLI's `--redis-url`): what is wrong with it, naming the URL with its credentials hidden. A URL may
 * hold a password, which an error must not print (terminals, logs, CI output); without the URL the
 * error did not say which value was wrong.
 */

/**
 * The query parameters ioredis reads as credentials, lower-cased: its `parseURL` copies every parameter
 * of a URL into the client's options, so `?password=…` authenticates as `redis://:…@` does.
 */
const CREDENTIAL_PARAMS = new Set(['password', 'username', 'sentinelpassword', 'sentinelusername']);

/**
 * `url` with its credentials hidden: what stands between its scheme and the last `@` of its authority (user name and
 * password) replaced by `***`, and so is the value of each credential query parameter (`password`,
 * `username`, `sentinelPassword`, `sentinelUsername`, its name matched as ioredis decodes it, in any
 * case). A query value is hidden up to the next `&`, a `#` in it included. @internal
 */
export function redactUrl(url: string): string {
  const hidden = redactQuery(url); // first: a `@` in a hidden value no longer marks the end of a user name
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(hidden)?.[0] ?? '';
  const at = hidden.lastIndexOf('@', authorityEnd(url, scheme.length) - 1);
  if (at < 0) return hidden;
  return `${scheme}***${hidden.slice(at)}`;
}

/**
 * Where the authority (user info, host, port) of `url` ends, as ioredis's `new URL` reads it: at the
 * first `/`, `?` or `#` after the scheme. A `@` past it (a query value `?clientName=a@b`) marks no
 * user name, and the host before it is shown. A URL `new URL` refuses (a password with a bare `?`,
 * `/` or `#`) has no known authority: the whole URL is searched, and more is hidden rather than less.
 */
function authorityEnd(url: string, from: number): number {
  if (!URL.canParse(url)) return url.length;
  const end = url.slice(from).search(/[/?#]/);
  return end < 0 ? url.length : from + end;
}

/** `url` with the value of each credential query parameter replaced by `***`. */
function redactQuery(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((param) => {
      const eq = param.indexOf('=');
      if (eq < 0) return param;
      const name = [...new URLSearchParams(param).keys()][0] ?? ''; // decoded as ioredis decodes it (`%77`, `+`)
      return CREDENTIAL_PARAMS.has(name.toLowerCase()) ? `${param.slice(0, eq)}=***` : param;
    });
  return `${url.slice(0, q + 1)}${params.join('&')}`;
}

/**
 * What is wrong with a Redis URL — not a URL, a scheme other than `redis:` / `rediss:`, or a user
 * name or password with a `%` that begins no percent-escape (ioredis's `parseURL` decodes them with
 * `decodeURIComponent`, which threw a bare "URI malformed"), or a database (`/db`, or `?db=`) that is
 * not a whole number — naming it with its credentials hidden
 * ({@link redactUrl}); undefined when it is none of these. @internal
 */
export function redisUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${JSON.stringify(redactUrl(url))} is not a URL (expected redis://[user:password@]host[:port][/db])`;
  }
  const { protocol } = parsed;
  if (protocol !== 'redis:' && protocol !== 'rediss:') return `expected a redis:// or rediss:// URL, got ${JSON.stringify(redactUrl(url))}`;
  for (const [where, text] of [
    ['user name', parsed.username],
    ['password', parsed.password],
  ] as const) {
    if (!decodes(text))
      return `${JSON.stringify(redactUrl(url))}: its ${where} holds a "%" that begins no percent-escape (write a "%" in it as %25)`;
  }
  // ioredis takes the path (else a `db` query parameter) as the database and parseInt()s it: "/abc" gave
  // NaN, whose SELECT failed unhandled at the first command and ended the process; "/1x" selected 1
  const db = parsed.pathname.length > 1 ? parsed.pathname.slice(1) : parsed.searchParams.get('db');
  if (db !== null && !/^\d+$/.test(db))
    return `${JSON.stringify(redactUrl(url))}: its database ${JSON.stringify(db)} is not a number (expected redis://[user:password@]host[:port][/db], db an integer >= 0)`;
  return undefined;
}

/** Whether `decodeURIComponent` takes `text` (every `%` begins a percent-escape of UTF-8). */
function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}
