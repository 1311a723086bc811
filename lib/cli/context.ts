import { readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { createInterface } from 'node:readline/promises';
import type { RedisOptions } from 'ioredis';
import { describe, isRedisUnavailable, lastConnectionError, type RedisClient, type RedisConnection } from '../core/redis/connection.js';
import { redactUrl, redisUrlProblem } from '../core/redis/url-check.js';
import { ChronosError } from '../core/runtime/errors.js';
import { DEFAULTS } from '../core/runtime/defaults.js';
import type { OperatorAction } from '../core/runtime/events.js';
import { Inspector } from '../core/admin/inspector.js';
import { parseDurationMs } from '../core/scheduler/spec.js';
import { printable } from './format.js';

/** A mistake in how the command was called: exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The global options of every command. */
export interface GlobalOptions {
  redisUrl?: string;
  namespace?: string;
  json?: boolean;
  actor?: string;
  /** A PEM file of the CA(s) that signed a `rediss://` server's certificate (`--tls-ca`, `CHRONOS_TLS_CA`). */
  tlsCa?: string;
  /** Seed nodes of a Redis Cluster, `host:port,host:port…` (`--cluster`, `CHRONOS_REDIS_CLUSTER`). */
  cluster?: string;
  /** Sentinels, `host:port,…` (`--sentinels`, `CHRONOS_REDIS_SENTINELS`), with {@link sentinelName}. */
  sentinels?: string;
  /** The master name the sentinels monitor (`--sentinel-name`, `CHRONOS_SENTINEL_NAME`). */
  sentinelName?: string;
}

/**
 * `host:port,host:port…` as ioredis nodes. @throws UsageError naming `flag` and the entry that is not
 * `host:port` with a port in 1-65535.
 */
export function parseNodes(flag: string, list: string): { host: string; port: number }[] {
  const nodes = list.split(',').map((entry) => {
    const m = /^(\[[^\]]+\]|[^:,\s]+):(\d+)$/.exec(entry.trim());
    const port = Number(m?.[2]);
    if (!m || port < 1 || port > 65535) throw new UsageError(`${flag}: expected host:port[,host:port…], got ${JSON.stringify(entry)}`);
    return { host: m[1].replace(/^\[(.*)\]$/, '$1'), port };
  });
  return nodes;
}

/**
 * The connection a command uses: a Redis Cluster (`cluster`: its seeds; the URL's user, password and
 * TLS apply to every node), Sentinel (`sentinels` + `sentinelName`: the URL's user, password, TLS and
 * db apply to the master), else the URL's server. @throws UsageError for both `cluster` and
 * `sentinels`, one of `sentinels` / `sentinelName` without the other, or a bad node list or URL.
 */
export function commandConnection(
  opts: GlobalOptions,
  url: string,
  reconnect: boolean,
  tlsCa?: string,
  commandTimeoutMs?: number,
): RedisConnection {
  const base = { ...redisOptions(url, reconnect, tlsCa), ...(commandTimeoutMs !== undefined ? { commandTimeout: commandTimeoutMs } : {}) };
  const { cluster, sentinels, sentinelName } = opts;
  if (cluster && sentinels) throw new UsageError('--cluster and --sentinels: give one of them, not both');
  if (cluster) {
    const { host: _h, port: _p, db: _d, retryStrategy: _r, ...redisOptions } = base;
    return { cluster: parseNodes('--cluster', cluster), options: { redisOptions, clusterRetryStrategy: base.retryStrategy } };
  }
  if (!sentinels && !sentinelName) return base;
  if (!sentinels) throw new UsageError(`--sentinel-name ${JSON.stringify(sentinelName)}: give the sentinels too (--sentinels host:port,…)`);
  if (!sentinelName)
    throw new UsageError('--sentinels: give the master name too (--sentinel-name, as in the sentinels\' "sentinel monitor <name>")');
  const { host: _h, port: _p, retryStrategy, ...rest } = base;
  return {
    ...rest,
    sentinels: parseNodes('--sentinels', sentinels),
    name: sentinelName,
    sentinelRetryStrategy: retryStrategy ?? undefined,
  };
}

/**
 * How long a command waits for Redis before it gives up, ms: the TCP connect (a dropped SYN) and the
 * first answer (a port that accepts but does not speak Redis) each within 3 s, so a wrong address
 * fails in under 5 s with one `RedisUnreachableError` line.
 */
export const CONNECT_TIMEOUT_MS = 3000;
const ANSWER_TIMEOUT_MS = 3000;

