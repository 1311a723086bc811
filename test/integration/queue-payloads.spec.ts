// The queue-integrity issue, fault 5: payloads JSON would silently change are refused with the path;
// a Date becomes its ISO string (documented); `maxPayloadBytes` (default 1 MiB, 0 = none) bounds the
// encoded payload and its error names the size and the limit.
import { InvalidPayloadError } from '../../lib/core/runtime/errors.js';
import { QueueClient, type ClientOptions } from '../../lib/core/queue/client.js';
import { encodePayload } from '../../lib/core/queue/payload-codec.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

const ns = newNamespace('payload');
const clients: QueueClient[] = [];
const client = (options: Record<string, unknown> = {}) => {
  const c = new QueueClient({ connection: redisUrl(), namespace: ns, ...options } as ClientOptions);
  clients.push(c);
  return c;
};
afterAll(async () => {
  for (const c of clients) await c.close();
  await deleteNamespace(ns);
});

class Money {
  constructor(readonly cents: number) {}
}

function deep(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { v };
  return v;
}

test.each([
  ['a Map', { order: { items: new Map([['a', 1]]) } }, /a Map at order\.items/],
  ['a Set', { tags: new Set(['x']) }, /a Set at tags/],
  ['a typed array', { blob: { bytes: new Uint8Array([1, 2]) } }, /a Uint8Array at blob\.bytes/],
  ['an ArrayBuffer', { raw: new ArrayBuffer(4) }, /an ArrayBuffer at raw/],
  ['a class instance without toJSON', { total: new Money(1299) }, /an instance of class Money at total/],
  ['a class instance in an array', { lines: [{ price: new Money(1) }] }, /class Money at lines\[0\]\.price/],
  // trial 8: these became null silently
  ['undefined in an array', { ids: [1, undefined] }, /undefined at ids\[1\] would become null/],
  // eslint-disable-next-line no-sparse-arrays
  ['a hole in an array', { ids: [1, , 3] }, /undefined at ids\[1\] would become null/],
  ['an invalid Date', { at: { d: new Date('x') } }, /an invalid Date at at\.d would become null/],
  ['nesting thousands of levels deep', deep(20_000), /nested too deeply/],
])('%s is refused with InvalidPayloadError naming the path', async (_what, payload, message) => {
  expect(() => encodePayload('t', payload)).toThrow(InvalidPayloadError);
  expect(() => encodePayload('t', payload)).toThrow(message);
  await expect(client().enqueue('t', payload)).rejects.toThrow(message);
});

test('what JSON keeps is accepted: plain and null-prototype objects, a class with toJSON; a Date becomes its ISO string', () => {
  class Cents {
    constructor(readonly n: number) {}
    toJSON() {
      return { cents: this.n };
    }
  }
  const bare = Object.assign(Object.create(null) as object, { a: 1 });
  expect(JSON.parse(encodePayload('t', { bare, c: new Cents(5), at: new Date(0), gone: undefined }))).toEqual({
    bare: { a: 1 },
    c: { cents: 5 },
    at: '1970-01-01T00:00:00.000Z',
  }); // an undefined property is left out, as JSON.stringify does (documented)
  expect(encodePayload('t', [null, [1]])).toBe('[null,[1]]');
});

test('maxPayloadBytes: 1 MiB by default; the error names the size and the limit; 0 = no limit', async () => {
  const big = { text: 'x'.repeat(2 * 1024 * 1024) };
  const err = await client()
    .enqueue('big', big)
    .catch((e: unknown) => e as Error);
  expect(err).toBeInstanceOf(InvalidPayloadError);
  expect((err as Error).message).toMatch(/2097163 bytes/);
  expect((err as Error).message).toMatch(/1048576 bytes \(maxPayloadBytes\)/);
  // multi-byte characters count as UTF-8 bytes: 400 000 × 'é' is 800 000 bytes of JSON text
  await expect(client({ maxPayloadBytes: 700_000 }).enqueue('big', 'é'.repeat(400_000))).rejects.toThrow(/800002 bytes/);
  expect((await client({ maxPayloadBytes: 900_000 }).enqueue('big', 'é'.repeat(400_000))).deduplicated).toBe(false);
  expect((await client({ maxPayloadBytes: 0 }).enqueue('big', big)).deduplicated).toBe(false);
});
