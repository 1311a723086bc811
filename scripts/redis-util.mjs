// Finds or starts a Redis for the tests, the sample and the benchmarks (no dependencies: runs before npm ci matters).
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';

/** Sends PING to host:port; resolves true on +PONG (or a NOAUTH error: something Redis answers there). */
export function ping(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(/^\+PONG|^-NOAUTH/.test(d.toString())));
  });
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export function hasRedisServer() {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Starts a private, non-persistent redis-server on a free loopback port; resolves { url, port, child }.
 * The server that answers must be the one started (its `process_id`): between freePort() and the
 * server's bind another process may take the port (another test's server, suites running in
 * parallel); then this one cannot bind and exits, and the PONG came from the other. Such a port is
 * given up for another one.
 */
export async function startRedisServer(extraArgs = []) {
  for (let tries = 1; ; tries++) {
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs], {
      stdio: 'ignore',
    });
    for (let i = 0; i < 100; i++) {
      if (await ping('127.0.0.1', port, 200)) {
        if ((await serverPid(port)) === child.pid) return { url: `redis://127.0.0.1:${port}`, port, child };
        break; // another server's PONG: this one could not bind the port
      }
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    if (tries === 5) throw new Error(`redis-server did not answer on 127.0.0.1:${port} (${tries} ports tried)`);
  }
}

/** The `process_id` of `INFO server` of the Redis on 127.0.0.1:port; undefined when it does not say. */
function serverPid(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let got = '';
    const done = (pid) => {
      socket.destroy();
      resolve(pid);
    };
    socket.setTimeout(1000, () => done(undefined));
    socket.on('error', () => done(undefined));
    socket.on('connect', () => socket.write('INFO server\r\n'));
    socket.on('data', (d) => {
      got += d.toString();
      const m = /process_id:(\d+)\r/.exec(got);
      if (m) done(Number(m[1]));
      else if (got.startsWith('-')) done(undefined);
    });
  });
}

export const HOW_TO_GET_REDIS =
  'No Redis is reachable (REDIS_URL unset, nothing answers on 127.0.0.1:6379) and redis-server is not installed: install Redis >= 6.2 (e.g. `apt-get install redis-server`) or set REDIS_URL=redis://host:port.';

/**
 * Resolves a Redis URL: REDIS_URL when set (it must answer), else 127.0.0.1:6379 when it answers,
 * else a private redis-server on a free port (returned as `child` so the caller stops it).
 */
export async function ensureRedis() {
  if (process.env.REDIS_URL) {
    const u = new URL(process.env.REDIS_URL);
    if (!(await ping(u.hostname, Number(u.port || 6379)))) throw new Error(`REDIS_URL=${process.env.REDIS_URL} does not answer PING.`);
    return { url: process.env.REDIS_URL };
  }
  if (await ping('127.0.0.1', 6379)) return { url: 'redis://127.0.0.1:6379' };
  if (!hasRedisServer()) throw new Error(HOW_TO_GET_REDIS);
  return startRedisServer();
}

/** {@link ensureRedis}, or exit 1 with its one-sentence message (for the command-line scripts). */
export async function ensureRedisOrExit() {
  try {
    return await ensureRedis();
  } catch (err) {
    console.error(err.message);
    process.exit(1);
  }
}
