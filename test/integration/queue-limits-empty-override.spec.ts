// A group override with no limit in it (`setQueueLimits(q, { groups: { a: {} } })`) neither sets nor
// clears anything: it is refused with an InvalidOptionsError naming the group and saying what to give
// (concurrency and/or rate, or null to drop the override), from the QueueClient, the Inspector, the
// console API and ChronosModule's `queues` option alike; the CLI cannot build one (`--group a` alone is
// a usage error). Before, it was accepted, returned the limits unchanged and wrote nothing, so a
// caller who meant "clear group a" was told it had worked (trial 32).
import { Inspector } from '../../lib/core/admin/inspector.js';
import { startConsoleServer } from '../../lib/console/server.js';
import { InvalidOptionsError } from '../../lib/core/runtime/errors.js';
import { ChronosConfigError } from '../../lib/index.js';
import { resolveOptions } from '../../lib/nest/options/resolve-options.js';
import { cliRunner } from '../helpers/cli.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';

let rig: QueueRig;
let inspector: Inspector;
const { chronos } = cliRunner(() => rig.namespace);
beforeEach(() => {
  rig = new QueueRig();
  inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace, events: rig.events });
});
afterEach(async () => {
  await inspector.close();
  await rig.close();
});

const said = 'groups["a"]: an override with no limit changes nothing (give concurrency and/or rate; null drops the group\'s override)';

test('an empty group override is refused naming the group, by the client, the Inspector, the console API and the module options; nothing is written', async () => {
  await rig.client.enqueue('t', {}, { queue: 'l' });
  await inspector.setQueueLimits('l', { groups: { a: { concurrency: 2 } } });
  for (const empty of [{}, { concurrency: undefined, rate: undefined }]) {
    await expect(rig.client.setQueueLimits('l', { groups: { a: empty } })).rejects.toThrow(InvalidOptionsError);
    await expect(rig.client.setQueueLimits('l', { groups: { a: empty } })).rejects.toThrow(said);
    await expect(inspector.setQueueLimits('l', { concurrency: 5, groups: { a: empty } })).rejects.toThrow(said);
  }
  const srv = await startConsoleServer({ inspector, port: 0, warn: () => {} });
  try {
    const res = await fetch(`${srv.url}api/queues/l/limits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ groups: { a: {} } }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(said.replace(/"/g, '\\"'));
  } finally {
    await srv.close();
  }
  expect(await inspector.queueLimits('l')).toEqual({ groups: { a: { concurrency: 2 } } });
  expect(() => resolveOptions({ connection: redisUrl(), queues: { l: { groups: { a: {} } } } })).toThrow(ChronosConfigError);
  // the CLI cannot build one: --group without a limit is a usage error, naming what to give
  const cli = await chronos('queue', 'limits', 'l', '--group', 'a');
  expect([cli.code, cli.err]).toEqual([2, expect.stringContaining('--group: give --concurrency and/or --rate for the group')]);
  // null still drops the override
  expect(await inspector.setQueueLimits('l', { groups: { a: null } })).toEqual({});
});
