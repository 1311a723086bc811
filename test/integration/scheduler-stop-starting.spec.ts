// A stop while the scheduler starts (a SIGTERM during the app's boot): the start ends after its step
// in flight and resolves; the connections the stop closed under that step are not an error.
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { recordingLogger } from '../helpers/wait.js';

const namespace = newNamespace('stop-starting');
afterAll(() => deleteNamespace(namespace));

test.each([0, 1, 2, 4, 8, 16])(
  'a stop %i event-loop turns after start() ends the start quietly: it resolves, nothing logged as a failure',
  async (turns) => {
    const logger = recordingLogger();
    const scheduler = new Scheduler({ connection: redisUrl(), namespace, logger, instanceId: `s${turns}` });
    scheduler.register({ name: 'job', spec: '* * * * *', type: 'job' });
    const starting = scheduler.start().then(
      () => 'resolved',
      (err: unknown) => `rejected: ${String(err)}`,
    );
    for (let i = 0; i < turns; i++) await new Promise<void>((r) => setImmediate(r)); // the start's steps go on meanwhile
    await scheduler.stop();
    // before: start() rejected with 'Connection is closed.' or a RedisUnreachableError telling to check REDIS_URL,
    // and the registry migration warned it could not move the schedules
    expect(await starting).toBe('resolved');
    expect(logger.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
  },
);
