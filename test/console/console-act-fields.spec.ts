// The console's acts refuse a body field their route does not take, with a 400 naming it, and do
// nothing (trial 25: `{ action: 'delete', state, all: true, Type: 'x' }` dropped the misspelt filter
// and deleted every task of the state).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsoleHandler } from '../../lib/console/handler.js';
import { QueueRig } from '../helpers/queue.js';

let rig: QueueRig;
let server: Server;
let base: string;

beforeEach(async () => {
  rig = new QueueRig();
  const handler = createConsoleHandler({
    inspector: rig.inspector,
    authorize: (req, act) => act === 'read' || req.headers['x-role'] === 'operator',
  });
  server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
  for (let i = 0; i < 3; i++) await rig.client.enqueue('mail.send', { i }, { queue: 'mail', delay: 3_600_000 });
  await rig.inspector.addSchedule({ name: 'digest', spec: '0 3 * * *', type: 'mail.send', queue: 'mail' });
});
afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rig.close();
});

async function post(path: string, body: unknown, role = 'operator'): Promise<{ status: number; body: { error?: string; count?: number } }> {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-role': role },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { error?: string; count?: number } };
}

test('a misspelt filter of a bulk act is a 400 naming it, and no task is touched', async () => {
  const r = await post('queues/mail/tasks/act', { action: 'delete', state: 'scheduled', all: true, Type: 'nosuch' });
  expect(r).toEqual({
    status: 400,
    body: { error: 'body: unknown field "Type" (known: action, state, ids, all, type, error, group)', code: 'BAD_REQUEST' },
  });
  expect((await rig.inspector.queue('mail')).scheduled).toBe(3);
  expect((await rig.inspector.audit()).entries).toEqual([]);
});

test('queue and schedule acts refuse a field they do not take; the fields they take still work', async () => {
  expect((await post('queues/mail/pause', { force: true })).body.error).toBe('body: unknown field "force" (this act takes none: send {})');
  expect((await rig.inspector.queue('mail')).paused).toBe(false);
  expect((await post('schedules/digest/pause', { notes: 'deploy' })).body.error).toBe('body: unknown field "notes" (known: note)');
  expect((await post('schedules/digest/remove', { forced: true })).body.error).toBe('body: unknown field "forced" (known: force)');
  expect((await rig.inspector.schedule('digest')).paused).toBe(false);
  expect((await post('schedules/digest/pause', { note: 'deploy' })).status).toBe(200);
  expect((await rig.inspector.schedule('digest')).pause?.note).toBe('deploy');
  const r = await post('queues/mail/tasks/act', { action: 'run', state: 'scheduled', all: true, type: 'mail.send', error: undefined });
  expect(r).toEqual({ status: 200, body: expect.objectContaining({ count: 3 }) });
});

test('a viewer is refused (403) before the fields are looked at', async () => {
  expect((await post('queues/mail/tasks/act', { action: 'delete', state: 'scheduled', all: true, Type: 'x' }, 'viewer')).status).toBe(403);
});

test('a text field of the wrong type or length is a 400 naming what came (trial: "note: expected a string (≤ 1000 chars)" named neither the value nor its length)', async () => {
  expect((await post('schedules/digest/pause', { note: 5 })).body.error).toBe('note: expected a string of at most 1000 characters, got 5');
  expect((await post('schedules/digest/pause', { note: 'x'.repeat(1001) })).body.error).toBe(
    'note: expected a string of at most 1000 characters, got 1001 characters',
  );
  const r = await post('queues/mail/tasks/act', { action: 'delete', state: 'scheduled', all: true, type: ['mail.send'] });
  expect(r.body.error).toBe('type: expected a string of at most 1000 characters, got ["mail.send"]');
  expect((await rig.inspector.schedule('digest')).paused).toBe(false);
  expect((await rig.inspector.queue('mail')).scheduled).toBe(3);
});
