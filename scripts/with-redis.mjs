#!/usr/bin/env node
// Usage: node scripts/with-redis.mjs -- <command...>
// Runs the command with REDIS_URL pointing at a reachable Redis: REDIS_URL when set, else
// 127.0.0.1:6379, else a private redis-server on a free port, stopped when the command ends.
import { spawn } from 'node:child_process';
import { ensureRedisOrExit } from './redis-util.mjs';

const sep = process.argv.indexOf('--');
const cmd = process.argv.slice(sep + 1);
if (sep < 0 || cmd.length === 0) {
  console.error('usage: node scripts/with-redis.mjs -- <command...>');
  process.exit(2);
}
const redis = await ensureRedisOrExit();
if (redis.child) console.error(`[chronos] started a private redis-server at ${redis.url} for this run`);
const child = spawn(cmd[0], cmd.slice(1), { stdio: 'inherit', env: { ...process.env, REDIS_URL: redis.url } });
const forward = (sig) => child.kill(sig);
process.on('SIGINT', forward);
process.on('SIGTERM', forward);
child.on('exit', (code, signal) => {
  redis.child?.kill('SIGKILL');
  process.exit(code ?? (signal ? 1 : 0));
});
