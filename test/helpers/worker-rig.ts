// The rig of the multi-process queue tests: per test a fresh namespace, a client, a plain Redis
// connection, the default queue's keys, the key the worker fixture records its calls under, and
// `worker()` to start a worker process (test/fixtures/worker.ts); all of it cleaned up after the test.
import { afterEach, beforeEach } from '@jest/globals';
import { Redis } from 'ioredis';
import { QueueClient } from '../../lib/core/queue/client.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { killAllChildren, startChild, type Child } from './children.js';
import { deleteNamespace, newNamespace, redisUrl } from './redis.js';

/** What one test of a multi-process queue suite works with (fields are set anew before each test). */
export interface WorkerRig {
  ns: string;
  recordKey: string;
  client: QueueClient;
  redis: Redis;
  keys: QueueKeys;
}

/**
 * Registers the rig's beforeEach/afterEach (call at the top of a suite) and returns it: read its
 * fields inside tests, as they are replaced before each one.
 */
export function useWorkerRig(prefix: string): WorkerRig {
  const rig = {} as WorkerRig;
  beforeEach(() => {
    rig.ns = newNamespace(prefix);
    rig.recordKey = `${rig.ns}-records:calls`;
    rig.client = new QueueClient({ connection: redisUrl(), namespace: rig.ns });
    rig.redis = new Redis(redisUrl());
    rig.keys = new QueueKeys(rig.ns, 'default');
  });
  afterEach(async () => {
    await killAllChildren();
    await rig.client.close();
    await rig.redis.del(rig.recordKey);
    rig.redis.disconnect();
    await deleteNamespace(rig.ns);
  });
  return rig;
}

/** Starts a worker process (fixture `worker`) on the rig's namespace, recording into its record key. */
export function startWorker(rig: WorkerRig, name: string, env: Record<string, number | string> = {}): Promise<Child> {
  return startChild('worker', name, { REDIS_URL: redisUrl(), NS: rig.ns, RECORD_KEY: rig.recordKey, ...env });
}
