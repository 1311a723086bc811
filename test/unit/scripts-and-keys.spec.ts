import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import calculateSlot from 'cluster-key-slot';
import { GlobalKeys, QueueKeys, SchedulerKeys, shardKeysFor, shardKeysOf, shardOf, shardTag } from '../../lib/core/redis/keys.js';
import { ENTRY_FIELDS, META, SHARD_COUNT, entryFields, isEntryLayout } from '../../lib/core/redis/protocol.js';
import { SCRIPT_NAMES, expandIncludes, expandedSource, includeSource, scriptCommand, scriptSource } from '../../lib/core/redis/scripts.js';
import { decodeEntry, encodeMeta, encodeStored, decodeStored } from '../../lib/core/queue/codec.js';
import { encodePayload } from '../../lib/core/queue/payload-codec.js';
import { taskWith } from '../../lib/core/queue/task.js';
import { lintConstantTables, lintScript, lintSnippet } from '../helpers/script-lint.js';

const dir = fileURLToPath(new URL('../../lib/core/redis/scripts/', import.meta.url));
const snippets = readdirSync(join(dir, 'includes'))
  .filter((f) => f.endsWith('.lua'))
  .map((f) => f.slice(0, -4));

test('every .lua file is in the manifest and every manifest entry has a file', () => {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.lua'))
    .map((f) => f.slice(0, -4))
    .sort();
  expect(files).toEqual([...SCRIPT_NAMES].sort());
});

test.each([...SCRIPT_NAMES])('%s.lua: its header names it, numbers its KEYS and ARGV 1..n, declares what the body reads', (name) => {
  expect(lintScript(name, scriptSource(name))).toEqual([]);
  expect(lintConstantTables(scriptSource(name))).toEqual([]);
});

test.each(snippets)('includes/%s.lua takes everything as parameters', (name) => {
  const src = includeSource(name)!;
  expect(lintSnippet(name, src)).toEqual([]);
  expect(lintConstantTables(src)).toEqual([]);
});

test('the header lint rejects bad numbering, undeclared and unread slots, and wrong codes', () => {
  const bad = `--[[ bad
  Does something.
  KEYS[1]   a                 STRING
  ARGV[1]   id                string
  ARGV[3]   processAtMs       integer
  ARGV[2]   dedupTtlMs        integer
  ARGV[4]   unused            string
  Returns   {code} (codes: protocol.ts ENQUEUE_RESULT): 1 enqueued | 2 deduplicated
]]
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('DEL', KEYS[2])
return redis.call('GET', ARGV[3])
`;
  expect(lintScript('bad', bad)).toEqual([
    'body reads KEYS[2], which the header does not declare',
    'header: ARGV[3] is out of order: expected ARGV[2] next',
    'header: ARGV[2] is out of order: expected ARGV[4] next',
    'header declares ARGV[4], which the body never reads',
    'header: "2 deduplicated" but protocol.ts ENQUEUE_RESULT.deduplicated is 0',
    'header: ENQUEUE_RESULT.scheduled (2) is not listed',
    'header: ENQUEUE_RESULT.replaced (3) is not listed',
    'a key is taken from ARGV',
  ]);
  // a gap, a slot after the tail, a computed index without a variadic slot, a header naming another script
  const gaps = `--[[ other
  KEYS[1]  a  STRING
  KEYS[3]  b  STRING
  ARGV[1..] ids
  ARGV[2]  late
  Returns  nothing
]]
for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end
return ARGV[1] .. ARGV[2] .. KEYS[3]
`;
  expect(lintScript('gaps', gaps)).toEqual([
    'header names "other", expected "gaps"',
    'header: KEYS[3] is out of order: expected KEYS[2] next',
    'body reads KEYS[i]: a computed index needs an optional or variadic KEYS slot',
    'body reads #KEYS: that needs an optional or variadic KEYS slot',
    'header declares KEYS[1], which the body never reads',
    'header: ARGV[2] comes after the variadic ARGV[1..]',
  ]);
  expect(lintConstantTables("local FIRE_MODE = { skipOverlap = 'o' } -- protocol.ts FIRE_MODE\nlocal CODES = { a = 1 }\n")).toEqual([
    'local FIRE_MODE: skipOverlap = \'o\' but protocol.ts FIRE_MODE.skipOverlap is "s"',
    'local CODES: expected the comment "-- protocol.ts CODES" after the table',
  ]);
  expect(lintSnippet('x', '-- @snippet x: a\nlocal function f() return KEYS[1] end\n')).toEqual([
    'snippet x: reads KEYS or ARGV (pass them as parameters)',
  ]);
});

