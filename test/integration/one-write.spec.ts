// corked (lib/core/redis/cluster.ts) against a real Redis: the commands issued in its callback
// leave a ready standalone client in one socket write (a corked stream: one writev), and each gets its
// own reply; on a client not ready yet they wait in the offline queue as usual. The leader's batch
// reads the lastFired and the orphaned-since instants so (shard-loop.ts): a syscall and a wake of Redis
// less per shard tick.
import type { Redis } from 'ioredis';
import { openConnection } from '../../lib/core/redis/connection.js';
import { corked } from '../../lib/core/redis/cluster.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

let ns: string;
let client: Redis;
beforeEach(() => {
  ns = newNamespace('onewrite');
  client = openConnection(redisUrl()).client as Redis;
});
afterEach(async () => {
  client.disconnect();
  await deleteNamespace(ns);
});

/** Counts the socket's writes to its handle: single writes and writevs (with their chunks). */
function countWrites(r: Redis): { single: number; vectored: number[] } {
  const seen = { single: 0, vectored: [] as number[] };
  const socket = r.stream as unknown as {
    _write: (...a: unknown[]) => void;
    _writev: (chunks: unknown[], cb: unknown) => void;
  };
  const write = socket._write.bind(socket);
  const writev = socket._writev.bind(socket);
  socket._write = (...a) => {
    seen.single++;
    write(...a);
  };
  socket._writev = (chunks, cb) => {
    seen.vectored.push(chunks.length);
    writev(chunks, cb);
  };
  return seen;
}

test('the commands issued in it leave in one write, each with its own reply', async () => {
  await client.ping();
  await client.hset(`${ns}:a`, 'x', '1');
  await client.hset(`${ns}:b`, 'y', '2');
  const seen = countWrites(client);
  const [a, b] = await corked(client, () => Promise.all([client.hmget(`${ns}:a`, 'x'), client.hmget(`${ns}:b`, 'y', 'z')]));
  expect([a, b]).toEqual([['1'], ['2', null]]);
  expect(seen).toEqual({ single: 0, vectored: [2] });
});

test('without it, the same two commands are two writes', async () => {
  await client.ping();
  const seen = countWrites(client);
  await Promise.all([client.hmget(`${ns}:a`, 'x'), client.hmget(`${ns}:b`, 'y')]);
  expect(seen).toEqual({ single: 2, vectored: [] });
});

test('a client not ready yet queues them offline as usual, and they are answered once it connects', async () => {
  const lazy = openConnection(redisUrl()).client as Redis;
  try {
    expect(lazy.status).not.toBe('ready');
    const replies = await corked(lazy, () => Promise.all([lazy.set(`${ns}:c`, 'v'), lazy.get(`${ns}:c`)]));
    expect(replies).toEqual(['OK', 'v']);
  } finally {
    lazy.disconnect();
  }
});

test('a throwing callback leaves the socket uncorked', async () => {
  await client.ping();
  expect(() =>
    corked(client, () => {
      void client.ping();
      throw new Error('boom');
    }),
  ).toThrow('boom');
  expect(client.stream.writableCorked).toBe(0);
  await expect(client.ping()).resolves.toBe('PONG');
});
