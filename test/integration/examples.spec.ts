// The examples (examples/, README "Examples") start and process tasks: each runs as a real child
// process from dist/ against the test Redis, in its own namespace, and reports over IPC what it ran.
import { killAllChildren, startChild, stopChild } from '../helpers/children.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

const namespaces: string[] = [];
afterEach(async () => {
  await killAllChildren();
  for (const ns of namespaces.splice(0)) await deleteNamespace(ns);
});

function env(tag: string) {
  const ns = newNamespace(tag);
  namespaces.push(ns);
  return { REDIS_URL: redisUrl(), CHRONOS_NAMESPACE: ns };
}

test('the plain Node worker (no NestJS) runs its enqueued task and its schedule, and stops on SIGTERM', async () => {
  const child = await startChild('../../examples/plain-worker/main', 'plain', env('ex-plain'));

  await child.message((m) => m.event === 'processed' && m.type === 'image.resize');
  await child.message((m) => m.event === 'processed' && m.type === 'cleanup.run'); // a trigger of its @every 5s schedule
  expect(await stopChild(child)).toEqual({ code: 0, signal: null });
});

test('the split NestJS app: the API process enqueues an order receipt, the worker process runs it', async () => {
  const child = await startChild('../../examples/nest-split/run', 'split', { ...env('ex-split'), PORT: 0 });
  const { task } = child.messages.find((m) => m.event === 'ready')!;

  expect(typeof task).toBe('string');
  const done = await child.message((m) => m.event === 'processed' && m.id === task);
  expect(done.type).toBe('order.receipt');
  expect(await stopChild(child)).toEqual({ code: 0, signal: null });
  expect(child.output).toContain('Worker role disabled on this instance'); // the API process runs no handler
});
