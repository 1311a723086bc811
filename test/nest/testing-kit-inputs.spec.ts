// Bad input to the testing kit gets a ChronosTestingError naming the value: an instant beyond the
// range of a Date (the clock could not be shown, and fireDue's own error threw a RangeError), and
// options that are not an object.
import { Test } from '@nestjs/testing';
import { InvalidOptionsError } from '../../lib/core/runtime/errors.js';
import { ChronosClient } from '../../lib/nest/index.js';
import { ChronosTesting, ChronosTestingError, ChronosTestingModule, type ChronosTestingOptions } from '../../lib/nest/testing/index.js';

test('an instant beyond the range of a Date is refused with a ChronosTestingError naming it', async () => {
  expect(() => ChronosTestingModule.forRoot({ now: 1e20 })).toThrow(ChronosTestingError);
  expect(() => ChronosTestingModule.forRoot({ now: 1e20 })).toThrow(/now: expected epoch ms.* got 100000000000000000000/);
  const module = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot()] }).compile();
  await module.init();
  const testing = module.get(ChronosTesting);
  const before = testing.now;
  await expect(testing.fireDue(1e20, 0)).rejects.toThrow(/from: expected epoch ms.* got 100000000000000000000/);
  await expect(testing.fireDue(0, -1e20)).rejects.toThrow(ChronosTestingError);
  await expect(testing.advanceTo(8.64e15 + 1)).rejects.toThrow(/to: expected epoch ms.* got 8640000000000001/);
  expect(testing.now).toBe(before);
  await module.close();
});

test('options that are not an object are refused with a ChronosTestingError', () => {
  for (const bad of [null, 'manual', 42]) {
    const declare = () => ChronosTestingModule.forRoot(bad as unknown as ChronosTestingOptions);
    expect(declare).toThrow(ChronosTestingError);
    expect(declare).toThrow(/ChronosTestingModule: expected an options object, got/);
  }
});

test('an enqueueBulk task with an option beside type, payload and options is refused, as the engine refuses it', async () => {
  const module = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot()] }).compile();
  await module.init();
  const chronos = module.get(ChronosClient);
  // a delay written beside the task was dropped by normalize() and the task recorded as due at once
  const bad = [{ type: 'report.build', payload: {}, delay: 60_000 }] as never;
  await expect(chronos.enqueueBulk(bad)).rejects.toThrow(InvalidOptionsError);
  await expect(chronos.enqueueBulk(bad)).rejects.toThrow(/enqueueBulk task #0[\s\S]*unknown option "delay"/);
  expect(module.get(ChronosTesting).enqueued()).toHaveLength(0);
  await module.close();
});

test('advanceTo an instant before the virtual clock is refused with a ChronosTestingError naming both instants', async () => {
  const module = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot({ now: '2026-03-10T00:00:00Z' })] }).compile();
  await module.init();
  const testing = module.get(ChronosTesting);
  // before: resolved [] and left the clock where it was, while the docs say it moves the clock there
  await expect(testing.advanceTo('2026-03-09T00:00:00Z')).rejects.toThrow(ChronosTestingError);
  await expect(testing.advanceTo('2026-03-09T00:00:00Z')).rejects.toThrow(
    'advanceTo: expected an instant at or after the virtual clock (2026-03-10T00:00:00.000Z), got 2026-03-09T00:00:00.000Z',
  );
  expect(testing.now).toBe(Date.parse('2026-03-10T00:00:00Z'));
  expect(await testing.advanceTo(testing.now)).toEqual([]); // the same instant: nothing to fire
  await module.close();
});

test('an instant in epoch seconds (a number or a Date made of them) is refused naming the ms meant; the clock stays', async () => {
  const seconds = Date.parse('2027-01-01T00:00:00Z') / 1000;
  const meant = `epoch seconds? in ms that is ${seconds * 1000}`;
  expect(() => ChronosTestingModule.forRoot({ now: seconds })).toThrow(
    `now: expected epoch ms of an instant after 1973-03-03, got ${seconds}`,
  );
  const module = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot({ now: seconds * 1000 })] }).compile();
  await module.init();
  const testing = module.get(ChronosTesting);
  // before: fireDue(seconds, seconds + 100) resolved [] and set the virtual clock to January 1970
  await expect(testing.fireDue(seconds, seconds + 100)).rejects.toThrow(
    `from: expected epoch ms of an instant after 1973-03-03, got ${seconds}`,
  );
  await expect(testing.fireDue(seconds * 1000, seconds + 100)).rejects.toThrow(
    `to: expected epoch ms of an instant after 1973-03-03, got ${seconds + 100}`,
  );
  await expect(testing.advanceTo(new Date(seconds + 100))).rejects.toThrow('to: expected an instant after 1973-03-03');
  await expect(testing.drain(undefined, { until: seconds })).rejects.toThrow(meant);
  expect(testing.now).toBe(seconds * 1000);
  expect(await testing.fireDue('2027-01-01T00:00:00Z', '2027-01-01T00:00:00Z')).toEqual([]); // an ISO text is taken as written
  await module.close();
});
