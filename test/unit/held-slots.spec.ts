import { performance } from 'node:perf_hooks';
import type { ConsumedQueue, Consumer } from '../../lib/core/fetch/consumer.js';
import { Slots } from '../../lib/core/fetch/slots.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { entryFields, META, newMeta } from '../../lib/core/redis/protocol.js';
import type { StaleTriggers } from '../../lib/core/recovery/stale.js';
import { ChronosLogger } from '../../lib/core/runtime/logger.js';
import type { Executor } from '../../lib/core/worker/executor.js';
import type { Mux } from '../../lib/core/worker/mux.js';

/**
 * Unit test of the slot table's hold of an early trigger task (fetch/slots.ts): it starts when its
 * instant has come by the time source, re-checked when its timer fires. No Redis: the parts the
 * slot table calls are stand-ins, and the time source is a function the test moves.
 */

const silent = { log() {}, warn() {}, error() {}, debug() {} } as unknown as ChronosLogger;
const queue: ConsumedQueue = { name: 'q', weight: 1, keys: new QueueKeys('held-slots', 'q') };

test('a held trigger task whose timer fires early by the time source (its estimate moved back) waits again: it never starts before its instant', async () => {
  let shiftMs = 0;
  const redisNow = () => Math.floor(performance.timeOrigin + performance.now()) + shiftMs;
  let started!: (redisNowAtStart: number) => void;
  const start = new Promise<number>((resolve) => (started = resolve));
  const slots = new Slots({
    concurrency: 1,
    visibilityTimeoutMs: 30_000,
    consumer: {} as Consumer,
    executor: { execute: () => started(redisNow()) } as unknown as Executor,
    mux: { get: () => ({}), types: () => [] } as unknown as Mux,
    logger: silent,
    isRunning: () => true,
    redisNow,
    stale: { skipIfStale: () => false } as unknown as StaleTriggers,
    slotFreed: { wake: () => {} },
  });
  const at = redisNow() + 30;
  const meta = { ...newMeta(0, 0, at - 1000), [META.schedule]: 's', [META.triggerAt]: at };
  slots.accept({ queue, entryId: '1-0', fields: entryFields(`s:${at}`, 's', '{}', JSON.stringify(meta)) });
  expect(slots.freeSlots).toBe(0); // held, its slot reserved
  // a round trip with a shorter delay moves the estimate of Redis time back after the timer was armed
  shiftMs = -40;
  expect(await start).toBeGreaterThanOrEqual(at);
});
