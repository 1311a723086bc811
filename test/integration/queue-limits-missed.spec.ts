// A limit change is a PUBLISH on <ns>:limits: a worker whose limits subscriber is reconnecting at that
// moment never hears it. The subscriber reads the limited set again when it is back, so the limit binds
// from then on (before: only the fallback read, every DEFAULTS.pausedPollMs, took it).
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';
import { deferred, waitFor } from '../helpers/wait.js';

let rig: QueueRig;
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

/** The rig's subscriber connections (named after its namespace) in CLIENT LIST, as `{ id, sub }` (sub: channels). */
async function subscribers(): Promise<{ id: number; sub: number }[]> {
  const list = (await rig.client.redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
  return list
    .split('\n')
    .filter((line) => line.includes(` name=${rig.namespace} `))
    .map((line) => ({ id: Number(/^id=(\d+) /.exec(line)![1]), sub: Number(/ sub=(\d+) /.exec(line)![1]) }));
}

test('a limit set while the limits subscriber reconnects binds once it is back', async () => {
  const { hostname, port } = new URL(redisUrl());
  const s = rig.server({
    queues: ['q'],
    concurrency: 4,
    connection: { host: hostname, port: Number(port || 6379), connectionName: rig.namespace, retryStrategy: () => 500 },
  });
  const release = deferred();
  const started: number[] = [];
  s.handle('hold', (t) => (started.push((t.payload as { i: number }).i), release.promise));
  try {
    await s.start();
    // the server's subscribers in the order it opened them: the limiter's (the fetcher opens first), the
    // liveness channel's, the notices' (cancel, due-time wakes, pauses: 3 channels)
    const subs = (await subscribers()).sort((a, b) => a.id - b.id);
    expect(subs.map((c) => c.sub)).toEqual([1, 1, 3]);
    await rig.client.redis.call('CLIENT', 'KILL', 'ID', String(subs[0].id));
    await rig.client.setQueueLimits('q', { concurrency: 1 }); // its notice finds no limits subscriber here
    await waitFor(async () => (await subscribers()).length === 3, 'the limits subscriber to be back');
    // the worker learned the limit: its idle fetch waits on a non-claiming XREAD (a limited queue's), not its XREADGROUP
    const list = async () => String(await rig.client.redis.call('CLIENT', 'LIST'));
    const waitsLimited = async () =>
      (await list()).split('\n').some((l) => l.includes(` name=${rig.namespace} `) && /flags=\w*b\w* .*cmd=xread\b/.test(l));
    await waitFor(waitsLimited, 'the worker to wait as for a limited queue');
    let held = false;
    void s.signals.next('held', (d) => d.queue === 'q' && d.limit === 'concurrency').then(() => (held = true));
    for (let i = 0; i < 3; i++) await rig.client.enqueue('hold', { i }, { queue: 'q' });
    // with the limit, one starts and the fetch is held back; without it all three start
    await waitFor(() => started.length >= 2 || (started.length === 1 && held), 'the tasks to start or be held back');
    expect(started).toHaveLength(1);
  } finally {
    release.resolve();
  }
});