test('includes: expanded once each, recursively; a missing or circular include is a clear error', () => {
  const files: Record<string, string> = {
    a: '-- a\n-- @include b\nlocal A = 1',
    b: '-- b\nlocal B = 2',
    loop1: '-- @include loop2',
    loop2: '-- @include loop1',
  };
  const read = (s: string) => files[s];
  expect(expandIncludes('-- @include a\n-- @include b\nreturn A + B', 's', read)).toBe(
    '-- a\n-- b\nlocal B = 2\nlocal A = 1\n-- (b: included above)\nreturn A + B',
  );
  expect(() => expandIncludes('-- @include nope', 's', read)).toThrow(
    'Script s includes "nope" (s -> nope), but there is no scripts/includes/nope.lua',
  );
  expect(() => expandIncludes('x\n-- @include loop1', 's', read)).toThrow('Circular include in script s: s -> loop1 -> loop2 -> loop1');
  for (const name of SCRIPT_NAMES) {
    const lua = expandedSource(name);
    expect(lua).not.toMatch(/@include/);
    // the command name versions the expanded source: a change to an include renames every script using it
    expect(scriptCommand(name)).toBe(`chronos_${name.replace(/-/g, '_')}_${createHash('sha1').update(lua).digest('hex').slice(0, 8)}`);
  }
  expect(expandedSource('kill')).toMatch(/local function deadLetter/);
  // Redis time in ms is computed in one place only
  for (const name of SCRIPT_NAMES) expect(scriptSource(name)).not.toMatch(/redis\.call\('TIME'\)/);
});

test('entry fields: one order for XADD, the fast path of the decoder and task-entry.lua', () => {
  const flat = entryFields('a', 't', '{"x":1}', '{"r":0,"m":2,"t":0,"e":1}');
  expect(flat).toEqual(['id', 'a', 'type', 't', 'payload', '{"x":1}', 'meta', '{"r":0,"m":2,"t":0,"e":1}']);
  expect(isEntryLayout(flat)).toBe(true);
  const xadd = /'XADD', stream, '\*', (.*)\)/.exec(includeSource('task-entry')!)![1];
  expect([...xadd.matchAll(/'([a-z]+)'/g)].map((m) => m[1])).toEqual([...ENTRY_FIELDS]);
  // wire letters are stored in Redis: they never change
  expect(Object.values(META)).toEqual([
    'r',
    'm',
    't',
    'e',
    's',
    'tr',
    'u',
    'o',
    'c',
    'le',
    'fa',
    'rs',
    'tp',
    'raw',
    'cw',
    'nx',
    'om',
    'g',
    'dk',
  ]);
});

