import { atInstant } from '../../lib/core/runtime/instant.js';

/** Unit tests of the instant timer (runtime/instant.ts) on a clock the test moves: no timing in the assertions, turns of the event loop only. */

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('fires once the clock reaches the instant (within a turn of the event loop), never before, and never synchronously', async () => {
  let clock = 1000.5;
  let fired = 0;
  atInstant(
    1001.5,
    () => clock,
    () => fired++,
  );
  expect(fired).toBe(0);
  for (let i = 0; i < 3; i++) await turn();
  expect(fired).toBe(0);
  clock = 1001.4999;
  await turn();
  expect(fired).toBe(0);
  clock = 1001.5;
  for (let i = 0; i < 3 && fired === 0; i++) await turn();
  expect(fired).toBe(1);
  clock = 2000;
  for (let i = 0; i < 3; i++) await turn();
  expect(fired).toBe(1);
});

test('an instant already past fires at the next turn; a cancelled timer never fires', async () => {
  let past = 0;
  atInstant(
    5,
    () => 10,
    () => past++,
  );
  expect(past).toBe(0);
  await turn();
  expect(past).toBe(1);
  let clock = 0;
  let fired = 0;
  const t = atInstant(
    1,
    () => clock,
    () => fired++,
  );
  t.cancel();
  clock = 2;
  for (let i = 0; i < 3; i++) await turn();
  expect(fired).toBe(0);
});
