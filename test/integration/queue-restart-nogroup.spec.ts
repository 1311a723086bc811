// A Redis restarted without its data under a running worker (new-user trial, finding 2): the consumer
// group is gone. While the worker's only slot is busy its fetch loop does not read, so the group is
// not recreated yet and the recover loop's sweep (as the claims loop) meets NOGROUP: a known
// condition after a restart (a missing group holds nothing to recover), one warning line, not an
// error with a stack. The task that ended meanwhile finds its entry gone: the warning says what
// Redis had, not that an earlier ack attempt reached it.
import { QueueClient } from '../../lib/core/queue/client.js';
import { ChronosServer } from '../../lib/core/worker/server.js';
import { DEFAULTS } from '../../lib/core/runtime/defaults.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { deferred, recordingLogger, waitFor } from '../helpers/wait.js';

let redis: PrivateRedis | undefined;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  await redis?.kill();
  redis = undefined;
});

/** A worker of one slot on a private Redis, running a task of type `long` until `release`. */
async function busyWorker() {
  const r = (redis = await PrivateRedis.start());
  const logger = recordingLogger();
  const server = new ChronosServer({ connection: r.url, concurrency: 1, recoverInterval: 100, logger });
  closers.push(() => server.shutdown());
  const started = deferred();
  const release = deferred();
  server.handle('long', async () => {
    started.resolve();
    await release.promise;
  });
  await server.start();
  const client = new QueueClient({ connection: r.url });
  closers.push(() => client.close());
  await client.enqueue('long', {});
  await started.promise;
  return { r, logger, server, client, release };
}

const missingGroup = (l: { message: string }) => /Consumer group missing.*nothing to recover/.test(l.message);
const gone = (l: { message: string }) =>
  /finished, but .*their entries were gone \(no longer pending in Redis\): nothing to ack/.test(l.message);

test('after a Redis restart without data, the recover loop takes the missing consumer group for nothing to recover: one warning, no error', async () => {
  const { r, logger, server, client, release } = await busyWorker();
  await r.restart();
  // the recover loop waits out the reconnect grace, then sweeps while the only slot is still busy
  await waitFor(
    () => logger.lines.some(missingGroup),
    'the recover loop to meet the missing group',
    DEFAULTS.livenessReconnectGraceMs + 10_000,
  );
  release.resolve();
  await waitFor(() => logger.lines.some(gone), 'the ack to find its entry gone');
  // the fetch loop recreates the group; a task enqueued now runs
  const ran = deferred();
  server.handle('after', () => ran.resolve());
  await client.enqueue('after', {});
  await ran.promise;
  expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
  expect(logger.lines.filter(missingGroup)).toEqual([
    {
      level: 'warn',
      message: 'Consumer group missing (Redis lost its data?): nothing to recover until the fetch loop recreates it (queue=default)',
    },
  ]);
  expect(logger.lines.find(gone)!.message).toMatch(/restarted empty/);
}, 40_000);
