// A shutdown stops every loop of the server at once, whatever each loop was doing when it began: a
// loop in the middle of a round (not asleep, so nothing to wake) must not go to sleep afterwards.
import { QueueRig } from '../helpers/queue.js';

let rig: QueueRig;
beforeEach(() => {
  rig = new QueueRig();
});
afterEach(async () => {
  await rig.close();
});

test('a server shut down while its forward loop runs its first round stops at once: no loop sleeps out its poll, no false "Redis did not answer"', async () => {
  const server = rig.server({ queues: ['a', 'b'], shutdownTimeout: 200 });
  await server.start(); // the forward loop's first sweep and round are in flight when start() returns
  await server.shutdown();
  // before: the forward loop finished its round after the loops were woken, then slept its 30 s poll, and
  // the drain gave up at shutdownTimeout + 5 s with a warning that Redis did not answer (it did)
  expect(rig.logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  expect(server.health().services.find((s) => s.name === 'forward')).toMatchObject({ state: 'stopped' });
  expect(rig.logger.lines.map((l) => l.message)).toContainEqual(expect.stringMatching(/^Worker stopped/));
});
