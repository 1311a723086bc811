// Jest's fake timers and the testing kit. Mode 'redis' runs the real engine on real timers: with fake
// timers on, compile() rejects with a ChronosTestingError that says so. Before, it hung (the kit
// waited for its redis-server on a faked setTimeout) until the test's timeout, with no word of why.
// Manual mode's clock is virtual: it works under fake timers, a handler's timeout fires when the
// test advances them.
import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TaskHandler, type Task } from '@chronos/nest';
import { ChronosTesting, ChronosTestingError, ChronosTestingModule } from '@chronos/nest/testing';

@Injectable()
class Slow {
  @TaskHandler('slow')
  run(task: Task) {
    return new Promise((_, reject) => task.signal.addEventListener('abort', () => reject(task.signal.reason)));
  }
}

afterEach(() => jest.useRealTimers());

test("mode 'redis' under fake timers: compile() rejects with a ChronosTestingError naming them", async () => {
  jest.useFakeTimers();
  const built = Test.createTestingModule({ imports: [ChronosTestingModule.forRoot({ mode: 'redis' })] }).compile();
  await expect(built).rejects.toThrow(ChronosTestingError);
  await expect(built).rejects.toThrow(/fake timers on/);
}, 20_000);

test("manual mode under fake timers: a handler's timeout fires as the test advances the timers", async () => {
  jest.useFakeTimers({ now: Date.parse('2026-06-01T00:00:00Z') });
  const module: TestingModule = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot()], providers: [Slow] }).compile();
  await module.init();
  const chronos = module.get(ChronosTesting);
  expect(chronos.now).toBe(Date.parse('2026-06-01T00:00:00Z')); // the virtual clock starts at the faked Date.now()
  const attempt = chronos.perform('slow', {}, { timeout: 1000, maxRetry: 0 });
  await jest.advanceTimersByTimeAsync(1000);
  expect(await attempt).toMatchObject({ outcome: 'dead', reason: 'timeout' });
  await module.close();
});
