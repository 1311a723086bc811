// The fetch's reads on a real connection (fetch/reply-tap.ts): the tap reads the entries of
// XREADGROUP replies itself and gives what ioredis gives — Chronos's entries, a foreign one, a payload
// of several MB (a reply over many socket reads), non-ASCII text; a read's timeout is no entries and
// its error (NOGROUP) is ioredis's error; the other commands on the connection (ack scripts written in
// the same socket write) get their own replies.
import type { Redis } from 'ioredis';
import { CONSUMER_GROUP, QueueKeys } from '../../lib/core/redis/keys.js';
import { Consumer, type ConsumedQueue } from '../../lib/core/fetch/consumer.js';
import { ReadCommand } from '../../lib/core/fetch/reply-tap.js';
import { entryFields } from '../../lib/core/redis/protocol.js';
import { connect, deleteNamespace, newNamespace } from '../helpers/redis.js';

const ns = newNamespace('tap');
let redis: Redis;
let reader: Redis;
const queue: ConsumedQueue = { name: 'q', weight: 1, keys: new QueueKeys(ns, 'q') };
const other: ConsumedQueue = { name: 'r', weight: 1, keys: new QueueKeys(ns, 'r') };

/** Reads sent by the consumer. */
const reads: ReadCommand[] = [];
/** Whether the tap read each one's reply (what the consumer took off the command). */
const byTap = new Map<ReadCommand, boolean>();

beforeAll(async () => {
  redis = connect();
  reader = connect();
  await reader.ping();
  const send = reader.sendCommand.bind(reader);
  reader.sendCommand = ((cmd: Parameters<Redis['sendCommand']>[0], ...rest: []) => {
    if (cmd instanceof ReadCommand) {
      reads.push(cmd);
      const take = cmd.take.bind(cmd);
      cmd.take = () => {
        const parsed = take();
        byTap.set(cmd, parsed !== undefined);
        return parsed;
      };
    }
    return send(cmd, ...rest);
  }) as Redis['sendCommand'];
  for (const q of [queue, other]) await redis.xgroup('CREATE', q.keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM');
});
afterAll(async () => {
  redis.disconnect();
  reader.disconnect();
  await deleteNamespace(ns);
});

test('entries of every kind come out as ioredis reads them, with other replies on the connection between', async () => {
  const big = JSON.stringify({ s: 'x'.repeat(3_000_000) });
  const texts = [
    entryFields('t1', 'email', '{"n":1}', '{"m":2,"e":1}'),
    entryFields('t2', 'email', big, '{"m":2,"e":1}'),
    entryFields('t3', 'sms', '{"name":"Zoë 😀"}', '{"m":2,"e":1}'),
    ['foreign', 'value', 'x', ''],
  ];
  const ids: string[] = [];
  for (const f of texts) ids.push((await redis.xadd(queue.keys.stream, '*', ...f))!);
  const t4 = entryFields('t4', 'email', '{"n":4}', '{"m":2,"e":1}');
  const id4 = (await redis.xadd(other.keys.stream, '*', ...t4))!;
  let written = 0;
  // a write on the reader's connection just before each read, as the ack batcher's
  const acks = { writeOn: (via: Redis) => void via.ping().then(() => written++) };
  const consumer = new Consumer({ client: redis, name: 'c1', acks } as ConstructorParameters<typeof Consumer>[0]);
  const got = await consumer.read(reader, [queue, other], 10, 1000);
  expect(byTap.get(reads.at(-1)!)).toBe(true); // read by the tap
  // and taken off the command: a resolved command outlives young-generation GCs, its reply must not
  expect(reads.at(-1)!.parsed).toBeUndefined();
  expect(got.map((f) => [f.queue.name, f.entryId, f.fields])).toEqual([...texts.map((f, i) => ['q', ids[i], f]), ['r', id4, t4]]);
  expect(written).toBe(1);
  // nothing left: a timeout is no entries
  expect(await consumer.read(reader, [queue], 10, 50)).toEqual([]);
  expect(written).toBe(2);
});

test("a read's error is ioredis's", async () => {
  const consumer = new Consumer({ client: redis, name: 'c1' });
  const missing: ConsumedQueue = { name: 'none', weight: 1, keys: new QueueKeys(ns, 'none') };
  await expect(consumer.read(reader, [missing], 10, 50)).rejects.toThrow(/NOGROUP/);
  await redis.xadd(queue.keys.stream, '*', ...entryFields('t5', 'email', '1', '{}'));
  const got = await consumer.read(reader, [queue], 10, 50);
  expect(got.map((f) => f.fields)).toEqual([entryFields('t5', 'email', '1', '{}')]);
});
