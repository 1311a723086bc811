import { ClockOffset } from '../../lib/core/runtime/clock-offset.js';

/** Unit tests of the estimate of Redis time: round trips in, (Redis time − local clock) out. Fixed instants. */

const T = 1_700_000_000_000;
/** Redis runs `offset` ms ahead of the local clock; a round trip sent at `sent`, answered after `up` ms, back after `down` more. */
function trip(c: ClockOffset, offset: number, sent: number, up: number, down: number): void {
  c.sample(sent, sent + up + offset, sent + up + down);
}

test('starts at 0; a round trip sets the lower bound of the offset (the estimate of Redis time is never ahead)', () => {
  const c = new ClockOffset();
  expect(c.offsetMs).toBe(0);
  expect(c.bestRttMs).toBe(Infinity);
  trip(c, 250, T, 2, 2);
  expect(c.offsetMs).toBe(248); // Redis time at receipt is at least redisNow: 250 − the 2 ms way back
  expect(c.bestRttMs).toBe(4);
});

test('the shortest recent round trip wins; a reply queued during an outage (huge round trip) does not move the estimate', () => {
  const c = new ClockOffset();
  trip(c, 100, T, 1, 1);
  trip(c, 100, T + 1000, 5, 5);
  expect(c.offsetMs).toBe(99);
  // sent just before Redis hung; answered 4 s later when it came back (the reply itself is quick)
  trip(c, 100, T + 2000, 4000, 1);
  expect(c.offsetMs).toBe(99);
  // the worker's old bug: the midpoint of that round trip would have put Redis time ~2 s ahead
  const midpoint = T + 2000 + 4000 + 100 - (T + 2000 + (T + 6001)) / 2;
  expect(midpoint).toBeGreaterThan(1900);
  // the same when the reply waited on the way back (a paused process): the estimate stays
  trip(c, 100, T + 7000, 1, 5000);
  expect(c.offsetMs).toBe(99);
});

test('samples age out: after 30 s a newer one wins whatever its round trip (clocks drift)', () => {
  const c = new ClockOffset();
  trip(c, 100, T, 1, 1);
  trip(c, 130, T + 20_000, 10, 10);
  expect(c.offsetMs).toBe(99);
  trip(c, 130, T + 31_000, 10, 10);
  expect(c.offsetMs).toBe(120);
  expect(c.bestRttMs).toBe(20);
});

test('a round trip that proves the estimate ahead (the local clock stepped forward) restarts the window', () => {
  const c = new ClockOffset();
  trip(c, 100, T, 1, 1);
  // the local clock jumps 3 s forward: Redis is now 2900 ms behind it; even a slow round trip proves it
  trip(c, -2900, T + 4000, 50, 50);
  expect(c.offsetMs).toBe(-2950);
  trip(c, -2900, T + 5000, 1, 1);
  expect(c.offsetMs).toBe(-2901);
});
