/**
 * The check of a Redis URL that every door shares (the core's `connection`, the Nest module's, the
 * CLI's `--redis-url`): what is wrong with it, naming the URL with its credentials hidden. A URL may
 * hold a password, which an error must not print (terminals, logs, CI output); without the URL the
 * error did not say which value was wrong.
 */

/** `url` with what stands between its scheme and its last `@` (user name and password) replaced by `***`. @internal */
export function redactUrl(url: string): string {
  const at = url.lastIndexOf('@');
  if (at < 0) return url;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? '';
  return `${scheme}***${url.slice(at)}`;
}

/**
 * What is wrong with a Redis URL — not a URL, or a scheme other than `redis:` / `rediss:` — naming
 * it with its credentials hidden ({@link redactUrl}); undefined when it is one. @internal
 */
export function redisUrlProblem(url: string): string | undefined {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    return `${JSON.stringify(redactUrl(url))} is not a URL (expected redis://[user:password@]host[:port][/db])`;
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') return `expected a redis:// or rediss:// URL, got ${JSON.stringify(redactUrl(url))}`;
  return undefined;
}
