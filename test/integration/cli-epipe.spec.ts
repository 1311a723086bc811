// `chronos … | head`: a reader that stops reading ends the command quietly (exit 0, nothing on stderr),
// as it ends a Unix tool. Before, the write to the closed pipe was an unhandled 'error' event: a Node
// stack trace ('Error: write EPIPE … Emitted 'error' event on Socket instance') on stderr, exit 1 —
// `chronos --json schedule ls | head -1` on 2,500 schedules, `task ls --limit 1000 | head -2` (trial 37).
import { spawn } from 'node:child_process';
import { QueueClient } from '../../lib/core/queue/client.js';
import { CLI_MAIN } from '../helpers/cli.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

let ns: string;

beforeAll(async () => {
  ns = newNamespace('cli-epipe');
  const client = new QueueClient({ connection: redisUrl(), namespace: ns });
  // ~450 KB of JSON and ~110 KB of table: more than a pipe holds, so the CLI is still writing when the reader goes away
  const tasks = Array.from({ length: 600 }, (_, i) => ({
    type: 'big',
    payload: { i, text: 'x'.repeat(500) },
    options: { delay: 3_600_000 },
  }));
  await client.enqueueBulk(tasks.map((t) => ({ ...t, options: { ...t.options, queue: 'big' } })));
  await client.close();
});
afterAll(async () => {
  await deleteNamespace(ns);
});

/** Runs the CLI, reads its first chunk of stdout, then closes the pipe (what `| head -1` does). */
function readFirstChunkThenClose(args: string[]): Promise<{ code: number | null; signal: string | null; first: string; err: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redisUrl(), CHRONOS_NAMESPACE: ns };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  return new Promise((resolve) => {
    let first = '';
    child.stdout.once('data', (b: Buffer) => {
      first = b.toString();
      child.stdout.destroy();
    });
    child.once('exit', (code, signal) => resolve({ code, signal, first, err }));
  });
}

test.each([
  [['--json', 'task', 'ls', '--queue', 'big', '--state', 'scheduled', '--limit', '1000']],
  [['task', 'ls', '--queue', 'big', '--state', 'scheduled', '--limit', '1000']],
])(
  'chronos %j | head: exit 0, no stack trace',
  async (args) => {
    const r = await readFirstChunkThenClose(args);
    expect(r.first.length).toBeGreaterThan(0);
    expect({ code: r.code, signal: r.signal, err: r.err }).toEqual({ code: 0, signal: null, err: '' });
  },
  60_000,
);
