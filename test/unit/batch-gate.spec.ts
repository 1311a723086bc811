import { BatchGate, BATCH_GATE_SLOTS } from '../../lib/core/scheduler/batch-gate.js';

/** Unit tests of the leader's gate on its shard batches (scheduler/batch-gate.ts). */

/** Settles the microtasks and one turn of the event loop. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('at most `slots` batches hold a slot at once; the others get one in the order they asked', async () => {
  const gate = new BatchGate(2);
  const order: number[] = [];
  let held = 0;
  let most = 0;
  const batches = Array.from({ length: 8 }, (_, i) => ({ i, release: undefined as (() => void) | undefined }));
  for (const b of batches) {
    void gate.acquire().then((release) => {
      order.push(b.i);
      held++;
      most = Math.max(most, held);
      b.release = () => {
        held--;
        release();
      };
    });
  }
  await turn();
  expect(order).toEqual([0, 1]);
  expect(gate.queued).toBe(6);
  for (let done = 0; done < batches.length; done++) {
    batches[done].release!();
    await turn();
  }
  expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  expect(most).toBe(2);
  expect(gate.queued).toBe(0);
});

test('a second release of the same slot frees nothing more', async () => {
  const gate = new BatchGate(1);
  const release = await gate.acquire();
  let second = false;
  let third = false;
  void gate.acquire().then(() => (second = true));
  void gate.acquire().then(() => (third = true));
  release();
  release();
  await turn();
  expect([second, third]).toEqual([true, false]);
});

test('two slots by default; a bad slot count is refused', () => {
  expect(BATCH_GATE_SLOTS).toBe(2);
  expect(new BatchGate().slots).toBe(2);
  expect(() => new BatchGate(0)).toThrow(RangeError);
});
