// The fast paths of the enqueue and the fetch give what the careful paths give: the meta text of a
// new task, the payload checks (problems named with their path, cycles and deep values included),
// the strings of a stream entry read as bytes, and the quick reading of a task's meta text.
import { InvalidPayloadError } from '../../lib/core/runtime/errors.js';
import { QUICK_META_AFTER, decodeEntry, encodeMeta, encodeNewMeta, entryStrings } from '../../lib/core/queue/codec.js';
import { encodePayload } from '../../lib/core/queue/payload-codec.js';
import { newMeta } from '../../lib/core/redis/protocol.js';
import { quickMeta } from '../../lib/core/queue/quick-meta.js';

test('encodeNewMeta is the text encodeMeta gives for newMeta', () => {
  for (const [m, t, e] of [
    [25, 1_800_000, 1_764_000_000_123],
    [0, 0, 0],
    [3, 500, Date.now()],
  ]) {
    expect(encodeNewMeta(m, t, e)).toBe(encodeMeta(newMeta(m, t, e)));
  }
});

describe('encodePayload', () => {
  const problem = (payload: unknown): string => {
    try {
      encodePayload('t', payload);
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidPayloadError);
      return (err as Error).message;
    }
    throw new Error('no problem found');
  };

  test('faithful payloads are their JSON text', () => {
    const payloads: unknown[] = [null, 1, 'x', true, [], {}, { a: [1, { b: 'c' }], d: null, e: undefined }, { at: new Date(0) }];
    for (const p of payloads) expect(encodePayload('t', p)).toBe(JSON.stringify(p));
    let deep: unknown = { leaf: 1 };
    for (let i = 0; i < 100; i++) deep = { next: deep }; // deeper than the quick walk goes
    expect(encodePayload('t', deep)).toBe(JSON.stringify(deep));
  });

  test('every problem is named with its path, shallow or deep', () => {
    expect(problem({ a: { b: [1, 2, Number.NaN] } })).toMatch(/the number NaN at a\.b\[2\] would become null/);
    expect(problem({ f: () => 1 })).toMatch(/a function \(f\) at f is not JSON-serialisable/);
    expect(problem({ m: new Map() })).toMatch(/a Map at m would become \{\}/);
    expect(problem(undefined)).toMatch(/undefined is not a JSON value/);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(problem(cyclic)).toMatch(/a circular reference at self/);
    let deep: Record<string, unknown> = { bad: 1n };
    for (let i = 0; i < 40; i++) deep = { next: deep };
    expect(problem(deep)).toMatch(/BigInt \(1n\) at (next\.){40}bad/);
  });
});

test('entryStrings gives the strings of a string reply', () => {
  const flat = ['id', 'x-1', 'type', 'email', 'payload', '{"s":"é"}', 'meta', '{"r":0}', 'extra', 'v'];
  expect(entryStrings(flat.map((s) => Buffer.from(s)))).toEqual(flat);
  const odd = ['type', 'id', 'idx', 'é', 'payload'];
  expect(entryStrings(odd.map((s) => Buffer.from(s)))).toEqual(odd);
});

