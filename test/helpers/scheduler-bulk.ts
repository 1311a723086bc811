// The rig of the scheduler-bulk specs: a fresh namespace and client per test, schedulers stopped after it, tenant digests, stored definitions.
import type { Redis } from 'ioredis';
import { openConnection } from '../../lib/core/redis/connection.js';
import { storedJson } from './registry.js';
import type { ScheduleDefinition, StoredSchedule } from '../../lib/core/scheduler/definition.js';
import { Scheduler, type SchedulerOptions } from '../../lib/core/scheduler/scheduler.js';
import { decodeStored } from '../../lib/core/scheduler/stored-form.js';
import { deleteNamespace, newNamespace, redisUrl } from './redis.js';
import { recordingLogger } from './wait.js';

export let ns: string;
export let client: Redis;
export const started: { stop(): Promise<void> }[] = [];
export const logger = recordingLogger();
beforeEach(() => {
  ns = newNamespace('bulk');
  client = openConnection(redisUrl()).client as Redis;
});
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
  client.disconnect();
  await deleteNamespace(ns);
});

export function scheduler(options: SchedulerOptions = {}): Scheduler {
  const s = new Scheduler({ connection: redisUrl(), namespace: ns, leaderTtl: 1000, heartbeatInterval: 200, logger, ...options });
  started.push(s);
  return s;
}

/** `n` tenant digests at 03:00 in their zone, named `digest.<i>`. */
export function digests(n: number, extra: Partial<ScheduleDefinition> = {}): ScheduleDefinition[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `digest.${i}`,
    spec: '0 3 * * *',
    timeZone: i % 2 ? 'Europe/Paris' : 'America/New_York',
    queue: 'digests',
    payload: { tenant: i },
    ...extra,
  }));
}

/** The stored definition of a schedule, decoded as the library reads it (either stored form). */
export async function stored(name: string): Promise<StoredSchedule> {
  return decodeStored(name, (await storedJson(client, ns, name))!);
}
