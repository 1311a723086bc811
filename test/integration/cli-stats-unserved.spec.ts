// A task enqueued to a queue no worker serves waits for ever. The console's overview warned of it
// ("no workers serve queue …"); `chronos stats` did not: its queue table showed the queue as
// `running` with its pending tasks, nothing more (a new user's email sent to `queue: 'reports'` while
// the sample served `default`; trial3). It now says so under the table, by the console's rule.
import { cliRunner } from '../helpers/cli.js';
import { QueueRig } from '../helpers/queue.js';

let rig: QueueRig;
const { chronos } = cliRunner(() => rig.namespace);
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

test('chronos stats names a queue that no live worker serves, and stops once one does', async () => {
  await rig.client.enqueue('email.send', { to: 'ada@example.com' }, { queue: 'reports' });
  const server = rig.server({ queues: { default: 1 } });
  server.handle('email.send', async () => {});
  await server.start();
  const before = await chronos('stats');
  expect([before.code, before.err]).toEqual([0, '']);
  expect(before.out).toContain('NOT SERVED: queue reports: no live worker serves it (1 task(s) wait for one)');
  expect(before.out).not.toMatch(/NOT SERVED: queue default/);

  const reports = rig.server({ queues: { reports: 1 } });
  let ran!: () => void;
  const done = new Promise<void>((r) => (ran = r));
  reports.handle('email.send', async () => ran());
  await reports.start();
  await done;
  const after = await chronos('stats');
  expect(after.code).toBe(0);
  expect(after.out).not.toContain('NOT SERVED');
});
