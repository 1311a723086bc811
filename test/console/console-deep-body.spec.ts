// An act's body nested deep (within the 64 KB limit: `[[[…]]]` 30,000 levels) is a 400 naming the
// depth, never a 500 "Maximum call stack size exceeded" (trial 45: JSON.parse takes any depth, then
// JSON.stringify of the limits for their audit entry, or of a bad id for its message, threw a RangeError).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsoleHandler } from '../../lib/console/handler.js';
import { InvalidOptionsError } from '../../lib/core/runtime/errors.js';
import { QueueRig } from '../helpers/queue.js';

let rig: QueueRig;
let server: Server;
let base: string;

beforeEach(async () => {
  rig = new QueueRig();
  server = createServer(createConsoleHandler({ inspector: rig.inspector }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
  await rig.client.enqueue('mail.send', {}, { queue: 'mail', delay: 3_600_000 });
});
afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rig.close();
});

/** `[[[…]]]`, `depth` levels, as JSON text (60 KB at 30,000: under the console's 64 KB). */
const deepArray = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

async function post(path: string, text: string): Promise<{ status: number; body: { error?: string; code?: string } }> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
  return { status: res.status, body: (await res.json()) as { error?: string; code?: string } };
}

test.each([
  ['queues/mail/limits', `{"concurrency":${deepArray(30_000)}}`],
  ['queues/mail/limits', `{"rate":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`],
  ['queues/mail/tasks/act', `{"action":"delete","state":"scheduled","ids":${deepArray(30_000)}}`],
  ['schedules/nosuch/pause', `{"note":${deepArray(30_000)}}`],
])('POST %s with a body nested 10,000+ levels deep: a 400 naming the depth; nothing done', async (path, text) => {
  const r = await post(path, text);
  expect(r).toEqual({ status: 400, body: { error: 'body: nested more than 32 levels deep', code: 'BAD_REQUEST' } });
  expect(await rig.inspector.queueLimits('mail')).toEqual({});
  expect((await rig.inspector.queue('mail')).scheduled).toBe(1);
});

test('a body as deep as a limits update goes (groups, a group, its rate)', async () => {
  const r = await post('queues/mail/limits', JSON.stringify({ groups: { acme: { rate: { max: 2, duration: 1000 } } } }));
  expect(r.status).toBe(200);
});

test('Inspector.setQueueLimits with a value nested 30,000 deep: an InvalidOptionsError, recorded failed', async () => {
  let deep: unknown = [];
  for (let i = 0; i < 30_000; i++) deep = [deep];
  const err = await rig.inspector.setQueueLimits('mail', { concurrency: deep as number }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidOptionsError);
  expect((err as Error).message).toContain('concurrency: expected an integer');
  const [entry] = (await rig.inspector.audit()).entries;
  expect(entry).toMatchObject({ action: 'queue.limits', result: 'failed', queue: 'mail' });
});
