// A Redis that stops answering after the CLI's connection check (SIGSTOP, a partition that drops
// packets) ends the command with one error naming Redis (exit 1), as README "When Redis is
// unreachable" promises ("only the CLI … bound their own wait"). Before, only the check was
// bounded: a command whose reads met the stall waited for as long as it lasted — `stats --watch` kept
// its last frame on the screen, saying "(now)", and a one-shot command never exited. And a Redis that
// went away mid-command was ioredis's bare 'Reached the max retries per request limit (which is 1).
// Refer to "maxRetriesPerRequest" option for details.' with code ERROR, or, for a one-shot command, a
// TypeError of the Inspector's reading its pipeline's missing replies (trial 37).
import { spawn } from 'node:child_process';
import { CLI_MAIN } from '../helpers/cli.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { newNamespace } from '../helpers/redis.js';

let redis: PrivateRedis;

beforeEach(async () => {
  redis = await PrivateRedis.start();
});
afterEach(async () => {
  await redis.kill();
});

/** `chronos [--json] stats --watch` on the private Redis, until its first frame is printed. */
async function watching(json: boolean) {
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redis.url, CHRONOS_NAMESPACE: newNamespace('cli-stall') };
  delete env.NODE_OPTIONS;
  const args = [CLI_MAIN, ...(json ? ['--json'] : []), 'stats', '--watch', '--interval', '200'];
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const io = { err: '' };
  const framed = new Promise<void>((resolve) =>
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes(json ? '"servers"' : 'Workers:')) resolve();
    }),
  );
  child.stderr.on('data', (b: Buffer) => (io.err += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await framed;
  return { child, exited, io };
}

test('stats --watch: Redis stopped after the first frame ends the command with one error naming it (it hung for the whole stall before)', async () => {
  const { child, exited, io } = await watching(false);
  redis.stop();
  try {
    // the command's own bound ends it; the test's timeout is what a hang meets
    expect(await exited).toBe(1);
  } finally {
    child.kill('SIGKILL');
    redis.cont();
  }
  expect(io.err).toMatch(/^error: Redis at 127\.0\.0\.1:\d+\/0 did not answer a command within \d+ ms/);
  expect(io.err.trim().split('\n')).toHaveLength(1);
}, 60_000);

test("stats --watch: Redis shut down after the first frame is REDIS_UNAVAILABLE naming it, not ioredis's bare words with code ERROR", async () => {
  const { child, exited, io } = await watching(true);
  await redis.kill();
  try {
    expect(await exited).toBe(1);
  } finally {
    child.kill('SIGKILL');
  }
  const { error } = JSON.parse(io.err) as { error: { code: string; message: string } };
  expect(error.code).toBe('REDIS_UNAVAILABLE');
  expect(error.message).toMatch(/^Redis at 127\.0\.0\.1:\d+\/0 stopped serving the command \(/);
}, 60_000);
