import { InvalidOptionsError, InvalidScheduleError } from '../../lib/core/runtime/errors.js';
import { KEY_TTL_MAX_MS } from '../../lib/core/runtime/options.js';
import { fireDedupTtlMs, storedSpec, type ScheduleDefinition, type StoredSchedule } from '../../lib/core/scheduler/definition.js';
import { toStored } from '../../lib/core/scheduler/definition-check.js';
import { prepareTask, type EnqueueContext } from '../../lib/core/queue/enqueue-options.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';

/**
 * A duration that becomes a key's lifetime in Redis (`SET … PX`) is bounded where it is given
 * (trial 22): a schedule's `catchUpWindow` of 1e300 (or 1e19) was accepted, and every fire of its
 * queue then failed at fire time, taking the healthy schedules of the same fire.lua batch down with
 * it ("ERR value is not an integer or out of range"); an enqueue's `dedupTtl` failed in the script
 * with an untyped RedisScriptError. No Redis: the checks and the TTL fire.lua is sent.
 */

const def = (extra: Partial<ScheduleDefinition>): ScheduleDefinition => ({ name: 'job', spec: { every: 1000 }, ...extra });

describe("a schedule's catchUpWindow", () => {
  test.each([1e300, 1e19, KEY_TTL_MAX_MS + 1])('%p is refused at registration with an InvalidScheduleError naming it', (w) => {
    const run = () => toStored(def({ catchUpWindow: w }), 'UTC', true);
    expect(run).toThrow(InvalidScheduleError);
    expect(run).toThrow(`"${String(w)}": catchUpWindow: expected an integer from 0 to ${KEY_TTL_MAX_MS} (ms)`);
  });

  test('the largest accepted window gives fire.lua a TTL Redis takes (a plain integer, not 1e+…)', () => {
    const { stored, spec } = toStored(def({ catchUpWindow: KEY_TTL_MAX_MS }), 'UTC', true);
    expect(String(fireDedupTtlMs(stored, spec))).toMatch(/^\d+$/);
    expect(fireDedupTtlMs(stored, spec)).toBeLessThanOrEqual(KEY_TTL_MAX_MS);
  });

  test('a definition stored before the bound still fires: its dedup TTL is capped, the default one unchanged', () => {
    const { stored } = toStored(def({}), 'UTC', true);
    const old: StoredSchedule = { ...stored, catchUpWindowMs: 1e300 };
    expect(fireDedupTtlMs(old, storedSpec(old))).toBe(KEY_TTL_MAX_MS);
    expect(fireDedupTtlMs(stored, storedSpec(stored))).toBe(3_600_000 + 60_000);
  });
});

describe("an enqueue's dedup TTL", () => {
  const ctx: EnqueueContext = {
    defaults: { queue: 'default', maxRetry: 25, timeoutMs: 1_800_000 },
    maxPayloadBytes: 0,
    keysOf: (queue) => new QueueKeys('ns', queue),
  };
  test.each([
    [{ dedupKey: 'k', dedupTtl: 1e300 }, 'dedupTtl'],
    [{ dedup: { key: 'k', ttl: 1e19 } }, 'dedup.ttl'],
  ])('%p is refused before Redis with an InvalidOptionsError naming it', (options, key) => {
    const run = () => prepareTask(ctx, 't', {}, options);
    expect(run).toThrow(InvalidOptionsError);
    expect(run).toThrow(`${key}: expected an integer from 1 to ${KEY_TTL_MAX_MS} (ms)`);
  });
  test('the largest accepted TTL is prepared as given', () => {
    expect(prepareTask(ctx, 't', {}, { dedupKey: 'k', dedupTtl: KEY_TTL_MAX_MS }).dedupTtlMs).toBe(KEY_TTL_MAX_MS);
  });
});
