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

test('two slots by default; a bad slot count is refused', async () => {
  expect(BATCH_GATE_SLOTS).toBe(2);
  expect(new BatchGate().slots).toBe(2);
  expect(() => new BatchGate(0)).toThrow(RangeError);
  await expect(new BatchGate(2).acquire(3)).rejects.toThrow(RangeError);
  await expect(new BatchGate(2).acquire(0)).rejects.toThrow(RangeError);
});

test('a caller of every slot (a pass of several shards) waits for all of them, and no later caller goes ahead of it', async () => {
  const gate = new BatchGate(2);
  const order: string[] = [];
  const first = await gate.acquire();
  let all: (() => void) | undefined;
  void gate.acquire(2).then((release) => {
    order.push('all');
    all = release;
  });
  let one: (() => void) | undefined;
  void gate.acquire().then((release) => {
    order.push('one');
    one = release;
  });
  await turn();
  // one slot is free, but the first in line needs two: the one behind it waits too
  expect(order).toEqual([]);
  expect(gate.queued).toBe(2);
  first();
  await turn();
  expect(order).toEqual(['all']);
  all!();
  await turn();
  expect(order).toEqual(['all', 'one']);
  one!();
  // every slot is back: two at once again
  const both = await gate.acquire(2);
  both();
  both(); // a second release frees nothing more
  const a = await gate.acquire();
  const b = await gate.acquire();
  let third = false;
  void gate.acquire().then(() => (third = true));
  await turn();
  expect(third).toBe(false);
  a();
  b();
});

test('two callers of every slot never each hold a part: the second waits for the first to release all', async () => {
  const gate = new BatchGate(2);
  const held = await gate.acquire();
  const got: string[] = [];
  const releases: (() => void)[] = [];
  for (const name of ['p1', 'p2'])
    void gate.acquire(2).then((release) => {
      got.push(name);
      releases.push(release);
    });
  held();
  await turn();
  expect(got).toEqual(['p1']);
  releases[0]();
  await turn();
  expect(got).toEqual(['p1', 'p2']);
  releases[1]();
});
