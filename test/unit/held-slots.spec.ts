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

/** A slot table on the monotonic clock whose stand-in executor records the runs, each ended by the test. */
function table(concurrency: number, holdBeyond: () => number) {
  const redisNow = () => Math.floor(performance.timeOrigin + performance.now());
  const runs: { end(): void }[] = [];
  let peak = 0;
  let started!: () => void;
  const all = { done: new Promise<void>((resolve) => (started = resolve)), want: Infinity };
  // eslint-disable-next-line prefer-const
  let slots: Slots;
  const executor = {
    execute: (run: unknown) => {
      runs.push({ end: () => slots.finish(run as never) });
      peak = Math.max(peak, slots.activeCount);
      if (runs.length >= all.want) started();
    },
  } as unknown as Executor;
  slots = new Slots({
    concurrency,
    visibilityTimeoutMs: 30_000,
    consumer: {} as Consumer,
    executor,
    mux: { get: () => ({}), types: () => [] } as unknown as Mux,
    logger: silent,
    isRunning: () => true,
    redisNow,
    stale: { skipIfStale: () => false } as unknown as StaleTriggers,
    slotFreed: { wake: () => {} },
    holdBeyond,
  });
  let seq = 0;
  const hold = (n: number, at: number) => {
    for (let k = 0; k < n; k++) {
      const i = seq++;
      const meta = { ...newMeta(0, 0, at - 1000), [META.schedule]: `s${i}`, [META.triggerAt]: at };
      slots.accept({ queue, entryId: `${at}-${i}`, fields: entryFields(`s${i}:${at}`, 'e', '{}', JSON.stringify(meta)) });
    }
  };
  return { slots, runs, hold, redisNow, all, peak: () => peak };
}

test('a lone server (holdBeyond) holds a burst of one instant beyond its concurrency; at the instant no more than concurrency handlers run, the rest start as handlers end', async () => {
  const t = table(2, () => 8);
  const at = t.redisNow() + 50;
  t.hold(8, at);
  // without holdBeyond the first 2 would reserve both slots (freeSlots 0) and the fetcher would stop reading
  expect({ free: t.slots.freeSlots, held: [...t.slots.entries()].length }).toEqual({ free: 2, held: 8 });
  t.hold(2, at); // past concurrency + holdBeyond: they reserve the slots
  expect({ free: t.slots.freeSlots, held: [...t.slots.entries()].length }).toEqual({ free: 0, held: 10 });
  t.all.want = 2;
  await t.all.done;
  expect(t.runs.length).toBe(2); // the other 8 wait in the buffer for a slot
  for (let i = 0; i < t.runs.length; i++) t.runs[i].end();
  expect({ runs: t.runs.length, peak: t.peak() }).toEqual({ runs: 10, peak: 2 });
});

test('without holdBeyond a held trigger task reserves its slot: concurrency held at most', () => {
  const t = table(2, () => 0);
  t.hold(2, t.redisNow() + 60_000);
  expect(t.slots.freeSlots).toBe(0);
  t.slots.takeUnstarted();
});

test('a claims round may leave out a held task held since the given instant (its claim is fresh), never a running one', async () => {
  const t = table(2, () => 8);
  const before = t.redisNow();
  t.hold(3, before + 60_000);
  expect([...t.slots.entries(before)].length).toBe(0);
  expect([...t.slots.entries(before + 60_000)].length).toBe(3); // held before that instant: renewed
  expect([...t.slots.entries()].length).toBe(3);
  t.slots.takeUnstarted();
});

test('a held trigger task starts within a turn of the event loop once the time source (with its fraction of a ms) reaches its instant, not a whole-ms timer later', async () => {
  let clock = 1_700_000_000_000.25;
  let startedAt: number | undefined;
  const slots = new Slots({
    concurrency: 1,
    visibilityTimeoutMs: 30_000,
    consumer: {} as Consumer,
    executor: { execute: () => (startedAt = clock) } as unknown as Executor,
    mux: { get: () => ({}), types: () => [] } as unknown as Mux,
    logger: silent,
    isRunning: () => true,
    redisNow: () => Math.floor(clock),
    exactNow: () => clock,
    stale: { skipIfStale: () => false } as unknown as StaleTriggers,
    slotFreed: { wake: () => {} },
  });
  const at = 1_700_000_000_002; // 1.75 ms ahead
  const meta = { ...newMeta(0, 0, at - 1000), [META.schedule]: 's', [META.triggerAt]: at };
  slots.accept({ queue, entryId: '1-0', fields: entryFields(`s:${at}`, 's', '{}', JSON.stringify(meta)) });
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  clock = at - 0.01;
  for (let i = 0; i < 3; i++) await turn();
  expect(startedAt).toBeUndefined(); // never before its instant
  clock = at;
  for (let i = 0; i < 3 && startedAt === undefined; i++) await turn();
  expect(startedAt).toBe(at);
});
