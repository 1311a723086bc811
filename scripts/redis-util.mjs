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

/** Starts a private, non-persistent redis-server on a free loopback port; resolves { url, port, child }. */
export async function startRedisServer(extraArgs = []) {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs], {
    stdio: 'ignore',
  });
  for (let i = 0; i < 100; i++) {
    if (await ping('127.0.0.1', port, 200)) return { url: `redis://127.0.0.1:${port}`, port, child };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not answer on 127.0.0.1:${port}`);
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
