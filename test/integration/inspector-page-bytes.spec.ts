// An unfiltered listing of scheduled, retry or dead tasks reads their payloads (page-tasks.lua with
// payloads): one call copied `limit` (up to 1000) stored tasks of up to 1 MB out of the hash, and every
// other client of that Redis waited meanwhile. review48: 200 dead tasks of 1 MB, one GET of the
// console's listing with limit=200 held Redis 1.4 s to 3.1 s (a PING on another connection waited that
// long) and took +626 MB of the app's memory. Such a call now stops after PAGE_SCAN_BYTES of stored tasks
// too (at least one task): the page is short, with a cursor, and the cursor pages see every task once;
// so does a filtered page, which reads the tasks it lists again, whole, in HMGETs of 8.
import { QueueRig } from '../helpers/queue.js';

const N = 12;
const PAYLOAD = 900_000; // 12 × 900 KB: past the 8 MB bound of one call

let rig: QueueRig;
beforeEach(async () => {
  rig = new QueueRig();
  const blob = 'x'.repeat(PAYLOAD);
  for (let i = 0; i < N; i++) await rig.client.enqueue('report', { i, blob }, { queue: 'big', delay: 3_600_000 + i * 1000 });
});
afterEach(async () => {
  await rig.close();
});

test('a page of big stored tasks stops at the byte bound with a cursor; the cursor pages list every task once, in order, whole', async () => {
  const first = await rig.inspector.taskPage('big', 'scheduled', { limit: 1000 });
  expect(first.tasks.length).toBeLessThan(N); // before: all 12 (10.8 MB) in one call
  expect(first.tasks.length).toBeGreaterThan(0);
  expect(first.cursor).toBeDefined();
  const all = [...first.tasks];
  let cursor = first.cursor;
  while (cursor) {
    const page = await rig.inspector.taskPage('big', 'scheduled', { limit: 1000, cursor });
    all.push(...page.tasks);
    cursor = page.cursor;
  }
  expect(all.map((t) => (t.payload as { i: number }).i)).toEqual([...Array(N).keys()]);
  expect(all.every((t) => (t.payload as { blob: string }).blob.length === PAYLOAD)).toBe(true);
});

test('a filtered page reads its tasks whole up to the byte bound too: short with a cursor, the pages see every match once', async () => {
  // before: the matches were read again whole in one HMGET (200 dead tasks of 1 MB: Redis held 0.6 to 2.3 s, +470 MB)
  await rig.client.enqueue('other', { small: true }, { queue: 'big', delay: 3_600_000 + 500 });
  const all: number[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await rig.inspector.taskPage('big', 'scheduled', { limit: 1000, type: 'report', cursor });
    expect(page.tasks.every((t) => t.type === 'report' && (t.payload as { blob: string }).blob.length === PAYLOAD)).toBe(true);
    all.push(...page.tasks.map((t) => (t.payload as { i: number }).i));
    cursor = page.cursor;
    pages++;
  } while (cursor);
  expect(all).toEqual([...Array(N).keys()]);
  expect(pages).toBeGreaterThan(1);
});

test('the deprecated tasks(offset, limit) still returns its whole slice across short pages', async () => {
  const got = await rig.inspector.tasks('big', 'scheduled', { offset: 5, limit: 6 });
  expect(got.map((t) => (t.payload as { i: number }).i)).toEqual([5, 6, 7, 8, 9, 10]);
  const rest = await rig.inspector.tasks('big', 'scheduled', { offset: 10, limit: 50 });
  expect(rest.map((t) => (t.payload as { i: number }).i)).toEqual([10, 11]);
});