/**
 * How long each command of a command (not of `chronos console`) waits for its reply once the check
 * passed, ms (ioredis `commandTimeout`): a Redis that stalls mid-command (SIGSTOP, a partition that
 * drops packets) ends it with a {@link RedisLostError} instead of a wait as long as the stall. Every
 * read and act is bounded (batches of at most 1,000 reads, 200 acts), so this is far above any answer.
 */
export const COMMAND_TIMEOUT_MS = 10_000;

/**
 * Redis stopped serving a command once the check had passed: the connection closed (and the one
 * reconnection failed), or no reply came within {@link COMMAND_TIMEOUT_MS}. Code `REDIS_UNAVAILABLE`.
 */
export class RedisLostError extends ChronosError {
  constructor(
    /** The server's address as `host:port/db` (or `cluster`), never the password. */
    readonly where: string,
    /** The client's own error (`Command timed out`, `Connection is closed.`, `Reached the max retries per request limit …`). */
    readonly reason: string,
    /** The client's last connection error (`connect ECONNREFUSED …`), when it had one. */
    readonly lastError?: string,
    options?: ErrorOptions,
  ) {
    const last = lastError !== undefined && lastError !== reason ? `; last connection error: ${lastError}` : '';
    const said = reason.replace(/\.$/, '');
    super(
      'REDIS_UNAVAILABLE',
      /^Command timed out/.test(reason)
        ? `Redis at ${where} did not answer a command within ${COMMAND_TIMEOUT_MS} ms (stalled, or a network dropping packets). A command sent may still be applied when it resumes: look before repeating an act (every act is safe to repeat).`
        : `Redis at ${where} stopped serving the command (${said}${last}). Check that Redis is running: an act cut short may be done in part (every act is safe to repeat).`,
      options,
    );
  }
}

/**
 * ioredis options of a `redis://[user:password@]host[:port][/db]` or `rediss://…` URL (its query's
 * `password`, `username`, `db`, `sentinelPassword` and `sentinelUsername` read as the library's
 * `connection` reads them, the user info and path first), set to fail
 * fast: a short connect timeout, one try per command, and (unless `reconnect`) no reconnection.
 * `tlsCa`: a PEM file of the CA(s) trusted for a `rediss://` server (beside Node's own and
 * `NODE_EXTRA_CA_CERTS`). @throws UsageError for a bad URL, or a `tlsCa` that is unreadable or
 * given with a `redis://` URL.
 */
