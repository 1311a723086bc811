// The event-loop stall watch (lib/core/runtime/loop-stalls.ts): a loop that stood still is noticed,
// so a fetch reply read after it is checked for ownership whatever the blocking read's timeout.
import { LoopStalls } from '../../lib/core/runtime/loop-stalls.js';
import { engineTime } from '../../lib/core/runtime/time.js';

function blockLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    /* a handler that blocks the loop, as a SIGSTOP would */
  }
}

/** Resolves after the timers phase has had its turn (a tick of the watch runs before it). */
const nextTimers = () => new Promise((r) => setTimeout(r, 0)); // not a sleep: a zero timeout waits for the timers phase, where the watch ticks

test('a stall after a read was sent is noticed by the next tick, with its length; an earlier or shorter one is not', async () => {
  const watch = new LoopStalls(100);
  watch.acquire();
  try {
    await nextTimers();
    const before = engineTime.now();
    expect(watch.stalledAfter(before, 300)).toBe(false);
    blockLoop(600);
    await nextTimers(); // the watch's tick (due during the stall) runs in this timers phase
    expect(watch.stalledAfter(before, 300)).toBe(true);
    expect(watch.stalledAfter(before, 5000)).toBe(false); // only as long as it was
    expect(watch.stalledAfter(engineTime.now(), 300)).toBe(false); // a read sent after it is fresh
  } finally {
    watch.release();
  }
});
