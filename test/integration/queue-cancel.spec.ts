// What a worker logs when an operator cancels a running task: the cancel and the handler's end are
// expected (info and debug), never a warning; a task whose entry really vanished still warns.
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { QueueRig } from '../helpers/queue.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

/** A logger recording every level, debug included. */
function allLevels() {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => void lines.push({ level, message });
  return { lines, log: at('log'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

test.each([
  ['rejects with the abort reason', 'reject'],
  ['ignores the signal and succeeds', 'succeed'],
] as const)('a cancelled running task whose handler %s: logged as cancelled (info, then debug at its end), no warning', async (_, how) => {
  const logger = allLevels();
  const s = rig.server({ queues: ['c'], logger });
  const started = deferred();
  const ended = deferred();
  s.handle('long', (t) => {
    started.resolve();
    return new Promise<void>((resolve, reject) =>
      t.signal.addEventListener('abort', () => {
        ended.resolve();
        if (how === 'reject') reject(t.signal.reason);
        else resolve();
      }),
    );
  });
  await s.start();
  const { id } = await rig.client.enqueue('long', {}, { queue: 'c' });
  await started.promise;
  await rig.inspector.cancelTask(id, { actor: 'ops:eve' });
  await ended.promise;
  await waitFor(() => s.activeCount === 0, 'the run to end');
  await s.shutdown();
  const about = logger.lines.filter((l) => l.message.includes(`id=${id}`));
  expect(about.map((l) => l.level)).toEqual(['log', 'debug']);
  expect(about[0].message).toMatch(/^Task cancelled by an operator/);
  expect(about[1].message).toMatch(/^Cancelled task ended; its outcome is not recorded, it is dead already/);
  expect(logger.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
  expect(await rig.inspector.queue('c')).toMatchObject({ pending: 0, active: 0, retry: 0, dead: 1 });
});

test('a real loss still warns: a running task whose entry was deleted (not cancelled) fails and its failure is not recorded', async () => {
  const logger = allLevels();
  const s = rig.server({ queues: ['c'], logger });
  const started = deferred();
  const go = deferred();
  s.handle('doomed', async () => {
    started.resolve();
    await go.promise;
    throw new Error('boom');
  });
  await s.start();
  const { id } = await rig.client.enqueue('doomed', {}, { queue: 'c' });
  await started.promise;
  const stream = new QueueKeys(rig.namespace, 'c').stream;
  const [[entryId]] = (await rig.client.redis.xrange(stream, '-', '+')) as [string, string[]][];
  // gone behind the worker's back (as a FLUSHDB or a delete would leave it): not in the stream, not pending
  await rig.client.redis.multi().xack(stream, CONSUMER_GROUP, entryId).xdel(stream, entryId).exec();
  go.resolve();
  const warn = await waitFor(() => logger.lines.find((l) => l.level === 'warn' && l.message.includes(`id=${id}`)), 'the warning');
  expect(warn.message).toMatch(/^Failure not recorded: the task has no stream entry any more: it is gone/);
});