export function redisOptions(url: string, reconnect: boolean, tlsCa?: string): RedisOptions {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // WHATWG URL refuses a port past 65535 as it refuses garbage: name the port (the host and db are fine)
    const port = /^[a-z]+:\/\/(?:[^@/]*@)?(?:\[[^\]]*\]|[^:/]*):(\d+)(?:[/?#]|$)/i.exec(url)?.[1];
    if (port !== undefined && Number(port) > 65535) throw new UsageError(`--redis-url: port ${port} is out of range (expected 0-65535)`);
    throw new UsageError(`--redis-url: ${JSON.stringify(redactUrl(url))} is not a URL (expected redis://host:port[/db])`); // its password hidden
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    throw new UsageError(`--redis-url: expected redis:// or rediss://, got ${u.protocol}`);
  }
  const problem = redisUrlProblem(url); // what is left to check: a user name or password decodeURIComponent refuses
  if (problem !== undefined) throw new UsageError(`--redis-url: ${problem}`);
  let ca: Buffer | undefined;
  if (tlsCa !== undefined && tlsCa !== '') {
    if (u.protocol !== 'rediss:') throw new UsageError(`--tls-ca: the Redis URL must be rediss:// (TLS), got ${u.protocol}//`);
    try {
      ca = readFileSync(tlsCa);
    } catch (err) {
      throw new UsageError(`--tls-ca: cannot read ${JSON.stringify(tlsCa)} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  }
  // the query's credentials and db, read as ioredis's parseURL reads them for the library's `connection`
  // (URLSearchParams; what the URL's user info and path give comes first)
  const query = (key: string): string | undefined => u.searchParams.get(key) ?? undefined;
  const hasUserInfo = u.username !== '' || u.password !== '';
  const dbText = u.pathname.length > 1 ? u.pathname.slice(1) : (query('db') ?? '0');
  const db = Number(dbText);
  if (dbText === '' || !Number.isInteger(db) || db < 0) throw new UsageError(`--redis-url: invalid database ${JSON.stringify(dbText)}`);
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    db,
    username: hasUserInfo ? decodeURIComponent(u.username) || undefined : query('username'),
    password: hasUserInfo ? decodeURIComponent(u.password) || undefined : query('password'),
    ...(query('sentinelUsername') !== undefined ? { sentinelUsername: query('sentinelUsername') } : {}),
    ...(query('sentinelPassword') !== undefined ? { sentinelPassword: query('sentinelPassword') } : {}),
    tls: u.protocol === 'rediss:' ? (ca ? { ca } : {}) : undefined,
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    // one-shot commands connect twice at most: a reset of the first attempt (an HTTP server closing on the
    // bytes it could not parse resets before its answer is read) is followed by one more, 100 ms later
    retryStrategy: reconnect ? (times: number) => Math.min(times * 200, 2000) : (times: number) => (times <= 1 ? 100 : null),
  };
}

/** What a command runs with: the Inspector, the output mode and the actor named in its events. */
export class Cli {
  readonly json: boolean;
  readonly actor: string;
  readonly out: NodeJS.WritableStream;
  private inspectorValue?: Inspector;

  constructor(
    private readonly opts: GlobalOptions,
    out: NodeJS.WritableStream = process.stdout,
  ) {
    this.json = opts.json === true;
    // the audit trail names every act's actor: an empty one would record acts by nobody
    if (opts.actor !== undefined && opts.actor.trim() === '')
      throw new UsageError(`--actor: expected a name, got ${JSON.stringify(opts.actor)}`);
    this.actor = opts.actor ?? `cli:${safeUser()}@${hostname()}`;
    this.out = out;
  }

  /**
   * Opens the Inspector and checks Redis (≤ 3 s; a wrong address fails with one clear error).
   * `reconnect`: follow a restart of Redis (`--watch`, the console); `bounded`: each command waits
   * at most {@link COMMAND_TIMEOUT_MS} for its reply (every command but the console, whose requests
   * are bounded as a mounted console's are: README "When Redis is unreachable").
   */
  async inspector(reconnect = false, bounded = true): Promise<Inspector> {
    if (!this.inspectorValue) {
      const url = this.opts.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
      const namespace = this.opts.namespace ?? process.env.CHRONOS_NAMESPACE ?? DEFAULTS.namespace;
      this.inspectorValue = new Inspector({
        connection: commandConnection(
          {
            cluster: this.opts.cluster ?? process.env.CHRONOS_REDIS_CLUSTER,
            sentinels: this.opts.sentinels ?? process.env.CHRONOS_REDIS_SENTINELS,
            sentinelName: this.opts.sentinelName ?? process.env.CHRONOS_SENTINEL_NAME,
          },
          url,
          reconnect,
          this.opts.tlsCa ?? process.env.CHRONOS_TLS_CA,
          bounded ? COMMAND_TIMEOUT_MS : undefined,
        ),
        namespace,
        actor: this.actor,
        origin: `cli ${hostname()} pid ${process.pid}`,
      });
      await this.inspectorValue.check(ANSWER_TIMEOUT_MS);
    }
    return this.inspectorValue;
  }

  /**
   * The Inspector, once `queue` is known in the namespace (enqueued to, served or scheduled).
   * With `action`, an unknown queue is recorded in the audit trail as that act, failed (`Inspector.vetAct`).
   * @throws QueueNotFoundError naming the queue, the namespace and the known queues (plus `hint`).
   */
  async knownQueue(queue: string, hint = '', action?: OperatorAction): Promise<Inspector> {
    const inspector = await this.inspector();
    const check = () => inspector.requireQueue(queue, hint);
    await (action ? inspector.vetAct(action, { queue }, check, { actor: this.actor }) : check());
    return inspector;
  }

  async close(): Promise<void> {
    await this.inspectorValue?.close();
  }

  /**
   * `err` as the command reports it: the client giving up on a command after the check passed
   * ({@link isRedisUnavailable}: the connection closed, its retry ran out, no reply within
   * {@link COMMAND_TIMEOUT_MS}) as a {@link RedisLostError} naming Redis, not ioredis's bare words
   * with code `ERROR`; any other error as it is.
   */
  explain(err: unknown): unknown {
    if (!this.inspectorValue || !isRedisUnavailable(err)) return err;
    const client: RedisClient = this.inspectorValue.redis;
    return new RedisLostError(describe(client), err.message, lastConnectionError(client), { cause: err });
  }

  /**
   * Prints `value` as JSON with `--json`, else the text `human()` builds, its control characters but
   * the line feed shown as `\uXXXX` ({@link printable}: stored text never drives the terminal).
   */
  print(value: unknown, human: () => string): void {
    this.out.write(this.json ? JSON.stringify(value, null, 2) + '\n' : printable(human()).replace(/\n?$/, '\n'));
  }

  /**
   * Asks before a destructive `--all` act when stdin and stdout are terminals and `--yes` was not
   * given; elsewhere (scripts, pipes) it goes ahead. @returns false when the answer is not yes.
   */
  async confirm(question: string, yes: boolean | undefined): Promise<boolean> {
    if (yes || !process.stdin.isTTY || !process.stdout.isTTY) return true;
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    try {
      return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
    } finally {
      rl.close();
    }
  }
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** Epoch ms below this (1973-03-03) are refused: such a number is epoch seconds (10 digits until 2286) or a typo, not an instant meant in ms. */
const EPOCH_MS_MIN = 1e11;

/** `YYYY-MM-DD[(T| )hh:mm[:ss[.sss]]][Z|±hh[:]mm]`: ISO 8601's calendar date and time of day, the zone optional. */
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** RFC 2822 with its year, time and zone (`Mon, 07 Dec 2026 03:00:00 GMT`, `7 Dec 2026 03:00 +0100`). */
const RFC_2822 = /^(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+\d{2}:\d{2}(?::\d{2})?\s+(?:[A-Za-z]{1,5}|[+-]\d{4})$/;

/**
 * An ISO 8601 instant ({@link ISO_INSTANT}) as epoch ms, in local time unless it gives a zone (a date
 * alone is local midnight; JavaScript's `Date.parse` takes that one as UTC), or NaN when it is not one
 * or names a day or time that does not exist (`2026-02-30`, `24:00`).
 */
function isoInstant(text: string): number {
  const m = ISO_INSTANT.exec(text);
  if (!m) return NaN;
  const [y, mo, d, h, mi, s, ms] = m.slice(1, 8).map((v, i) => (v === undefined ? 0 : i === 6 ? Number(v.padEnd(3, '0')) : Number(v)));
  const zone = m[8];
  const utc = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const back = new Date(utc);
  // Date.UTC rolls over (Feb 30 → Mar 2, 24:00 → the next day): a field that changed did not exist
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || back.getUTCHours() !== h) return NaN;
  if (back.getUTCMinutes() !== mi || back.getUTCSeconds() !== s) return NaN;
  if (zone === undefined) return new Date(y, mo - 1, d, h, mi, s, ms).getTime();
  if (/^z$/i.test(zone)) return utc;
  const [, sign, zh, zm] = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
  if (Number(zh) > 23 || Number(zm) > 59) return NaN;
  return utc - (sign === '-' ? -1 : 1) * (Number(zh) * 60 + Number(zm)) * 60_000;
}

/**
 * An instant from the command line: epoch ms (12 digits or more: a shorter number, epoch seconds say,
 * is refused), an ISO 8601 date and time (`2026-12-07`, `2026-12-07T03:00`, `… 03:00:00Z`,
 * `…+01:00`; local time unless it gives a zone), an RFC 2822 date with its year, time and zone,
 * `now`, or a duration before now (`-90m`, `-2h`, `-1d`). Anything else is refused, not guessed:
 * JavaScript's `Date.parse` reads `0` as 2000-01-01, `7` as 2001-07-01 and `Dec 7` as 2001-12-07
 * (trial 37). @throws UsageError naming `what` and the text.
 */
export function parseInstant(text: string, what: string): number {
  const t = text.trim();
  if (t === 'now') return Date.now();
  if (/^\d+$/.test(t)) {
    const ms = Number(t);
    if (ms >= EPOCH_MS_MIN) return ms;
    const seconds = t.length === 10 ? `; epoch seconds? in ms that is ${t}000` : '';
    throw new UsageError(`${what}: ${JSON.stringify(text)} is not epoch ms (that would be ${new Date(ms).toISOString()})${seconds}`);
  }
  if (t.startsWith('-')) {
    try {
      return Date.now() - parseDurationMs(t.slice(1));
    } catch {
      throw new UsageError(`${what}: ${JSON.stringify(text)} is not a duration (e.g. -90m, -2h, -1d)`);
    }
  }
  const ms = ISO_INSTANT.test(t) ? isoInstant(t) : RFC_2822.test(t) ? Date.parse(t) : NaN;
  if (!Number.isFinite(ms))
    throw new UsageError(`${what}: ${JSON.stringify(text)} is not a time (epoch ms, ISO 8601 such as 2026-12-07T03:00, now, or -2h)`);
  return ms;
}

/** A positive integer option. */
export function positiveInt(text: string, what: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = decimalInt(text);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`${what}: expected an integer 1-${max}, got ${JSON.stringify(text)}`);
  return n;
}

/**
 * The number a flag's text writes in decimal digits, or NaN: `Number()` would also read `0x10` (16),
 * `1e2` (100) and `" 7 "` (trial 10).
 */
export function decimalInt(text: string): number {
  return /^\d+$/.test(text) ? Number(text) : NaN;
}