test('every key of a queue starts with the namespace and carries the queue hash tag', () => {
  const k = new QueueKeys('app', 'mail');
  const all = [
    k.stream,
    k.scheduled,
    k.retry,
    k.tasks,
    k.dead,
    k.deadTasks,
    k.lastFired,
    k.dedup('x:1'),
    k.uniqueId('id'),
    k.overlap('s'),
    k.buffered('s'),
    k.processed('2026-01-01'),
    k.failed('2026-01-01'),
  ];
  all.push(k.lost('2026-01-01'), k.reclaimed, k.counts);
  all.push(k.groups, k.groupsIdle, k.groupsWaiting, k.groupsParked, k.groupLimits, k.groupSignal);
  all.push(k.group('tenant:1'), k.groupRunning('tenant:1'), k.groupRate('tenant:1'));
  for (const key of all) {
    expect(key.startsWith('app:')).toBe(true);
    expect(key.indexOf('{')).toBe(key.indexOf('{app:mail}'));
  }
  expect(new Set(all).size).toBe(all.length);
  expect(k.lost('2026-01-01')).toBe('app:{app:mail}:lost:2026-01-01'); // the Inspector reads exactly this name
  const s = new SchedulerKeys('app');
  for (const key of [
    s.term,
    s.legacySchedules,
    s.shards,
    s.members,
    s.version,
    s.instances,
    s.declaration('i'),
    s.names('1.d'),
    s.namesBuilding('1.d', 'i'),
  ]) {
    expect(key.startsWith('app:{app:sched}:')).toBe(true);
  }
  // a shard's keys share its tag; the tags of the 16 shards lie each in its 1/16 of the cluster's slots
  const shards = shardKeysOf('app');
  expect(shards).toHaveLength(SHARD_COUNT);
  shards.forEach((sh, k) => {
    const tag = shardTag('app', k);
    expect(sh.prefix).toBe(`app:{${tag}}:`);
    const slot = calculateSlot(sh.due);
    expect(Math.floor(slot / (16384 / SHARD_COUNT))).toBe(k);
    for (const key of [sh.schedules, sh.due, sh.version, sh.nameIndex, sh.indexState, sh.label('tenant', 'acme')]) {
      expect(calculateSlot(key)).toBe(slot);
    }
  });
  expect(shards[0].label('tenant', 'acme')).toBe(shards[0].prefix + 'label:tenant=acme'); // the schedule-index snippet builds exactly this name
  expect(shards[0].nameIndex).toBe(shards[0].prefix + 'index:names');
  // a schedule's shard is a pure function of its name, and spreads names about evenly
  const counts = new Array<number>(SHARD_COUNT).fill(0);
  for (let i = 0; i < 16_000; i++) counts[shardOf(`tenant-${i}:digest`)]++;
  expect(Math.min(...counts)).toBeGreaterThan(800);
  expect(Math.max(...counts)).toBeLessThan(1200);
  expect(shardKeysFor('app', 'x').shard).toBe(shardOf('x'));
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

test('codec: meta leaves out retried and timeoutMs at 0; every reader fills them in; a scheduled task may be stored as meta, payload and type on three lines', () => {
  const meta = { r: 0, m: 25, t: 0, e: 5 };
  expect(encodeMeta(meta)).toBe('{"m":25,"e":5}');
  expect(meta).toEqual({ r: 0, m: 25, t: 0, e: 5 }); // left as it was
  expect(encodeMeta({ r: 0, m: 25, t: 100, e: 5, s: 'x' })).toBe('{"m":25,"t":100,"e":5,"s":"x"}');
  expect(encodeMeta({ r: 2, m: 25, t: 100, e: 5 })).toBe('{"r":2,"m":25,"t":100,"e":5}');
  const fast = decodeEntry('1-0', ['id', 'a', 'type', 't', 'payload', '1', 'meta', '{"m":2,"e":1}']);
  expect(fast.ok && fast.task.meta).toEqual({ r: 0, m: 2, t: 0, e: 1 });
  expect(decodeStored('{"m":2,"e":1}\n1\nt\nwith\nnewlines', 'where', 'a')).toEqual({
    id: 'a',
    type: 't\nwith\nnewlines',
    payload: '1',
    meta: { r: 0, m: 2, t: 0, e: 1 },
  });
  expect(() => decodeStored('{"m":2}', 'where')).toThrow(/invalid stored task/);
  expect(decodeStored(JSON.stringify(['a', 't', '1', '{"r":1,"m":2,"t":0,"e":1}']), 'a').meta).toEqual({ r: 1, m: 2, t: 0, e: 1 });
});

test('taskWith replaces fields and keeps the original signal (a spread would lose the getter)', () => {
  const ctrl = new AbortController();
  const task = {
    id: 'a',
    type: 't',
    payload: 1,
    queue: 'q',
    retried: 0,
    maxRetry: 1,
    timeoutMs: 0,
    enqueuedAt: 0,
    get signal() {
      return ctrl.signal;
    },
  };
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