test('decodeEntry decodes the bytes of a buffer reply as it decodes the strings of a string reply', () => {
  const bytes = (flat: string[]) => flat.map((s) => Buffer.from(s));
  const cases = [
    ['id', 'a', 'type', 'email', 'payload', '{"s":"é"}', 'meta', '{"m":2,"e":1}'],
    ['id', 'b', 'type', 'sms', 'payload', '[1]', 'meta', '{"r":1,"m":2,"t":5,"e":1,"s":"x"}'],
    ['id', 'c', 'type', 'email', 'payload', '2', 'meta', '{"m":2, "e":1}'], // not the quick form: JSON.parse
    ['id', 'd', 'type', 'é', 'payload', '{}', 'meta', '{"m":2,"e":1}'],
    ['id', 'e', 'type', 'email', 'payload', '{x', 'meta', '{"m":2,"e":1}'], // garbage payload
    ['id', 'f', 'type', '', 'payload', '1', 'meta', '{"m":2,"e":1}'], // no type
    ['type', 'email', 'id', 'g', 'payload', '1', 'meta', '{"m":2,"e":1}'], // another order
    ['id', 'h', 'type', 'email', 'payload', '1', 'meta', '[1]'], // meta not an object
    ['id', 'i', 'type', 'email', 'payload', '1'], // no meta
    ['id', 'j', 'type', 'email', 'payload', '1', 'meta', '{"m":2,"e":1}', 'extra', 'v'],
  ];
  for (const flat of cases) {
    const fromBytes = decodeEntry('1-0', bytes(flat));
    expect(fromBytes).toEqual(decodeEntry('1-0', flat));
    if (fromBytes.ok) expect(fromBytes.task.type).toBe(flat[flat.indexOf('type') + 1]);
  }
  // the last type's bytes are a copy: a reply's buffer written over later does not change the next decode
  const reused = Buffer.from('fresh');
  expect(decodeEntry('1-0', [...bytes(['id', 'a', 'type']), reused, ...bytes(['payload', '1', 'meta', '{}'])]).ok).toBe(true);
  reused.write('other');
  const next = decodeEntry('1-1', bytes(['id', 'b', 'type', 'other', 'payload', '1', 'meta', '{}']));
  expect(next.ok && next.task.type).toBe('other');
});

describe('quickMeta', () => {
  test('what it reads is what JSON.parse gives', () => {
    const texts = [
      '{}',
      '{"m":25,"t":1800000,"e":1764600000000}',
      '{"r":2,"m":25,"e":0,"s":"nightly-report","tr":1764600000000,"o":1,"u":1,"c":3}',
      '{"tp":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","e":1}',
      '{"a":1,"a":2}',
      '{"2":1,"1":"x","b":""}',
      '{"":0}',
      '{"k":"\u00e9\u4e2d"}',
      '{"n":999999999999999}',
    ];
    for (const t of texts) expect(quickMeta(t)).toStrictEqual(JSON.parse(t));
  });

  test('anything else is left to JSON.parse, valid or not', () => {
    const texts = [
      '{"n":1.5}',
      '{"n":-1}',
      '{"n":1e3}',
      '{"n":01}',
      '{"n":1234567890123456}',
      '{"s":"a\\"b"}',
      '{"s":"a\\nb"}',
      '{"a":true}',
      '{"a":null}',
      '{"a":{"b":1}}',
      '{"a":[1]}',
      '{ "a":1}',
      '{"a" :1}',
      '{"a":1 }',
      '{"__proto__":1}',
      '[1]',
      '{"a":1,}',
      '{"a":1}}',
      '{"a":1,"b"}',
      '{"a":',
      '{"a"1}',
      '{"a":"x}',
      '{',
      '',
      '{"m":25,"t":1800000,"e":1764600000000',
    ];
    for (const t of texts) expect(quickMeta(t)).toBeUndefined();
  });
});

test('decodeEntry reads a meta the same before and after quickMeta takes over from JSON.parse', () => {
  const metas = [
    '{"m":25,"t":1800000,"e":1764600000000}',
    '{"r":2,"m":3,"e":1,"s":"nightly","tr":1764600000000,"o":1}',
    '{"m":1,"e":1,"x":[1]}',
  ];
  const decode = (i: number) =>
    decodeEntry(`1-${i}`, ['id', `t${i}`, 'type', 'email', 'payload', '{"n":1}', 'meta', metas[i % metas.length]]);
  const before = metas.map((_, i) => decode(i));
  for (let i = 0; i < QUICK_META_AFTER; i++) decode(i); // the process's first metas, whatever the other tests read
  const after = metas.map((_, i) => decode(i));
  expect(after).toStrictEqual(before);
  expect(after.map((d) => d.ok && d.task.meta)).toStrictEqual(metas.map((m) => ({ r: 0, t: 0, ...JSON.parse(m) })));
});
