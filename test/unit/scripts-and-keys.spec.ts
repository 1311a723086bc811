import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GlobalKeys, QueueKeys, SchedulerKeys } from '../../lib/core/redis/keys.js';
import { SCRIPT_NAMES, scriptSource } from '../../lib/core/redis/scripts.js';
import { decodeEntry, encodePayload, encodeStored, decodeStored } from '../../lib/core/queue/codec.js';
import { taskWith } from '../../lib/core/queue/task.js';

const dir = fileURLToPath(new URL('../../lib/core/redis/scripts/', import.meta.url));

test('every .lua file is in the manifest and every manifest entry has a file', () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.lua')).map((f) => f.slice(0, -4)).sort();
  expect(files).toEqual([...SCRIPT_NAMES].sort());
});

test.each([...SCRIPT_NAMES])('%s.lua opens with a header naming itself, its KEYS, ARGV and Returns, and uses only declared KEYS', (name) => {
  const src = scriptSource(name);
  const header = /^--\[\[ ([a-z-]+)\n([\s\S]*?)\]\]/.exec(src);
  expect(header?.[1]).toBe(name);
  const body = header![2];
  expect(body).toMatch(/KEYS\[1\]/);
  expect(body).toMatch(/Returns/);
  const code = src.slice(header![0].length);
  if (/ARGV\[/.test(code)) expect(body).toMatch(/ARGV\[1\]/);
  // keys are never taken from ARGV inside a script (a PUBLISH channel is not a key)
  expect(code).not.toMatch(/redis\.call\('(?!PUBLISH)[A-Z]+', *ARGV/);
});

test('every key of a queue starts with the namespace and carries the queue hash tag', () => {
  const k = new QueueKeys('app', 'mail');
  const all = [k.stream, k.scheduled, k.retry, k.tasks, k.dead, k.deadTasks, k.lastFired, k.dedup('x:1'), k.uniqueId('id'), k.overlap('s'), k.processed('2026-01-01'), k.failed('2026-01-01')];
  for (const key of all) {
    expect(key.startsWith('app:')).toBe(true);
    expect(key.indexOf('{')).toBe(key.indexOf('{app:mail}'));
  }
  expect(new Set(all).size).toBe(all.length);
  const s = new SchedulerKeys('app');
  for (const key of [s.lease, s.term, s.leader, s.schedules, s.version, s.instances, s.declared('i')]) {
    expect(key.startsWith('app:{app:sched}:')).toBe(true);
  }
  const g = new GlobalKeys('app');
  for (const key of [g.queues, g.paused, g.servers, g.server('x')]) expect(key.startsWith('app:')).toBe(true);
});

test('codec: a stored task round-trips; a stream entry decodes; garbage is reported, never thrown', () => {
  const msg = { id: 'a', type: 't', payload: encodePayload('t', { x: [1, 'two'] }), meta: { r: 1, m: 3, t: 0, e: 5 } };
  expect(decodeStored(encodeStored(msg), 'a')).toEqual(msg);
  const ok = decodeEntry('1-0', ['id', 'a', 'type', 't', 'payload', '{"x":1}', 'meta', '{"r":0,"m":2,"t":0,"e":1}']);
  expect(ok.ok && ok.payload).toEqual({ x: 1 });
  const bad = decodeEntry('1-1', ['type', 't', 'payload', '{x']);
  expect(bad.ok).toBe(false);
  expect(!bad.ok && bad.error.message).toMatch(/invalid JSON payload for task type "t".*stream entry 1-1/);
  expect(decodeEntry('1-2', null).ok).toBe(false);
  const dates = encodePayload('t', { at: new Date(0) });
  expect(JSON.parse(dates)).toEqual({ at: '1970-01-01T00:00:00.000Z' });
});

test('taskWith replaces fields and keeps the original signal (a spread would lose the getter)', () => {
  const ctrl = new AbortController();
  const task = { id: 'a', type: 't', payload: 1, queue: 'q', retried: 0, maxRetry: 1, timeoutMs: 0, enqueuedAt: 0, get signal() { return ctrl.signal; } };
  const view = taskWith(task, { payload: 'x', type: 'u' });
  expect(view).toMatchObject({ id: 'a', type: 'u', payload: 'x', queue: 'q' });
  expect(view.signal).toBe(ctrl.signal);
  expect({ ...view }.signal).toBe(ctrl.signal); // taskWith's own getter is enumerable: spreading its result keeps it
});

test('the keys the Inspector adds: lost counter and fire history under the queue tag, pause notes under the scheduler tag', () => {
  const k = new QueueKeys('app', 'mail');
  expect(k.lost('2026-01-01')).toBe('app:{app:mail}:lost:2026-01-01');
  expect(k.history('nightly')).toBe('app:{app:mail}:history:nightly');
  expect(new SchedulerKeys('app').pauseNotes).toBe('app:{app:sched}:pause-notes');
  expect(new GlobalKeys('app').cancelChannel).toBe('app:cancel');
});
