// The task listing's payload previews (trial 31): the page shows 120 characters of each payload, and
// asked for whole payloads at every poll (25 tasks of 1 MB: 25 MB every 3 s per open tab). With
// `preview=<chars>` the server sends that many characters of each redacted payload and its size.
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
    redact: (payload) => (payload && typeof payload === 'object' ? { ...payload, secret: '***' } : payload),
  });
  server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
});
afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rig.close();
});

async function get(path: string): Promise<{ status: number; size: number; body: Record<string, unknown> }> {
  const res = await fetch(base + path);
  const text = await res.text();
  return { status: res.status, size: Buffer.byteLength(text), body: JSON.parse(text) as Record<string, unknown> };
}

test('a listing with preview=120 carries 120 characters of each redacted payload and its size, not the payloads', async () => {
  const big = { secret: 'hunter2', blob: 'é'.repeat(400_000) };
  for (let i = 0; i < 5; i++) await rig.client.enqueue('report.build', big, { queue: 'reports' });
  const whole = await get('queues/reports/tasks?state=pending');
  expect(whole.size).toBeGreaterThan(5 * 400_000); // what the page read at every poll
  const cut = await get('queues/reports/tasks?state=pending&preview=120');
  expect(cut.status).toBe(200);
  expect(cut.size).toBeLessThan(5 * 2_000);
  const redactedJson = JSON.stringify({ ...big, secret: '***' });
  for (const t of cut.body.tasks as Record<string, unknown>[]) {
    expect(t.payload).toBeUndefined();
    expect(t.payloadPreview).toBe(redactedJson.slice(0, 120) + '…');
    expect(t.payloadBytes).toBe(Buffer.byteLength(redactedJson));
    expect(t.type).toBe('report.build');
  }
});

test('the preview is of the redacted payload; a cut never splits a surrogate pair; a short string payload is shown whole', async () => {
  await rig.client.enqueue('a', { n: 1 }, { queue: 'q' }); // redacted: { n: 1, secret: '***' }
  await rig.client.enqueue('b', { s: 'x'.repeat(6) + '😀'.repeat(10) }, { queue: 'q' }); // the first 😀 is characters 13-14
  await rig.client.enqueue('c', 'plain text', { queue: 'q' });
  const { body } = await get('queues/q/tasks?state=pending&preview=13');
  const previews = (body.tasks as { type: string; payloadPreview: string }[]).map((t) => [t.type, t.payloadPreview]);
  expect(previews).toEqual([
    ['a', '{"n":1,"secre…'],
    ['b', '{"s":"xxxxxx…'], // 12 characters, not 13: the 13th is half of 😀
    ['c', 'plain text'],
  ]);
});

test('a preview that is not 1-1000 characters is a 400 naming it', async () => {
  await rig.client.enqueue('a', {}, { queue: 'q' });
  for (const [value, said] of [
    ['0', 'preview: expected 1-1000 characters, got 0'],
    ['1001', 'preview: expected 1-1000 characters, got 1001'],
    ['lots', 'preview: expected an integer, got "lots"'],
  ]) {
    const r = await get(`queues/q/tasks?state=pending&preview=${value}`);
    expect([r.status, r.body.error]).toEqual([400, said]);
  }
});
