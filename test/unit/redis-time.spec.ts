import { monotonicNow, RedisTime } from '../../lib/core/runtime/time.js';

/** Unit tests of the time source's estimate of Redis time: round trips in, (Redis time − local base) out. Fixed instants. */

const T = 1_700_000_000_000;
/** Redis runs `offset` ms ahead of the local clock; a round trip sent at `sent`, answered after `up` ms, back after `down` more. */
function trip(c: RedisTime, offset: number, sent: number, up: number, down: number): void {
  c.sample(sent, sent + up + offset, sent + up + down);
}

test('starts at 0; a round trip sets the lower bound of the offset (the estimate of Redis time is never ahead)', () => {
  const c = new RedisTime();
  expect(c.offsetMs).toBe(0);
  expect(c.bestRttMs).toBe(Infinity);
  trip(c, 250, T, 2, 2);
  expect(c.offsetMs).toBe(248); // Redis time at receipt is at least redisNow: 250 − the 2 ms way back
  expect(c.bestRttMs).toBe(4);
});

test('now() is the local base carried forward by the estimate, rounded down (never ahead)', () => {
  let local = T;
  const c = new RedisTime(() => local);
  expect(c.now()).toBe(T); // before the first round trip: the local base itself
  trip(c, 250, T, 2, 2);
  local = T + 1000.7;
  expect(c.now()).toBe(T + 1000 + 248);
  expect(c.localNow()).toBe(T + 1000.7);
});

test('the default local base is the monotonic clock: a step of the wall clock (Date.now) does not move it', () => {
  const c = new RedisTime();
  const realNow = Date.now;
  const before = c.now();
  try {
    Date.now = () => realNow() - 3_600_000; // the wall clock stepped an hour back
    expect(c.now()).toBeGreaterThanOrEqual(before);
    expect(monotonicNow()).toBeGreaterThanOrEqual(before);
    Date.now = () => realNow() + 3_600_000; // and an hour forward
    expect(c.now() - before).toBeLessThan(3_600_000);
  } finally {
    Date.now = realNow;
  }
});

test('the shortest recent round trip wins; a reply queued during an outage (huge round trip) does not move the estimate', () => {
  const c = new RedisTime();
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
  const c = new RedisTime();
  trip(c, 100, T, 1, 1);
  trip(c, 130, T + 20_000, 10, 10);
  expect(c.offsetMs).toBe(99);
  trip(c, 130, T + 31_000, 10, 10);
  expect(c.offsetMs).toBe(120);
  expect(c.bestRttMs).toBe(20);
});

test('a round trip that proves the estimate ahead (Redis time stepped back, or stale samples) restarts the window', () => {
  const c = new RedisTime();
  trip(c, 100, T, 1, 1);
  // Redis's clock jumps 3 s back: it is now 2900 ms behind the local base; even a slow round trip proves it
  trip(c, -2900, T + 4000, 50, 50);
  expect(c.offsetMs).toBe(-2950);
  trip(c, -2900, T + 5000, 1, 1);
  expect(c.offsetMs).toBe(-2901);
});

test('exactNow() keeps the fraction of a ms that now() rounds down; a sub-ms sample sets it', () => {
  let local = T;
  const c = new RedisTime(() => local);
  c.sample(T, T + 250.6, T + 0.2); // Redis's TIME with its microseconds
  local = T + 1000.3;
  expect(c.exactNow()).toBeCloseTo(T + 1000.3 + 250.4, 2);
  expect(c.now()).toBe(T + 1250);
});

test('a reply in whole ms (rounded down) with a short round trip does not prove ahead an estimate from a sub-ms sample', () => {
  let local = T;
  const c = new RedisTime(() => local);
  c.sample(T, T + 250.9, T + 0.1); // offset at least 250.8
  // a whole-ms reply (Redis time T + 1251.x) to a round trip of 0.65 ms: its upper bound, taken as 1251 − 1000.3,
  // would be below 250.8 and restart the window on the worse sample; Redis time was up to 1 ms past what it says
  local = T + 1000.95;
  c.sample(T + 1000.3, T + 1251, T + 1000.95);
  expect(c.offsetMs).toBeCloseTo(250.8, 2);
});
