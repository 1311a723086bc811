// The bulk runtime API's pipelining (lib/core/admin/schedule-bulk.ts pipelined): calls go out before
// the first reply, at most IN_FLIGHT at a time, and a chunk is made only when a place is free.
import { IN_FLIGHT, pipelined } from '../../lib/core/admin/schedule-bulk.js';
import { deferred, type Deferred } from '../helpers/wait.js';

test('at most IN_FLIGHT calls are outstanding, each chunk made when a reply frees a place; outcomes in order', async () => {
  const total = 3 * IN_FLIGHT + 1;
  const replies: Deferred<number>[] = [];
  let made = 0;
  function* parts(): Generator<number> {
    for (let i = 0; i < total; i++) {
      made++;
      yield i;
    }
  }
  const run = pipelined(parts(), (i) => {
    const d = deferred<number>();
    replies[i] = d;
    return d.promise;
  });
  await new Promise((r) => setImmediate(r));
  expect(made).toBe(IN_FLIGHT); // the first IN_FLIGHT are on the wire, the next is not made yet
  for (let i = 0; i < total; i++) {
    expect(made - i).toBeLessThanOrEqual(IN_FLIGHT);
    replies[i].resolve(i * 10);
    await new Promise((r) => setImmediate(r));
  }
  const { parts: taken, outcomes } = await run;
  expect(taken).toEqual(Array.from({ length: total }, (_, i) => i));
  expect(outcomes).toEqual(taken.map((i) => i * 10));
});

test('a failed call fails the whole, and the chunks after it are still tried', async () => {
  const tried: number[] = [];
  const err = await pipelined([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], (i) => {
    tried.push(i);
    return i === 2 ? Promise.reject(new Error('chunk 2 failed')) : Promise.resolve(i);
  }).catch((e: unknown) => e);
  expect((err as Error).message).toBe('chunk 2 failed');
  expect(tried).toHaveLength(12);
});
