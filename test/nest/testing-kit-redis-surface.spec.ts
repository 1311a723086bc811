// In mode 'redis' the injected ChronosTesting is the kit's control of the real module: waitForIdle,
// redisUrl and mode work; every other public member of ChronosTesting is for modes 'manual' and
// 'inline' and throws a ChronosTestingError that says so. Before, only enqueued, expectEnqueued,
// perform, drain and fireDue did: advanceTo, expectNotEnqueued and clear were "TypeError: … is not a
// function", now, history, outcomes and dead were undefined, and mode was undefined (not 'redis').
// redisUrl (docs/testing.md: "redisUrl is the server's address") was not on the ChronosTesting type,
// so a typed test could not read it; in manual mode it now says it is redis mode's.
import { Test } from '@nestjs/testing';
import { ChronosTesting, ChronosTestingError, ChronosTestingModule } from '../../lib/nest/testing/index.js';

/** Every public member of ChronosTesting (the class of modes manual and inline), besides waitForIdle and mode. */
const MANUAL_ONLY_METHODS = [
  'enqueued',
  'expectEnqueued',
  'expectNotEnqueued',
  'perform',
  'drain',
  'fireDue',
  'advanceTo',
  'clear',
] as const;
const MANUAL_ONLY_GETTERS = ['now', 'history', 'outcomes', 'dead'] as const;

test("mode 'redis': the members of the manual and inline modes throw a ChronosTestingError naming the member; mode is 'redis'", async () => {
  // the list above is ChronosTesting's whole public surface (the members its prototype and instances have, less the private ones)
  const manual = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot()] }).compile();
  await manual.init();
  const kit = manual.get(ChronosTesting);
  for (const m of [...MANUAL_ONLY_METHODS, ...MANUAL_ONLY_GETTERS, 'waitForIdle', 'mode', 'redisUrl']) expect(m in kit).toBe(true);
  // redisUrl (documented, and typed on ChronosTesting) is redis mode's: in manual mode it says so
  expect(() => kit.redisUrl).toThrow(ChronosTestingError);
  expect(() => kit.redisUrl).toThrow(
    "ChronosTesting.redisUrl is for mode 'redis' (the kit's private redis-server); mode 'manual' talks to no Redis",
  );
  await manual.close();

  const module = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot({ mode: 'redis' })] }).compile();
  module.useLogger(false);
  await module.init();
  try {
    const chronos = module.get(ChronosTesting);
    expect(chronos.mode).toBe('redis');
    expect(chronos.redisUrl).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    await chronos.waitForIdle({ timeout: 10_000 });
    const members: [string, () => unknown][] = [
      ...MANUAL_ONLY_METHODS.map((m): [string, () => unknown] => [m, () => (chronos[m] as (...a: unknown[]) => unknown)('t')]),
      ...MANUAL_ONLY_GETTERS.map((m): [string, () => unknown] => [m, () => chronos[m]]),
    ];
    for (const [name, use] of members) {
      let err: unknown;
      try {
        await use();
      } catch (e) {
        err = e;
      }
      expect([name, err]).toEqual([name, expect.any(ChronosTestingError)]);
      expect((err as Error).message).toContain(`ChronosTesting.${name}`);
      expect((err as Error).message).toContain("is for modes 'manual' and 'inline'");
    }
  } finally {
    await module.close();
  }
});
