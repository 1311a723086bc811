// `chronos task ls --cursor` of another listing's shape: a usage error naming the cursor and the
// listing, in English ("an active listing"; it said "a active listing") (trial 37).
import { QueueClient } from '../../lib/core/queue/client.js';
import { cliRunner } from '../helpers/cli.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

let ns: string;
const { chronos } = cliRunner(() => ns);

beforeAll(async () => {
  ns = newNamespace('cli-cursor');
  const client = new QueueClient({ connection: redisUrl(), namespace: ns });
  await client.enqueue('t', {}, { queue: 'q' });
  await client.close();
});
afterAll(async () => {
  await deleteNamespace(ns);
});

test('a cursor no listing gave is exit 2 naming it and the listing', async () => {
  for (const [state, article] of [
    ['active', 'an'],
    ['pending', 'a'],
    ['dead', 'a'],
  ]) {
    const r = await chronos('task', 'ls', '--queue', 'q', '--state', state, '--cursor', 'garbage');
    expect([r.code, r.out, r.err]).toEqual([
      2,
      '',
      `error: Invalid task listing (1 problem): cursor: "garbage" is not a cursor of ${article} ${state} listing\n`,
    ]);
  }
}, 60_000);
