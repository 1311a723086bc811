// A worker's claim renewals are bounded per Redis call (review46). Every third of the visibility timeout
// a worker renews the claim of every entry it holds (claim.lua: two XPENDING, an XRANGE and an XCLAIM per
// entry, and its markers); it sent all of a queue's entries in one script, so the script's length grew
// with the worker's concurrency: measured on this machine, 44 ms of Redis time for 1,000 held entries,
// 213 ms for 5,000, 608 ms for 20,000 — Redis serves no other client meanwhile. On a private Redis whose
// SLOWLOG records every command.
import { createHash } from 'node:crypto';
import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { expandedSource } from '../../lib/core/redis/scripts.js';
import { CLAIM_CHUNK } from '../../lib/core/fetch/consumer.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { deferred, recordingLogger, waitFor } from '../helpers/wait.js';

jest.setTimeout(90_000);

let redis: PrivateRedis | undefined;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  await redis?.kill();
  redis = undefined;
});

const HELD = 1000;

test('a worker holding 1,000 running tasks renews their claims in calls of at most CLAIM_CHUNK entries, every one renewed', async () => {
  const r = (redis = await PrivateRedis.start());
  const admin = new Redis(r.url);
  closers.push(async () => admin.disconnect());
  const client = new QueueClient({ connection: r.url });
  closers.push(() => client.close());
  const release = deferred();
  let started = 0;
  const logger = recordingLogger();
  const server = new ChronosServer({ connection: r.url, concurrency: HELD, visibilityTimeout: 1500, shutdownTimeout: 200, logger });
  server.handle('hold', async () => {
    started++;
    await release.promise;
  });
  closers.push(async () => {
    release.resolve();
    await server.shutdown();
  });
  // each with its own id: its uid marker is renewed with its claim, and again when it is given back
  for (let i = 0; i < HELD; i += 500) {
    await client.enqueueBulk(
      Array.from({ length: 500 }, (_, j) => ({ type: 'hold', payload: { n: i + j }, options: { taskId: `t${i + j}` } })),
    );
  }
  await server.start();
  await waitFor(() => started === HELD, `all ${HELD} handlers to run (ran ${started})`, 30_000);

  await admin.config('SET', 'slowlog-log-slower-than', '0');
  await admin.config('SET', 'slowlog-max-len', '100000');
  await admin.call('SLOWLOG', 'RESET');
  // EVALSHA sha numkeys <stream, markers> group consumer ttl P <P plain ids> <entry id, task id, n> per task with markers
  const claimCalls = async () =>
    scriptCalls(await slowlog(admin), 'claim').map((args) => {
      // SLOWLOG keeps 32 arguments: counted from numkeys and the total, every task here having one marker (its uid)
      const flagged = Number(args[2]) - 1;
      const plain = argCount(args) - 3 - (1 + flagged) - 4 - 3 * flagged;
      return plain + flagged;
    });
  // a whole round: every held entry renewed once
  const sizes = await waitFor(
    async () => {
      const s = await claimCalls();
      return s.reduce((a, b) => a + b, 0) >= HELD ? s : undefined;
    },
    'a claims round over every held entry',
    20_000,
    100,
  );
  await admin.config('SET', 'slowlog-log-slower-than', '10000');
  expect(Math.max(...sizes)).toBeLessThanOrEqual(CLAIM_CHUNK);
  // and no entry was left to go idle past the timeout
  const stream = new QueueKeys('chronos', 'default').stream;
  const pending = (await admin.call('XPENDING', stream, CONSUMER_GROUP, 'IDLE', 1500, '-', '+', HELD)) as unknown[];
  expect(pending).toEqual([]);

  // a shutdown whose grace runs out gives the 1,000 running tasks back in calls of the same bound
  await admin.config('SET', 'slowlog-log-slower-than', '0');
  await admin.call('SLOWLOG', 'RESET');
  await server.shutdown(); // the handlers wait for release: aborted after shutdownTimeout, then given back
  const commands = await slowlog(admin);
  await admin.config('SET', 'slowlog-log-slower-than', '10000');
  // EVALSHA sha 2 stream prefix group <ids>
  const given = scriptCalls(commands, 'requeue').map((args) => argCount(args) - 6);
  expect(given.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(HELD); // an EVALSHA refused (NOSCRIPT) is sent again as EVAL
  expect(Math.max(...given)).toBeLessThanOrEqual(CLAIM_CHUNK);
  // EVALSHA sha numkeys <markers> <task id, n> per task: their markers renewed as waiting tasks'
  const renewed = scriptCalls(commands, 'renew-markers').map((args) => (argCount(args) - 3 - Number(args[2])) / 2);
  expect(renewed.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(HELD);
  expect(Math.max(...renewed)).toBeLessThanOrEqual(CLAIM_CHUNK);
  expect(await admin.xlen(stream)).toBe(HELD); // every task back in the stream
});

/** Every command the SLOWLOG holds (all of them: slowlog-log-slower-than 0), as its arguments. */
async function slowlog(admin: Redis): Promise<string[][]> {
  const entries = (await admin.call('SLOWLOG', 'GET', '100000')) as [number, number, number, string[]][];
  return entries.map(([, , , args]) => args);
}

/** The calls of a script: EVALSHA with its sha1, or EVAL of its source (ioredis's first call on a connection). */
function scriptCalls(commands: string[][], name: 'claim' | 'requeue' | 'renew-markers'): string[][] {
  const source = expandedSource(name);
  const sha = createHash('sha1').update(source).digest('hex');
  return commands.filter(([cmd, first]) => {
    const c = cmd.toLowerCase();
    return (c === 'evalsha' && first === sha) || (c === 'eval' && first.startsWith(`--[[ ${name}\n`));
  });
}

/** Total argument count of a SLOWLOG entry (Redis keeps 32 and says how many more). */
function argCount(args: string[]): number {
  const more = /^\.\.\. \((\d+) more arguments\)$/.exec(args[args.length - 1] ?? '');
  return more ? args.length - 1 + Number(more[1]) : args.length;
}
